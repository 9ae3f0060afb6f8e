/** What the dashboard shows after this reconcile's decisions: slots, queue, review, off-ramps, the graph. */
import { renderConfigError } from "../config/index.js";
import type { AwaitedCommand, DashboardView, ReasonLine } from "../dashboard/index.js";
import { usdBudgetNotes } from "../agent/pricing.js";
import { formatScoreParts } from "../tasks/scoring.js";
import { renderSessionBudgetMarker, sessionSpend } from "../session/session-budget.js";
import { modeOf, type Reconciling } from "./context.js";
import type { Pool } from "./runs/pool-dispatch.js";
import type { ReviewLines } from "./pulls/reviews.js";
import { statusOf } from "./task-labels.js";
import { viewStatistics } from "./view-statistics.js";
import { liveIssues, liveState } from "./runs/worker-runs.js";
import { candidateSlotText, holdsInProgress } from "./runs/best-of.js";
import { slotAgent } from "./runs/agent-switches.js";

export function buildView(ctx: Reconciling, pool: Pool, reviewLines: ReviewLines): DashboardView {
  const { config, state } = ctx;
  const view: DashboardView = {
    repo: { owner: ctx.snapshot.repo.owner, name: ctx.snapshot.repo.name },
    dryRun: config.dryRun,
    maxParallel: config.maxParallel,
    maxIterations: config.maxIterations,
    ...(config.isolation !== "namespace" ? { weakIsolation: config.isolation } : {}),
    ...(config.network === "open" ? { openNetwork: true } : {}),
    ...(ctx.input.githubLimitWait ? { githubLimitSince: ctx.input.githubLimitWait.since } : {}),
    slots: [],
    queue: pool.ranked.map((t) => ({
      issue: t.issue,
      title: t.title,
      score: t.total,
      why: formatScoreParts(t.parts),
    })),
    waiting: pool.waits.sort((a, b) => a.issue - b.issue),
    review: [],
    needsHuman: [],
    blocked: [],
    timeouts: [],
    failed: [],
    notInPool: pool.notInPool,
    ...(pool.epics?.length ? { epics: pool.epics } : {}),
    cycles: pool.graph.cycles,
    graph: { nodes: [], edges: [] },
    statistics: viewStatistics(ctx),
    progress: { done: 0, total: 0 },
    configProblems: ctx.input.configError ? renderConfigError(ctx.input.configError) : null,
    ...(ctx.input.configError
      ? {
          configFallback: ctx.input.configHeld
            ? { held: true as const }
            : { held: false as const, commit: state.lastGoodConfig?.commit ?? null },
        }
      : {}),
    budget: {
      marker: renderSessionBudgetMarker(config.budgets.session, sessionSpend(state, ctx.results.values())),
      notes: usdBudgetNotes(config),
    },
  };
  for (const n of [...liveIssues(ctx)].sort((a, b) => a - b)) {
    const live = liveState(ctx, n);
    const record = state.tasks[n];
    const result = ctx.results.get(n);
    const current = result && record && result.dispatchId === record.dispatchId ? result : null;
    view.slots.push({
      issue: n,
      title: ctx.issues.get(n)?.title ?? "",
      attempt: record?.attempt ?? live.run?.attempt ?? 1,
      iteration: current ? current.iterations : null,
      maxIterations: current ? current.maxIterations : null,
      startedAt: current?.startedAt ?? live.run?.createdAt ?? record?.dispatchedAt ?? null,
      runId: live.run?.id ?? null,
      runUrl: live.run?.url ?? null,
      phase: live.phase ?? "running",
      candidate: candidateSlotText(record),
      ...slotAgent(ctx, n, current !== null),
    });
  }
  let open = 0;
  for (const [n, issue] of [...ctx.issues].sort((a, b) => a[0] - b[0])) {
    if (issue.state !== "open") continue;
    const status = statusOf(ctx, n);
    if (status === null || status === "skipped") continue;
    open += 1;
    const record = state.tasks[n];
    const line: ReasonLine = {
      issue: n,
      title: issue.title,
      reason: record?.reason ?? ctx.results.get(n)?.reason ?? "no reason given",
      since: record?.since ?? (status === "needs-human" ? (ctx.results.get(n)?.updatedAt ?? null) : null),
      pr: record?.pr ?? null,
    };
    // A best-of round being chosen (or its winner being carried over) has no worker: it waits.
    if (status === "in-progress" && holdsInProgress(record) && !view.slots.some((s) => s.issue === n))
      view.waiting.push(line);
    if (status === "review")
      view.review.push(reviewLines.get(n) ?? { ...line, reason: "waiting for the gates" });
    else if (status === "needs-human") view.needsHuman.push(line);
    else if (status === "blocked") view.blocked.push(line);
    else if (status === "timeout") view.timeouts.push(line);
    else if (status === "failed") view.failed.push(line);
  }
  view.progress = { done: state.history.completed, total: state.history.completed + open };
  const awaiting = awaitedCommand(ctx, view);
  if (awaiting) view.awaiting = awaiting;
  view.graph = graphView(ctx, view, pool);
  return view;
}

/**
 * The command nothing starts without: `/autopilot start` while ready work waits and no session runs, or, with
 * `mode: semi-auto` and a running session, `/autopilot run #N` for the head of the queue.
 */
function awaitedCommand(ctx: Reconciling, view: DashboardView): AwaitedCommand | null {
  const s = ctx.state.session;
  if (ctx.input.configHeld) return null;
  if ((s.status === "idle" || s.status === "completed") && view.queue.length > 0) {
    const why =
      s.status === "idle" && s.reason !== "initial"
        ? "the session was stopped"
        : "`session.autoStart` is false, so a session starts only when a person says so";
    return { command: "start", ready: view.queue.length, why };
  }
  if (modeOf(ctx) !== "semi-auto" || s.status !== "running") return null;
  return {
    command: "run",
    next: view.queue[0] ?? null,
    freeSlots: Math.max(0, view.maxParallel - view.slots.length),
  };
}

/** Graph: tasks in flight first, then the queue, then the rest; edges among the shown ones. */
function graphView(ctx: Reconciling, view: DashboardView, pool: Pool): DashboardView["graph"] {
  const order: number[] = [];
  const seen = new Set<number>();
  const add = (n: number) => {
    if (!seen.has(n) && ctx.issues.has(n)) {
      seen.add(n);
      order.push(n);
    }
  };
  for (const line of [
    ...view.slots,
    ...view.review,
    ...view.queue,
    ...view.waiting,
    ...view.needsHuman,
    ...view.blocked,
    ...view.timeouts,
    ...view.failed,
  ]) {
    add(line.issue);
  }
  const inGraph = new Set(order.slice(0, 200));
  const deps = new Set<number>();
  for (const e of pool.graph.edges) if (inGraph.has(e.from) && ctx.issues.has(e.to)) deps.add(e.to);
  for (const d of deps) add(d);
  const waitingIssues = new Set(view.waiting.map((w) => w.issue));
  const nodes: DashboardView["graph"]["nodes"] = order.slice(0, 250).map((n) => {
    const issue = ctx.issues.get(n)!;
    const status = statusOf(ctx, n);
    const waiting = waitingIssues.has(n);
    return {
      issue: n,
      status: issue.state === "closed" ? "done" : waiting ? "waiting" : (status ?? "waiting"),
    };
  });
  const shown = new Set(nodes.map((x) => x.issue));
  const edges = pool.graph.edges
    .filter((e) => shown.has(e.from) && shown.has(e.to))
    .map((e) => [e.from, e.to] as [number, number]);
  return { nodes, edges };
}
