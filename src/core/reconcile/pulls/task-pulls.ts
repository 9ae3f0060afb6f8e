/** A task's pull requests: only the ones the App opened on the task branch of this repository count. */
import { ignoredPullMessage, partitionPulls } from "../../gates/pull-trust.js";
import { revertBranchName } from "../../contract.js";
import type { PullNode } from "../../world.js";
import { note, type Reconciling, taskBranch } from "../context.js";
import { incident } from "../messages.js";

/**
 * The task's PRs, newest first; every other PR on its branch is reported once. While a rollback of the task
 * is under way (src/core/reconcile/commands/rollback.ts) its PR is GitHub's revert PR, on `revert-<PR>-<task branch>`.
 * The PRs the task dropped (its record's `dropped`: a merged PR since reverted, a revert closed unmerged) are
 * left out.
 */
export function pullsFor(ctx: Reconciling, n: number): PullNode[] {
  // A PR number a worker reported proves nothing: the branch and the PR's author and repository decide.
  const record = ctx.state.tasks[n];
  const rollback = record?.rollback;
  const branch = rollback
    ? revertBranchName(ctx.config.branchPrefix, n, rollback.merged)
    : taskBranch(ctx, n);
  const { trusted, ignored } = partitionPulls(ctx.pullsByRef.get(branch) ?? [], {
    repo: ctx.snapshot.repo,
    branch,
    botId: ctx.snapshot.botId,
  });
  for (const x of ignored) {
    if (ctx.state.ignoredPulls.includes(x.pull.number)) continue;
    ctx.state.ignoredPulls = [...ctx.state.ignoredPulls, x.pull.number].slice(-100);
    incident(ctx, "ignored_pull", ignoredPullMessage(x));
    note(ctx, `#${n}: ${ignoredPullMessage(x)}`);
  }
  // A merged PR whose revert merged, or a revert closed unmerged, stays on the branch but is not the task's.
  const dropped = record?.dropped;
  return dropped?.length ? trusted.filter((p) => !dropped.includes(p.number)) : trusted;
}
