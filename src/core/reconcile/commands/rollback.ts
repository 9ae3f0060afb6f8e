/**
 * `/autopilot rollback #N`: take a task's work back out and put the task in the queue again.
 *
 * - Merged: GitHub opens a PR that reverts the task's merged PR (its `revertPullRequest` mutation, the web's
 *   Revert button: https://docs.github.com/en/graphql/reference/mutations#revertpullrequest). The issue is
 *   opened again in review, and that revert PR is the task's PR from then on (task-pulls.ts): it passes the
 *   same gates as any task PR (checks, the human gate on its diff, reviews) in reviews.ts, and only once it has
 *   merged is the task ready again, so the next worker starts from a default branch without the old work.
 * - Not merged (in progress, in review, or ended): its open PR is closed, its branch deleted, any live worker
 *   cancelled, and the task is ready again with a fresh start.
 *
 * Idempotent: the command's comment is processed once (the state's cursor), a rollback already under way is
 * refused, and the executor does not ask GitHub for a second revert of a PR it already reverted.
 */
import { revertBranchName } from "../../contract.js";
import { quietLogin, truncate } from "../../text/markdown.js";
import type { PullNode } from "../../world.js";
import { note, type Reconciling, taskBranch, taskRecord } from "../context.js";
import { freshStart, type TaskCommandOutcome } from "./retry-skip.js";
import { setStatus, statusOf } from "../task-labels.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { cancelRun, liveRunsOf } from "../runs/worker-runs.js";

export function rollbackTask(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  const under = ctx.state.tasks[n]?.rollback;
  if (under) {
    return {
      ok: false,
      message: `#${n} is already being rolled back: the pull request reverting PR #${under.merged} must pass its gates and merge first.`,
    };
  }
  const issue = ctx.issues.get(n);
  const prs = pullsFor(ctx, n);
  const merged = prs.find((p) => p.state === "merged");
  if (!issue || issue.state === "closed") {
    if (!merged)
      return {
        ok: false,
        message: `Nothing to roll back for #${n}: it is not an open task, and Autopilot sees no merged pull request of it on \`${taskBranch(ctx, n)}\` among the recently closed ones.`,
      };
    return revertMerged(ctx, n, merged, actor);
  }
  const status = statusOf(ctx, n);
  if (status === null) return { ok: false, message: `#${n} is not an Autopilot task.` };
  if (merged && status === "done") return revertMerged(ctx, n, merged, actor);
  return discardUnmerged(ctx, n, actor);
}

/** Asks GitHub for the revert PR; the task waits in review on it (reviews.ts). */
function revertMerged(ctx: Reconciling, n: number, merged: PullNode, actor: string): TaskCommandOutcome {
  const branch = revertBranchName(ctx.config.branchPrefix, n, merged.number);
  ctx.effects.push({
    type: "revertPull",
    pr: merged.number,
    issue: n,
    title: truncate(`Revert #${merged.number}: ${merged.title}`, 250),
    body: [
      `Reverts #${merged.number}, the work of #${n}, as ${quietLogin(actor)} asked with \`/autopilot rollback #${n}\`.`,
      "",
      `This pull request passes the same gates as any task's; once it merges, #${n} goes back to the queue and a new worker starts it from the default branch.`,
    ].join("\n"),
  });
  if (ctx.issues.get(n)?.state !== "open") ctx.effects.push({ type: "reopenIssue", issue: n });
  const r = taskRecord(ctx, n);
  r.rollback = { merged: merged.number, at: ctx.now.toISOString() };
  r.pr = undefined;
  r.merge = undefined;
  r.feedbackRounds = 0;
  r.feedbackSha = undefined;
  r.notices = undefined;
  r.result = "rollback";
  r.reason = `rollback asked by @${actor}: reverting PR #${merged.number}`;
  ctx.state.recent = ctx.state.recent.filter((x) => x.issue !== n);
  setStatus(ctx, n, "review");
  note(ctx, `#${n}: rollback by ${actor}: revert PR #${merged.number} on ${branch}`);
  return {
    ok: true,
    message: `Rolling back #${n}: GitHub opens a pull request reverting PR #${merged.number}. It passes the same gates as any task's PR; once it merges, #${n} is ready again.`,
  };
}

/** An unmerged task: PR closed, branch deleted, live worker cancelled, task ready again. */
function discardUnmerged(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  for (const run of liveRunsOf(ctx, n)) cancelRun(ctx, run, n, "rolled back");
  const open = pullsFor(ctx, n).filter((p) => p.state === "open");
  for (const pr of open) ctx.effects.push({ type: "closePull", pr: pr.number, issue: n });
  const branch = taskBranch(ctx, n);
  ctx.effects.push({ type: "deleteBranch", branch });
  const r = freshStart(ctx, n, 1, `rolled back by @${actor}`);
  r.pr = undefined;
  // The human-gate rules that fired were about the PR thrown away; the next PR's diff is judged afresh.
  r.gate = undefined;
  note(ctx, `#${n}: rollback by ${actor}: ${open.length} PR(s) closed, ${branch} deleted`);
  const closed = open.length > 0 ? `closed ${open.map((p) => `#${p.number}`).join(", ")}, ` : "";
  return {
    ok: true,
    message: `Rolled back #${n}: ${closed}deleted \`${branch}\`. It is ready again; the next worker starts from the default branch.`,
  };
}

/** The revert PR merged: the task's work is gone from the default branch, so it goes back to the queue. */
export function rollbackMerged(ctx: Reconciling, n: number, revert: PullNode): void {
  const record = taskRecord(ctx, n);
  const reverted = record.rollback?.merged;
  record.rollback = undefined;
  record.gate = undefined;
  if (ctx.config.merge.deleteBranch && revert.headBranchExists !== false)
    ctx.effects.push({ type: "deleteBranch", branch: revert.headRef });
  const r = freshStart(ctx, n, 1, `rolled back: revert PR #${revert.number} merged`);
  r.pr = undefined;
  ctx.effects.push({
    type: "comment",
    issue: n,
    body: `The revert PR #${revert.number} merged, so the work of PR #${reverted ?? "?"} is undone. #${n} is back in the queue.`,
    key: `rollback-done-${revert.number}`,
  });
  note(ctx, `#${n}: revert PR #${revert.number} merged → ready`);
}
