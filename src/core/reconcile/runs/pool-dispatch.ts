/**
 * The pool phase: which tasks are ready (dependencies met, labeled by a writer, not live, text enough to act on
 * by the definition of ready, not waiting for a time), their ranking, the tasks people asked for with `/autopilot run #N` (run-command.ts), and, with
 * `mode: auto`, the dispatch of the best into the free slots left. With `mode: semi-auto` nothing else starts:
 * the dashboard names the next task (build-view.ts).
 */
import { hasWriteAccess, sameLogin } from "../../tasks/commands.js";
import type { ReasonLine } from "../../dashboard/index.js";
import type { Effect } from "../../effects.js";
import { buildTaskGraph, type TaskGraph } from "../../tasks/graph.js";
import { readyTasks } from "../../tasks/ready-tasks.js";
import { formatTime, quietLogin } from "../../text/markdown.js";
import { formatScoreParts, rankTasks } from "../../tasks/scoring.js";
import { isDispatching } from "../../session/session.js";
import { modeOf, note, type Reconciling, taskBranch, taskRecord } from "../context.js";
import { sessionEvent } from "../session-events.js";
import { setStatus, statusOf } from "../task-labels.js";
import { agentsLimitedNow, recordApprover } from "../task-alerts.js";
import { withConfigDigest, withJobOverrides } from "./dispatch-config.js";
import { planOfDispatch } from "../commands/plan-approval.js";
import { enterCandidate } from "./best-of.js";
import { splitBeingCreated } from "../commands/split-command.js";
import { freezeText } from "../text-approval.js";
import { awaitsText, epicRefusal } from "../epic-pooling.js";
import { liveIssues } from "./worker-runs.js";
import { react, reply } from "../messages.js";
import { type RunRequest, runVerdict } from "../commands/run-command.js";
import { dispatchId as dispatchIdOf } from "../../contract.js";
import { readinessGaps } from "../../tasks/task-readiness.js";

export interface Pool {
  graph: TaskGraph;
  /** The ready tasks not dispatched now, best first (the dashboard's queue). */
  ranked: ReturnType<typeof rankTasks>;
  waits: ReasonLine[];
  notInPool: ReasonLine[];
  /** The epics, one line each (src/core/reconcile/epic-pooling.ts fills it after the pool). */
  epics?: ReasonLine[];
  /** Work that will need a slot later (ranked but not dispatched, or waiting for a reset/backoff). */
  pending: boolean;
}

export function processPool(ctx: Reconciling, runRequests: readonly RunRequest[] = []): Pool {
  const { snapshot, state, config } = ctx;
  const L = config.labels;
  // The issues as this reconcile leaves them (label changes, settle overlay); pull requests stay for "Depends on #PR".
  // An issue whose labels this reconcile did not change is passed as it is (no copy of every issue).
  const issues = snapshot.issues.map((i) => {
    const issue = ctx.issues.get(i.number) ?? i;
    const labels = ctx.labels.get(i.number) ?? i.labels;
    return sameLabels(labels, issue.labels) ? issue : { ...issue, labels };
  });
  const graph = buildTaskGraph(issues, { owner: snapshot.repo.owner, name: snapshot.repo.name });
  const byLabels = readyTasks(graph, {
    readyLabel: L.ready,
    excludeLabel: L.exclude,
    stateLabels: [L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed],
  });
  // An epic's parent carries the ready label but is not a task (statusOf says so): its sub-issues are.
  const ready = byLabels.ready.filter((t) => statusOf(ctx, t.number) !== null);
  const waiting = byLabels.waiting.filter((w) => statusOf(ctx, w.number) !== null);
  const notInPool: ReasonLine[] = [];
  const waits: ReasonLine[] = waiting.map((w) => ({
    issue: w.number,
    title: ctx.issues.get(w.number)?.title ?? "",
    reason: w.reason,
    code: w.code,
  }));
  const live = liveIssues(ctx);
  let waitingForTime = false;
  const candidates = ready.filter((node) => {
    const n = node.number;
    const by = ctx.readyBy.get(n) ?? null;
    if (!by || !(sameLogin(by, snapshot.botLogin) || hasWriteAccess(snapshot.permissions, by))) {
      notInPool.push({
        issue: n,
        title: node.issue.title,
        reason: by
          ? `the \`${L.ready}\` label was added by ${quietLogin(by)}, who has no write access`
          : `who added the \`${L.ready}\` label is unknown`,
      });
      return false;
    }
    if (live.has(n)) return false;
    // A split's parent whose sub-issues are being created becomes their epic (split-command.ts), never a task.
    if (splitBeingCreated(ctx, n)) return false;
    // A sub-issue an epic just pooled is dispatched once the snapshot has read its text (epic-pooling.ts).
    if (awaitsText(ctx, n)) return false;
    // The definition of ready (task-readiness.ts): a text too thin to act on waits for a writer to add to it.
    const gaps = readinessGaps(node.issue.body, config.definitionOfReady);
    if (gaps.length > 0) {
      notInPool.push({
        issue: n,
        title: node.issue.title,
        reason: `too thin to act on: ${gaps.join("; ")} (\`definitionOfReady\`); a writer's edit that adds it makes the task ready`,
      });
      return false;
    }
    if (state.tasks[n]?.discard) {
      // A worker would resume the branch a rollback threw away (rollback.ts processDiscards).
      waits.push({
        issue: n,
        title: node.issue.title,
        reason: `waiting for \`${taskBranch(ctx, n)}\` to be deleted after the rollback`,
      });
      return false;
    }
    const wait = state.tasks[n]?.waitUntil;
    if (wait && Date.parse(wait) > ctx.nowMs) {
      waitingForTime = true;
      waits.push({
        issue: n,
        title: node.issue.title,
        reason: `waiting until ${formatTime(wait)}: ${state.tasks[n]?.reason ?? "backoff"}`,
        code: "time",
      });
      return false;
    }
    return true;
  });
  const scoring = {
    weights: config.scoring,
    labels: { critical: L.critical, quickWin: L.quickWin },
    retries: Object.fromEntries(Object.entries(state.tasks).map(([k, r]) => [Number(k), r.retries])),
  };
  let ranked = rankTasks(candidates, scoring);

  // A session that never ran starts by itself when ready work appears (the ready label of someone with
  // write access is the go-ahead); a completed one comes back to running. With `session.autoStart: false`
  // both wait for a person's `/autopilot start` (the dashboard says so).
  const s = state.session;
  const held = ctx.input.configHeld === true;
  if (held && ranked.length > 0)
    note(ctx, "no valid configuration: nothing is dispatched until the file is fixed");
  const startable = (s.status === "idle" && s.reason === "initial") || s.status === "completed";
  if (ranked.length > 0 && startable && !held && !config.session.autoStart) {
    note(ctx, "ready work waits for `/autopilot start` (session.autoStart is false)");
  } else if (ranked.length > 0 && s.status === "idle" && s.reason === "initial" && !held) {
    sessionEvent(ctx, { type: "start" }, true);
    state.session.detail = "ready work appeared";
  } else if (ranked.length > 0 && s.status === "completed" && !held) {
    sessionEvent(ctx, { type: "newWork", issues: ranked.slice(0, 10).map((t) => t.issue) }, true);
  }

  // Every agent was limited: nothing is dispatched before the earliest reset (task-alerts.ts), not even on request.
  const limitedUntil = agentsLimitedNow(ctx);
  if (limitedUntil && ranked.length > 0) {
    waitingForTime = true;
    note(ctx, `dispatch waits for the agents' limits to reset at ${limitedUntil}`);
  }
  const asked = runAsked(ctx, runRequests, {
    limitedUntil,
    ranked,
    waiting: new Map(waiting.map((w) => [w.number, w.reason])),
    notInPool: new Map(notInPool.map((w) => [w.issue, w.reason])),
    live,
    held,
  });
  if (asked.size > 0) ranked = ranked.filter((t) => !asked.has(t.issue));

  // A merge requested now closes its issue, and the tasks waiting only on it become ready on the next reconcile
  // (the merge's own events bring it at once). The free slots wait for them instead of going to whatever is
  // ready this moment: the order of work follows the scores, not which dependency happened to merge first.
  const merging = new Set(ctx.effects.flatMap((e) => (e.type === "mergePr" ? [e.issue] : [])));
  const unblocking =
    merging.size > 0 &&
    waiting.some(
      (w) =>
        w.code === "dependencies" &&
        !!w.waitingOn?.length &&
        w.waitingOn.every((d) => typeof d === "number" && merging.has(d)),
    );
  if (unblocking) note(ctx, `dispatch waits for the merge of ${[...merging].map((n) => `#${n}`).join(", ")}`);
  if (
    modeOf(ctx) === "auto" &&
    isDispatching(state.session.status) &&
    !unblocking &&
    !held &&
    !limitedUntil
  ) {
    const free = config.maxParallel - live.size - asked.size;
    const chosen = ranked.slice(0, Math.max(0, free));
    for (const task of chosen) dispatch(ctx, task.issue, formatScoreParts(task.parts), task.total);
    const taken = new Set(chosen.map((t) => t.issue));
    ranked = ranked.filter((t) => !taken.has(t.issue));
  }
  const pending = ranked.length > 0 || waitingForTime;
  return { graph, ranked, waits, notInPool, pending };
}

interface PoolFacts {
  /** Every agent is limited until then: a request is refused like any wait for a time. */
  limitedUntil: string | null;
  ranked: ReturnType<typeof rankTasks>;
  waiting: ReadonlyMap<number, string>;
  notInPool: ReadonlyMap<number, string>;
  live: ReadonlySet<number>;
  held: boolean;
}

/**
 * Judges each `/autopilot run #N` (run-command.ts) and dispatches the ones that may start, in comment order;
 * every request gets a reaction, a refusal also a reply saying why. Returns the tasks started.
 */
/** A `/autopilot run #N` that does not start the task: a "confused" reaction and the reason, where it was asked. */
function refuseRun(ctx: Reconciling, request: RunRequest, reason: string): void {
  const comment = { id: request.commentId, review: request.review };
  react(ctx, comment, "confused");
  reply(ctx, request.commentIssue, comment, request.line, reason);
  note(ctx, `comment ${request.commentId}: run #${request.issue} refused: ${reason}`);
}

function runAsked(ctx: Reconciling, requests: readonly RunRequest[], pool: PoolFacts): Set<number> {
  const started = new Set<number>();
  for (const request of requests) {
    const n = request.issue;
    const issue = ctx.issues.get(n);
    const record = ctx.state.tasks[n];
    const wait = record?.waitUntil && Date.parse(record.waitUntil) > ctx.nowMs ? record.waitUntil : null;
    const scored = pool.ranked.find((t) => t.issue === n);
    if (pool.limitedUntil) {
      refuseRun(
        ctx,
        request,
        `every agent is limited until ${formatTime(pool.limitedUntil)}: ask again with \`/autopilot run #${n}\` after that.`,
      );
      continue;
    }
    const verdict = runVerdict({
      issue: n,
      open: issue?.state === "open",
      session: ctx.state.session.status,
      configHeld: pool.held,
      status: issue ? statusOf(ctx, n) : null,
      epic: epicRefusal(ctx, n),
      live: pool.live.has(n) || started.has(n),
      waiting: pool.waiting.get(n) ?? null,
      notInPool: pool.notInPool.get(n) ?? null,
      waitUntil: wait ? { at: formatTime(wait), why: record?.reason ?? "backoff" } : null,
      candidate: scored !== undefined,
      maxParallel: ctx.config.maxParallel,
      busy: [...pool.live, ...started].sort((a, b) => a - b),
      readyLabel: ctx.config.labels.ready,
    });
    if (!verdict.start || !scored) {
      refuseRun(ctx, request, verdict.start ? `#${n} is not ready to run.` : verdict.reason);
      continue;
    }
    react(ctx, { id: request.commentId, review: request.review }, "+1");
    started.add(n);
    const why = `asked by ${request.actor} with /autopilot run; ${formatScoreParts(scored.parts)}`;
    dispatch(ctx, n, why, scored.total);
  }
  return started;
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((l, i) => l === b[i]));
}

/**
 * The attempt number of a new dispatch: past the state's record, the latest result, and every attempt whose run
 * has ended. A task that left the state (taken out, closed) and came back starts a new record while its last
 * run, ended, still carries attempt 1: that number is spent (its dispatch lock may not be deleted yet, and a late
 * result of the old run would read as the new attempt's). A lock whose run has not ended is not passed: that
 * attempt may be in flight (sent by another controller, or recorded in a state since lost), and taking its
 * number again is what lets the lock turn a second dispatch away.
 */
function nextAttempt(ctx: Reconciling, n: number, recorded: number, resulted: number): number {
  let seen = Math.max(recorded, resulted);
  for (const run of ctx.snapshot.runs) {
    if (run.issue === n && run.status === "completed" && typeof run.attempt === "number")
      seen = Math.max(seen, run.attempt);
  }
  return seen + 1;
}

function dispatch(ctx: Reconciling, n: number, why: string, score: number): void {
  const record = taskRecord(ctx, n);
  const result = ctx.results.get(n);
  const attempt = nextAttempt(ctx, n, record.attempt, result?.attempt ?? 0);
  const dispatchId = dispatchIdOf(n, attempt, ctx.input.dispatchIdSeed);
  const now = ctx.now.toISOString();
  record.attempt = attempt;
  record.dispatchId = dispatchId;
  record.dispatchedAt = now;
  record.startedAt ??= now;
  record.runId = undefined;
  record.waitUntil = undefined;
  record.cancelAt = undefined;
  record.merge = undefined;
  // This worker reads the instructions a `fix` left (its marker comment): the request is carried out.
  record.fixAsked = undefined;
  recordApprover(ctx, n);
  setStatus(ctx, n, "in-progress");
  const effect: Effect = { type: "dispatchWorker", issue: n, attempt, dispatchId };
  const plan = planOfDispatch(ctx, n, record);
  if (plan === "propose" || plan === "split") record.planRun = dispatchId;
  enterCandidate(ctx, n, record, plan);
  withJobOverrides(ctx, record, plan, effect);
  freezeText(ctx, n, effect);
  withConfigDigest(ctx, effect);
  ctx.effects.push(effect);
  note(ctx, `#${n}: dispatch attempt ${attempt} (${dispatchId}), score ${score}: ${why}`);
}
