/**
 * Which tasks have a live worker (a queued or running workflow run, or a recent dispatch whose run has not
 * appeared), and cancelling runs.
 */
import type { SlotLine } from "../../dashboard/index.js";
import { jobSilenceLimitMs } from "../../agent/job-silence.js";
import type { RunNode } from "../../world.js";
import { note, type Reconciling, taskRecord } from "../context.js";
import { CANCEL_RETRY_MINUTES, DISPATCH_GRACE_MINUTES } from "../timing.js";

interface LiveState {
  live: boolean;
  run?: RunNode;
  phase?: SlotLine["phase"];
}

/** The task a run works on: its `issue` input, or the issue its dispatch id starts with. */
function runIssue(run: RunNode): number | null {
  if (run.issue) return run.issue;
  const m = run.dispatchId ? /^(\d+)-/.exec(run.dispatchId) : null;
  return m ? Number(m[1]) : null;
}

/** The task's runs that have not completed, in the snapshot's order. */
export function liveRunsOf(ctx: Reconciling, n: number): RunNode[] {
  return [...(ctx.liveRunsByIssue.get(n) ?? [])];
}

/** Runs that have not completed, by task (looked up for every open issue: one pass over the runs, not one each). */
export function liveRunsByIssue(runs: readonly RunNode[]): Map<number, RunNode[]> {
  const byIssue = new Map<number, RunNode[]>();
  for (const run of runs) {
    if (run.status === "completed") continue;
    const n = runIssue(run);
    if (n === null) continue;
    const list = byIssue.get(n);
    if (list) list.push(run);
    else byIssue.set(n, [run]);
  }
  return byIssue;
}

/** Whether the task's worker is live and in which phase; records the run id of the current dispatch. */
export function liveState(ctx: Reconciling, n: number): LiveState {
  const runs = liveRunsOf(ctx, n);
  const record = ctx.state.tasks[n];
  if (runs.length > 0) {
    const run = runs.find((r) => r.dispatchId && r.dispatchId === record?.dispatchId) ?? runs[0]!;
    if (record && run.dispatchId === record.dispatchId) record.runId = run.id;
    const cancelling = record?.cancelAt !== undefined && record.notices?.includes(`cancel:${run.id}`);
    return {
      live: true,
      run,
      phase: cancelling ? "cancelling" : run.status === "in_progress" ? "running" : "queued",
    };
  }
  if (!record?.dispatchId || record.handled === record.dispatchId) return { live: false };
  const ours = ctx.snapshot.runs.find((r) => r.dispatchId === record.dispatchId);
  if (ours) return { live: false }; // it completed
  const result = ctx.results.get(n);
  if (
    result &&
    result.dispatchId === record.dispatchId &&
    result.status === "running" &&
    ctx.nowMs - Date.parse(result.updatedAt) < jobSilenceLimitMs(ctx.config)
  ) {
    return { live: true, phase: "running" };
  }
  const dispatchedAt = Date.parse(record.dispatchedAt ?? "");
  if (!Number.isNaN(dispatchedAt) && ctx.nowMs - dispatchedAt < DISPATCH_GRACE_MINUTES * 60_000) {
    return { live: true, phase: "dispatched" };
  }
  return { live: false };
}

export function isLive(ctx: Reconciling, n: number): boolean {
  return liveState(ctx, n).live;
}

/** Every task with a live worker (run queued/in progress, or a recent dispatch whose run has not appeared). */
export function liveIssues(ctx: Reconciling): Set<number> {
  const out = new Set<number>();
  for (const run of ctx.snapshot.runs) {
    const n = runIssue(run);
    if (n !== null && run.status !== "completed") out.add(n);
  }
  for (const key of Object.keys(ctx.state.tasks)) if (isLive(ctx, Number(key))) out.add(Number(key));
  return out;
}

export function liveCount(ctx: Reconciling): number {
  return liveIssues(ctx).size;
}

/** The current dispatch's worker finished (its result is in). */
export function finishedCurrent(ctx: Reconciling, n: number): boolean {
  const record = ctx.state.tasks[n];
  const result = ctx.results.get(n);
  return !!record?.dispatchId && result?.dispatchId === record.dispatchId && result.status === "finished";
}

/**
 * The current dispatch's outcome is not handled yet: its worker is at work, or its run ended and its result does
 * not show yet (a worker's own last step counts its run as ended before then). Its PR is not final meanwhile.
 */
export function outcomePending(ctx: Reconciling, n: number): boolean {
  const record = ctx.state.tasks[n];
  return !!record?.dispatchId && record.handled !== record.dispatchId;
}

/** The current dispatch's worker finished and this controller has not acted on its result yet. */
export function finishedUnhandled(ctx: Reconciling, n: number): boolean {
  const record = ctx.state.tasks[n];
  return finishedCurrent(ctx, n) && record?.handled !== record?.dispatchId;
}

/** Cancels a run, asking again only after CANCEL_RETRY_MINUTES. */
export function cancelRun(ctx: Reconciling, run: RunNode, n: number, why: string): void {
  const record = taskRecord(ctx, n);
  const key = `cancel:${run.id}`;
  const asked =
    record.notices?.includes(key) &&
    record.cancelAt &&
    ctx.nowMs - Date.parse(record.cancelAt) < CANCEL_RETRY_MINUTES * 60_000;
  if (asked) return;
  record.cancelAt = ctx.now.toISOString();
  record.notices = [...(record.notices ?? []).filter((k) => k !== key), key].slice(-12);
  ctx.effects.push({ type: "cancelRun", runId: run.id, issue: n });
  note(ctx, `#${n}: cancel run ${run.id}: ${why}`);
}
