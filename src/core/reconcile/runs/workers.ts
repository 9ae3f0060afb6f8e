/**
 * The phase that follows the workers: finished results are acted on, dispatches whose run never appeared are
 * sent again, runs that ended without a result count as crashes, stalled and duplicate runs are cancelled.
 */
import { DISPATCH_LOCK_PREFIX, dispatchLockRef } from "../../contract.js";
import type { Effect } from "../../effects.js";
import { isDispatching } from "../../session/session.js";
import { TASK_STATUSES, type TaskStatus } from "../../tasks/task.js";
import { hasWriteAccess } from "../../tasks/commands.js";
import type { TaskRecord } from "../../dashboard/index.js";
import type { RunNode } from "../../world.js";
import type { WorkerOutcome } from "../../tasks/worker-result.js";
import { jobSilenceLimitMs } from "../../agent/job-silence.js";
import { formatDuration } from "../../time/duration.js";
import { note, type Reconciling, taskRecord } from "../context.js";
import { planOfDispatch } from "../commands/plan-approval.js";
import { withConfigDigest, withJobOverrides } from "./dispatch-config.js";
import { freezeText } from "../text-approval.js";
import { CLEARED, clearStateLabels, hasLabel, setStatus, statusOf } from "../task-labels.js";
import {
  DISPATCH_GRACE_MINUTES,
  DISPATCH_RESEND_MINUTES,
  DISPATCH_UNSENT_SECONDS,
  RESULT_GRACE_MINUTES,
  SETTLE_MINUTES,
} from "../timing.js";
import { accountResult, crash, handleOutcome } from "./worker-outcomes.js";
import { candidateEnded, holdsInProgress, isCandidateDispatch } from "./best-of.js";
import { cancelRun, liveRunsOf, liveState } from "./worker-runs.js";

/** The state a worker labels its own task with when it ends with these outcomes (src/worker/job/outcome.ts). */
const WORKER_LABELS: Partial<Record<WorkerOutcome, TaskStatus>> = {
  complete: "review",
  blocked: "blocked",
  needs_human: "needs-human",
};

export function processWorkers(ctx: Reconciling): void {
  const candidates = new Set<number>();
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open") continue;
    const r = ctx.state.tasks[n];
    if (statusOf(ctx, n) === "in-progress" || (r?.dispatchId && r.handled !== r.dispatchId))
      candidates.add(n);
    // A task of ours still carrying in-progress beside another state label (a label move half done).
    else if (r?.dispatchId && labeledInProgress(ctx, n)) candidates.add(n);
    if (ctx.liveRunsByIssue.has(n)) candidates.add(n);
  }
  for (const n of [...candidates].sort((a, b) => a - b)) processWorker(ctx, n);
  rememberResultComments(ctx);
}

/**
 * Remembers which comment holds each task's worker result, so the snapshot finds it however many comments
 * follow it (src/github/snapshot/buried-comments.ts).
 */
function rememberResultComments(ctx: Reconciling): void {
  for (const [key, nodeId] of Object.entries(ctx.snapshot.resultComments ?? {})) {
    const record = ctx.state.tasks[Number(key)];
    if (record && record.resultComment !== nodeId) record.resultComment = nodeId;
  }
}

function processWorker(ctx: Reconciling, n: number): void {
  const status = statusOf(ctx, n);
  let record = ctx.state.tasks[n];
  const result = ctx.results.get(n);

  // Another controller won this attempt's dispatch lock: its run carries another dispatch id. Follow that run
  // instead of waiting for ours, which was never sent (and must not be re-sent).
  if (record?.dispatchId && !ctx.snapshot.runs.some((r) => r.dispatchId === record!.dispatchId)) {
    const winner = ctx.snapshot.runs.find(
      (r) =>
        r.issue === n && r.attempt === record!.attempt && r.dispatchId && r.dispatchId !== record!.dispatchId,
    );
    if (winner?.dispatchId) {
      note(
        ctx,
        `#${n}: attempt ${record.attempt} runs as ${winner.dispatchId} (dispatched by another controller)`,
      );
      record.dispatchId = winner.dispatchId;
    }
  }

  // Adopt a dispatch the state does not know (state rebuilt, or a run started by another controller).
  if (result && (!record || (result.dispatchId !== record.dispatchId && result.attempt > record.attempt))) {
    record = taskRecord(ctx, n);
    record.attempt = Math.max(record.attempt, result.attempt);
    record.dispatchId = result.dispatchId;
    record.dispatchedAt ??= result.startedAt;
  }

  if (result && record && result.dispatchId === record.dispatchId && result.status === "finished") {
    if (record.handled !== result.dispatchId) {
      if (result.result === "claimed_elsewhere") {
        record.handled = result.dispatchId;
        note(ctx, `#${n}: worker ${result.dispatchId} found the task claimed elsewhere`);
      } else if (isCandidateDispatch(record, result.dispatchId)) {
        candidateEnded(ctx, n, record, {
          result,
          outcome: result.result ?? "failed",
          reason: result.reason ?? "",
        });
      } else if (
        status === "in-progress" ||
        status === "ready" ||
        (status !== null && status === WORKER_LABELS[result.result ?? "failed"])
      ) {
        handleOutcome(ctx, n, record, result);
      } else {
        accountResult(record, result);
        record.handled = result.dispatchId;
        if (status !== null && status !== "done" && labeledInProgress(ctx, n)) {
          // A label move half done (a 5xx after the new label was added, before in-progress was removed) whose
          // record was not written: the task shows its new status beside in-progress, and nothing else would
          // take in-progress off. The status it shows stands; only in-progress goes.
          setStatus(ctx, n, status);
          note(
            ctx,
            `#${n}: worker finished (${result.result}); the task is ${status} and still labeled in progress: in-progress removed`,
          );
        } else
          note(ctx, `#${n}: worker finished (${result.result}) but the task is ${status}; labels left alone`);
      }
    } else if (labeledInProgress(ctx, n) && labelWriteLost(record)) {
      // The outcome was handled and its label written, yet the task still carries the in-progress label past
      // the settle window (prepare.ts believes the record before it), alone or beside the new one: the write was
      // lost or half done (a write queued by the circuit is dropped when an Actions job ends; a 5xx may come
      // after the label was added and before in-progress was removed). The record's label is what the outcome
      // decided; write it again.
      // A task taken out (record.label CLEARED: its text changed, a person's word) has its labels cleared again.
      if (record.label === CLEARED) clearStateLabels(ctx, n);
      else setStatus(ctx, n, record.label as TaskStatus);
      note(ctx, `#${n}: still labeled in progress after its outcome set ${record.label}; labeled again`);
    }
    cancelDuplicateRuns(ctx, n);
    return;
  }

  const live = liveState(ctx, n);
  if (live.live) {
    if (live.phase === "dispatched") resendDispatch(ctx, n);
    cancelDuplicateRuns(ctx, n);
    cancelIfStalled(ctx, n, live.run ?? null);
    return;
  }
  if (!record?.dispatchId || record.handled === record.dispatchId) {
    // A best-of round being chosen, or its winner on its way to the task branch, has no worker (best-of.ts).
    if (record && endLabelLost(ctx, n, record, status)) {
      // The run's end was handled (a crash, a lost run, a failure with no retries left) and its label move lost
      // or half done, past the settle window: the record's label is what it decided, so it is written again.
      // Back to ready would put a task that failed for good in the queue again, past its retries; leaving a
      // half-done move alone would keep it labeled in progress with no run. A writer's ready label since stands.
      const again = readiedByWriterSince(ctx, n, record) ? "ready" : record.label!;
      if (again === CLEARED) clearStateLabels(ctx, n);
      else setStatus(ctx, n, again as TaskStatus);
      note(
        ctx,
        `#${n}: still labeled in progress after its run's end set ${record.label}; labeled ${again} again`,
      );
    } else if (status === "in-progress" && !holdsInProgress(record)) {
      // Labeled in-progress without any dispatch we know of: give it back to the pool, no penalty.
      setStatus(ctx, n, "ready");
      note(ctx, `#${n}: in progress without a worker run; back to ready`);
    }
    return;
  }
  // Dispatched, not live, no finished result: the run ended without a result (or never appeared).
  const run = ctx.snapshot.runs.find((r) => r.dispatchId === record!.dispatchId);
  const why = run
    ? `the worker run ended (${run.conclusion ?? "unknown"}) without a result`
    : `the worker run never appeared within ${DISPATCH_GRACE_MINUTES} minutes of the dispatch`;
  if (
    run?.conclusion === "success" &&
    ctx.nowMs - Date.parse(run.updatedAt) < RESULT_GRACE_MINUTES * 60_000
  ) {
    // A job that succeeded wrote its result before it ended: the read of the comments lags the read of the
    // runs. Waiting costs a reconcile; a crash would cost a retry (and three of them pause the session). Whatever
    // the task shows: a worker moves its own task to review before its result is read, and that result is
    // still to be counted and acted on.
    note(ctx, `#${n}: run ${run.id} succeeded; waiting for its result to show`);
    return;
  }
  if (status !== "in-progress" && status !== "ready" && !halfMovedToInProgress(ctx, n, record, status)) {
    record.handled = record.dispatchId;
    return;
  }
  if (isCandidateDispatch(record, record.dispatchId)) {
    // A candidate that crashed is out of the round; the round goes on without it.
    candidateEnded(ctx, n, record, { outcome: run ? "crash" : "lost", reason: why });
    return;
  }
  crash(ctx, n, record, why, run ? "crash" : "lost");
}

/** The task's labels, as this reconcile leaves them so far, include the in-progress label. */
function labeledInProgress(ctx: Reconciling, n: number): boolean {
  const labels = ctx.labels.get(n) ?? ctx.issues.get(n)?.labels ?? [];
  return hasLabel(labels, ctx.config.labels.inProgress);
}

/**
 * The task still carries the in-progress label beside another state label, and Autopilot's own last move was to
 * in progress: that move was half done (in-progress added, the old label not removed: a write refused or held
 * and lost with an Actions job), so the other label is what the task was before, not where it stands. Without a
 * run this dispatch ends as any other that never ran; leaving the labels alone would keep the task in progress
 * with no run for ever. A skip (the exclude label) and a closed issue are people's words and stand.
 */
function halfMovedToInProgress(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  status: TaskStatus | null,
): boolean {
  if (status === null || status === "skipped" || status === "done") return false;
  return record.label === "in-progress" && labeledInProgress(ctx, n);
}

/**
 * A handled dispatch's task still labeled in progress, past the settle window of Autopilot's last label of it,
 * whose record names another status: the end's label write was lost (a write held and dropped with an Actions
 * job) or half done (a 5xx between adding the new label and removing in-progress). A skip (the exclude label)
 * and a closed issue are people's words and stand.
 */
function endLabelLost(ctx: Reconciling, n: number, record: TaskRecord, status: TaskStatus | null): boolean {
  if (status === null || status === "skipped" || status === "done") return false;
  if (!labeledInProgress(ctx, n) || !labelWriteLost(record)) return false;
  return !(ctx.nowMs - Date.parse(record.labelAt ?? "") < SETTLE_MINUTES * 60_000);
}

/** A writer's ready label set on the task after Autopilot's last label of it (a person's word: it stands). */
function readiedByWriterSince(ctx: Reconciling, n: number, record: TaskRecord): boolean {
  const issue = ctx.issues.get(n);
  const labels = ctx.labels.get(n) ?? issue?.labels ?? [];
  if (!issue || !hasLabel(labels, ctx.config.labels.ready)) return false;
  const by = issue.readyLabeledBy;
  const at = Date.parse(issue.readyLabeledAt ?? "");
  return !!by && hasWriteAccess(ctx.snapshot.permissions, by) && at > Date.parse(record.labelAt ?? "");
}

/** A handled outcome whose label write did not land: the record names a pool status other than in progress. */
function labelWriteLost(record: TaskRecord): boolean {
  if (record.label === CLEARED) return !holdsInProgress(record);
  return (
    !!record.label &&
    record.label !== "in-progress" &&
    record.label !== CLEARED &&
    (TASK_STATUSES as readonly string[]).includes(record.label) &&
    !holdsInProgress(record)
  );
}

/**
 * Sends a recorded dispatch whose run never appeared once more: after DISPATCH_UNSENT_SECONDS when its lock
 * shows it was never sent (taking the lock then), otherwise after DISPATCH_RESEND_MINUTES (the lock may be this
 * attempt's own, taken by a controller stopped before it sent, so the resend goes without it).
 */
function resendDispatch(ctx: Reconciling, n: number): void {
  const record = ctx.state.tasks[n];
  if (!record?.dispatchId || !isDispatching(ctx.state.session.status) || ctx.input.configHeld) return;
  const key = `resend:${record.dispatchId}`;
  const since = Date.parse(record.dispatchedAt ?? "");
  if (record.notices?.includes(key) || Number.isNaN(since)) return;
  const unsent = neverSent(ctx, n, record.attempt);
  const wait = unsent ? DISPATCH_UNSENT_SECONDS * 1000 : DISPATCH_RESEND_MINUTES * 60_000;
  if (ctx.nowMs - since < wait) return;
  record.notices = [...(record.notices ?? []), key].slice(-12);
  const effect: Effect = {
    type: "dispatchWorker",
    issue: n,
    attempt: record.attempt,
    dispatchId: record.dispatchId,
  };
  if (!unsent) effect.resend = true;
  withJobOverrides(ctx, record, planOfDispatch(ctx, n, record), effect);
  freezeText(ctx, n, effect);
  withConfigDigest(ctx, effect);
  ctx.effects.push(effect);
  note(
    ctx,
    unsent
      ? `#${n}: dispatch ${record.dispatchId} was recorded but never sent (no lock, no run); sending it`
      : `#${n}: no run for dispatch ${record.dispatchId} yet; sending it again`,
  );
}

/**
 * Whether the lock list proves a dispatch was never sent: read in full, without the attempt's lock, while GitHub
 * has not been refusing locks (then a missing lock proves nothing).
 */
function neverSent(ctx: Reconciling, n: number, attempt: number): boolean {
  const locks = ctx.snapshot.dispatchLocks;
  if (!locks || !ctx.snapshot.dispatchLocksComplete || attempt < 1) return false;
  if (ctx.state.incidents.some((i) => i.kind === "dispatch_lock")) return false;
  return !locks.includes(dispatchLockRef(n, attempt).slice(DISPATCH_LOCK_PREFIX.length));
}

function cancelIfStalled(ctx: Reconciling, n: number, run: RunNode | null): void {
  if (run?.status !== "in_progress") return;
  const record = ctx.state.tasks[n];
  const result = ctx.results.get(n);
  const times = [Date.parse(run.createdAt), Date.parse(record?.dispatchedAt ?? "")];
  if (result && record && result.dispatchId === record.dispatchId) times.push(Date.parse(result.updatedAt));
  const progressAt = Math.max(...times.filter((t) => !Number.isNaN(t)));
  const idleMs = ctx.nowMs - progressAt;
  const limitMs = jobSilenceLimitMs(ctx.config);
  if (idleMs <= limitMs) return;
  cancelRun(ctx, run, n, `no progress for ${formatDuration(idleMs)} (limit ${formatDuration(limitMs)})`);
}

function cancelDuplicateRuns(ctx: Reconciling, n: number): void {
  const runs = liveRunsOf(ctx, n);
  if (runs.length < 2) return;
  const record = ctx.state.tasks[n];
  const keep =
    runs.find((r) => r.dispatchId && r.dispatchId === record?.dispatchId) ??
    [...runs].sort((a, b) => a.id - b.id)[0]!;
  for (const run of runs) if (run !== keep) cancelRun(ctx, run, n, "a second live run for the same task");
}
