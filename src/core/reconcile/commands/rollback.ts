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
import { epicRefusal } from "../epic-pooling.js";
import { revertBranchName, taskBranchName } from "../../contract.js";
import { quietLogin, truncate } from "../../text/markdown.js";
import { parseDashboard, type TaskRecord } from "../../dashboard/index.js";
import type { Effect } from "../../effects.js";
import type { PullNode, WorldSnapshot } from "../../world.js";
import { note, type Reconciling, taskBranch, taskRecord } from "../context.js";
import { freshStart, type TaskCommandOutcome } from "./retry-skip.js";
import { setStatus, statusOf } from "../task-labels.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { cancelRun, liveRunsOf } from "../runs/worker-runs.js";
import { SETTLE_MINUTES } from "../timing.js";

export function rollbackTask(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  const under = ctx.state.tasks[n]?.rollback;
  if (under) {
    return {
      ok: false,
      message: `#${n} is already being rolled back: the pull request reverting PR #${under.merged} must pass its gates and merge first.`,
    };
  }
  const issue = ctx.issues.get(n);
  // A merged PR already reverted is not among the task's PRs (task-pulls.ts): it is never reverted twice.
  const merged = pullsFor(ctx, n).find((p) => p.state === "merged");
  if (!issue || issue.state === "closed") {
    if (!merged)
      return {
        ok: false,
        message: `Nothing to roll back for #${n}: it is not an open task, and Autopilot sees no merged pull request of it on \`${taskBranch(ctx, n)}\` among the recently closed ones.`,
      };
    return revertMerged(ctx, n, merged, actor);
  }
  const status = statusOf(ctx, n);
  if (status === null)
    return { ok: false, message: epicRefusal(ctx, n)?.concat(".") ?? `#${n} is not an Autopilot task.` };
  // Work of the task that merged and was not reverted yet is on the default branch whatever the task's status
  // now (a revert PR closed unmerged left it failed, a retry put it back in the queue): it is reverted.
  if (merged) return revertMerged(ctx, n, merged, actor);
  return discardUnmerged(ctx, n, actor);
}

/** The request for GitHub's revert of the task's merged PR (asked again while no revert PR is visible). */
function revertPullEffect(n: number, merged: number, title: string | null, actor: string): Effect {
  return {
    type: "revertPull",
    pr: merged,
    issue: n,
    title: truncate(`Revert #${merged}${title ? `: ${title}` : ""}`, 250),
    body: [
      `Reverts #${merged}, the work of #${n}, as ${quietLogin(actor)} asked with \`/autopilot rollback #${n}\`.`,
      "",
      `This pull request passes the same gates as any task's; once it merges, #${n} goes back to the queue and a new worker starts it from the default branch.`,
    ].join("\n"),
  };
}

/** Asks for the effect unless this reconcile already did. */
function pushOnce(ctx: Reconciling, effect: Effect): void {
  const same = JSON.stringify(effect);
  if (!ctx.effects.some((e) => JSON.stringify(e) === same)) ctx.effects.push(effect);
}

/** Asks GitHub for the revert PR; the task waits in review on it (reviews.ts). */
function revertMerged(ctx: Reconciling, n: number, merged: PullNode, actor: string): TaskCommandOutcome {
  const branch = revertBranchName(ctx.config.branchPrefix, n, merged.number);
  // A worker redoing the task, or its PR, would go on from work that is being taken out.
  for (const run of liveRunsOf(ctx, n)) cancelRun(ctx, run, n, "rolled back");
  for (const pr of pullsFor(ctx, n).filter((p) => p.state === "open"))
    ctx.effects.push({ type: "closePull", pr: pr.number, issue: n });
  ctx.effects.push(revertPullEffect(n, merged.number, merged.title, actor));
  if (ctx.issues.get(n)?.state !== "open") ctx.effects.push({ type: "reopenIssue", issue: n });
  const r = taskRecord(ctx, n);
  r.rollback = { merged: merged.number, at: ctx.now.toISOString(), by: actor.slice(0, 40) };
  r.pr = undefined;
  r.merge = undefined;
  r.feedbackRounds = 0;
  r.feedbackSha = undefined;
  r.notices = undefined;
  r.waitUntil = undefined;
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

/**
 * No revert PR is visible yet: GitHub is asked again, every reconcile (a request deferred by the operation
 * budget, held by a pause, or failed would otherwise never be made). Idempotent: the executor skips it when the
 * snapshot shows Autopilot's revert of the PR (src/github/execution/task-recovery.ts `recoveryAlreadyDone`).
 */
export function askRevertAgain(ctx: Reconciling, n: number): void {
  const rollback = ctx.state.tasks[n]?.rollback;
  if (!rollback) return;
  const merged = ctx.pullsByRef.get(taskBranch(ctx, n))?.find((p) => p.number === rollback.merged);
  pushOnce(ctx, revertPullEffect(n, rollback.merged, merged?.title ?? null, rollback.by ?? "a writer"));
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
  // Held back from dispatch until the branch is seen gone (processDiscards).
  r.discard = ctx.now.toISOString();
  // The human-gate rules that fired were about the PR thrown away; the next PR's diff is judged afresh.
  r.gate = undefined;
  note(ctx, `#${n}: rollback by ${actor}: ${open.length} PR(s) closed, ${branch} deleted`);
  const closed = open.length > 0 ? `closed ${open.map((p) => `#${p.number}`).join(", ")}, ` : "";
  return {
    ok: true,
    message: `Rolled back #${n}: ${closed}deleted \`${branch}\`. It is ready again; the next worker starts from the default branch.`,
  };
}

/**
 * The tasks whose unmerged work a rollback threw away: their open PRs are closed and their branch deleted again
 * every reconcile until the snapshot shows the branch gone, and no worker starts before (the worker resumes a
 * task branch that exists: src/worker/checkout/private-git.ts). The snapshot reads each such branch
 * (`branchExists`, from `discardedBranches`); when that read gave no answer, a closed PR on the branch tells
 * (`headBranchExists`), and with no PR on it nothing can, so the deletion is asked for SETTLE_MINUTES and then
 * taken as done.
 */
export function processDiscards(ctx: Reconciling): void {
  for (const [key, record] of Object.entries(ctx.state.tasks)) {
    if (!record.discard) continue;
    const n = Number(key);
    // A follow-up's issue is still being opened again (closed-issues.ts): its branch is deleted meanwhile.
    if (ctx.issues.get(n)?.state !== "open" && !record.followUp) {
      record.discard = undefined;
      continue;
    }
    const branch = taskBranch(ctx, n);
    const own = (ctx.pullsByRef.get(branch) ?? []).filter((p) => p.isCrossRepository !== true);
    const open = pullsFor(ctx, n).filter((p) => p.state === "open");
    for (const pr of open) pushOnce(ctx, { type: "closePull", pr: pr.number, issue: n });
    const exists = ctx.snapshot.branchExists?.[branch];
    const stillOpen = own.some((p) => p.state === "open");
    const seenGone =
      !stillOpen &&
      (exists === false || (exists === undefined && own.some((p) => p.headBranchExists === false)));
    const unknowable =
      exists === undefined &&
      own.length === 0 &&
      ctx.nowMs - Date.parse(record.discard) >= SETTLE_MINUTES * 60_000;
    if (seenGone || unknowable) {
      record.discard = undefined;
      note(
        ctx,
        `#${n}: ${branch} ${seenGone ? "is gone" : "deleted (asked for long enough)"}; the task may start again`,
      );
      continue;
    }
    pushOnce(ctx, { type: "deleteBranch", branch });
  }
}

/** The task branches processDiscards waits to see gone, for the snapshot to read (src/github/gateway.ts). */
export function discardedBranches(world: WorldSnapshot, branchPrefix: string): string[] {
  const tasks = parseDashboard(world.trackingIssue?.body ?? "").state?.tasks ?? {};
  const open = new Set(world.issues.filter((i) => i.state === "open").map((i) => i.number));
  return Object.entries(tasks)
    .filter(([n, r]) => r.discard && open.has(Number(n)))
    .map(([n]) => taskBranchName(branchPrefix, Number(n)));
}

/** The revert PR merged: the task's work is gone from the default branch, so it goes back to the queue. */
export function rollbackMerged(ctx: Reconciling, n: number, revert: PullNode): void {
  const record = taskRecord(ctx, n);
  const reverted = record.rollback?.merged;
  record.rollback = undefined;
  record.gate = undefined;
  // The reverted PR stays merged on the task branch: it is not the task's PR any more (task-pulls.ts).
  if (reverted) dropPull(record, reverted);
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

/**
 * The revert PR was closed without merging: the task fails (its work is still merged, so a new
 * `/autopilot rollback` reverts it again), and the revert branch is deleted so that GitHub's next revert of the
 * same PR gets its branch name.
 */
export function rollbackAbandoned(ctx: Reconciling, n: number, revert: PullNode): void {
  const record = taskRecord(ctx, n);
  dropPull(record, revert.number);
  if (revert.headBranchExists !== false) ctx.effects.push({ type: "deleteBranch", branch: revert.headRef });
  record.reason = `the revert PR #${revert.number} was closed without merging`;
  record.since = ctx.now.toISOString();
  record.rollback = undefined;
  setStatus(ctx, n, "failed");
  note(ctx, `#${n}: revert PR #${revert.number} closed unmerged → failed`);
}

function dropPull(record: TaskRecord, pr: number): void {
  const dropped = record.dropped ?? [];
  if (!dropped.includes(pr)) record.dropped = [...dropped, pr].slice(-20);
}
