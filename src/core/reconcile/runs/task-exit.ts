/** A task leaves the state: done (its PR merged), skipped or closed, counted into the history. */
import { type HistoryEntry, newTaskRecord } from "../../dashboard/index.js";
import { truncate } from "../../text/markdown.js";
import type { PullNode } from "../../world.js";
import { note, type Reconciling, round4, taskBranch } from "../context.js";
import { clearStateLabels } from "../task-labels.js";
import { dropCandidatesOnExit } from "./candidate-pulls.js";

/** The task's PR merged: close the issue, drop its labels (and its branch when configured), retire it. */
export function taskDone(ctx: Reconciling, n: number, pr: PullNode): void {
  if (ctx.issues.get(n)?.state === "open")
    ctx.effects.push({ type: "closeIssue", issue: n, reason: "completed" });
  clearStateLabels(ctx, n);
  // A branch GitHub already deleted (the repository deletes merged head branches) needs no request. Deleted only
  // while at the merged head: a commit pushed after the merge (a person's, a worker's) was never merged, and
  // deleting the branch would lose it.
  if (ctx.config.merge.deleteBranch && pr.headRef === taskBranch(ctx, n) && pr.headBranchExists !== false) {
    ctx.effects.push({ type: "deleteBranch", branch: pr.headRef, expectOid: pr.headSha });
  }
  retire(ctx, n, "done", pr.number);
  note(ctx, `#${n}: done (PR #${pr.number} merged)`);
}

/** Moves a finished task out of the state into the history counters and the pending history comment. */
export function retire(
  ctx: Reconciling,
  n: number,
  outcome: HistoryEntry["outcome"],
  pr: number | null,
): void {
  const state = ctx.state;
  const record = state.tasks[n] ?? newTaskRecord();
  dropCandidatesOnExit(ctx, n, record);
  const h = state.history;
  // A task that left and came back (taken out, then labeled again; merged, then rolled back) is one task: while
  // its earlier exit still waits in the pending history, the new exit replaces it there and in the counts. An exit
  // already written out to a history comment stays counted, as that comment lists it.
  const earlier = state.pendingHistory.findIndex((p) => p.issue === n);
  if (earlier >= 0) {
    const [left] = state.pendingHistory.splice(earlier, 1);
    if (left?.outcome === "done") h.completed = Math.max(0, h.completed - 1);
    else if (left?.outcome === "skipped") h.skipped = Math.max(0, h.skipped - 1);
    else if (left) h.closed = Math.max(0, h.closed - 1);
  }
  if (outcome === "done") {
    h.completed += 1;
    if (pr) h.merges += 1;
    h.completedIterations += record.iterations;
    if (!h.fastest || record.iterations < h.fastest.iterations)
      h.fastest = { issue: n, iterations: record.iterations };
    if (!h.slowest || record.iterations > h.slowest.iterations)
      h.slowest = { issue: n, iterations: record.iterations };
  } else if (outcome === "skipped") h.skipped += 1;
  else h.closed += 1;
  h.iterations += record.iterations;
  h.tokensIn += record.tokensIn;
  h.tokensOut += record.tokensOut;
  h.costUsd = round4(h.costUsd + record.costUsd);
  state.pendingHistory.push({
    issue: n,
    title: truncate(ctx.issues.get(n)?.title ?? `#${n}`, 80),
    outcome,
    at: ctx.now.toISOString(),
    iterations: record.iterations,
    tokens: record.tokensIn + record.tokensOut,
    costUsd: record.costUsd,
    attempts: record.attempt,
    ...(record.reviewUsd ? { reviewUsd: record.reviewUsd } : {}),
    ...(pr ? { pr } : {}),
    ...(record.startedAt ? { startedAt: record.startedAt } : {}),
  });
  if (record.attempt > 0)
    ctx.effects.push({ type: "releaseDispatchLocks", issue: n, attempts: record.attempt });
  state.recent = [
    ...state.recent.filter((r) => r.issue !== n),
    { issue: n, outcome, at: ctx.now.toISOString() },
  ].slice(-100);
  delete state.tasks[n];
}
