/**
 * GitHub's own ways to merge, used when GitHub refused Autopilot's merge of a head every Autopilot gate passed
 * (src/core/gates/merge-refusal.ts `mergeMechanismFor`): auto-merge, the merge queue, updating a branch that must be
 * up to date. Each is pinned to that head (`expectedHeadOid`, `expected_head_sha`), so GitHub never merges a
 * commit Autopilot has not approved; a head that changes later is taken back by `withdrawMerge`.
 *
 * Every answer is tolerated: when GitHub refuses the mechanism too (auto-merge not allowed on the repository,
 * "clean status", no queue, no node id to name the PR by), the caller explains and waits as before, with advice
 * that says what to change.
 *
 * https://docs.github.com/en/graphql/reference/mutations#enablepullrequestautomerge
 * https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest
 * https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request-branch
 */
import type { Effect } from "../../core/effects.js";
import type { MergeMechanism, PullNode, WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { isOutage, refusalWords } from "../transport/errors.js";
import {
  DEQUEUE_PULL_REQUEST_MUTATION,
  DISABLE_AUTO_MERGE_MUTATION,
  ENABLE_AUTO_MERGE_MUTATION,
  ENQUEUE_PULL_REQUEST_MUTATION,
} from "../queries.js";

type MergeEffect = Extract<Effect, { type: "mergePr" }>;

/** What these calls need of the executor's context (src/github/execution/executor.ts `ExecContext`). */
interface MechanismContext {
  client: OctokitSurface;
  repo: RepoRef;
  log: GatewayLog;
  world: WorldSnapshot | null;
  write: <T>(call: () => Promise<T>) => Promise<T>;
}

/** Hands the approved head to GitHub's mechanism: null when GitHub took it, else GitHub's refusal. */
export async function handToGitHub(
  ctx: MechanismContext,
  effect: MergeEffect,
  via: MergeMechanism,
  pull: PullNode | null,
): Promise<string | null> {
  const o = { owner: ctx.repo.owner, repo: ctx.repo.name };
  try {
    if (via === "update-branch") {
      await ctx.write(() =>
        ctx.client.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch", {
          ...o,
          pull_number: effect.pr,
          expected_head_sha: effect.expectedHeadSha,
        }),
      );
      return null;
    }
    // Already on (turned on for an earlier refusal of this PR): GitHub merges the head, which every gate passes.
    if (via === "auto-merge" && pull?.autoMerge) return null;
    if (via === "queue" && pull?.mergeQueue) return null;
    const pullRequestId = pull?.nodeId;
    if (!pullRequestId) return "no node id for the pull request";
    // Only an answer that shows the entry or the auto-merge request counts: a null payload is no promise.
    if (via === "queue") {
      const answer = (await ctx.write(() =>
        ctx.client.graphql(ENQUEUE_PULL_REQUEST_MUTATION, {
          pullRequestId,
          expectedHeadOid: effect.expectedHeadSha,
        }),
      )) as { enqueuePullRequest?: { mergeQueueEntry?: unknown } | null } | null;
      return answer?.enqueuePullRequest?.mergeQueueEntry
        ? null
        : "GitHub did not confirm a merge-queue entry";
    }
    const answer = (await ctx.write(() =>
      ctx.client.graphql(ENABLE_AUTO_MERGE_MUTATION, {
        pullRequestId,
        mergeMethod: effect.method.toUpperCase(),
        expectedHeadOid: effect.expectedHeadSha,
      }),
    )) as {
      enablePullRequestAutoMerge?: { pullRequest?: { autoMergeRequest?: unknown } | null } | null;
    } | null;
    return answer?.enablePullRequestAutoMerge?.pullRequest?.autoMergeRequest
      ? null
      : "GitHub did not confirm auto-merge";
  } catch (error) {
    // GitHub not answering, or a rate limit (the gateway pauses the repository's writes): not a refusal.
    if (isOutage(error)) throw error;
    const words = refusalWords(error);
    ctx.log.warn(`GitHub refused to ${via} PR #${effect.pr}: ${words}`);
    return words;
  }
}

/** Turns auto-merge off, or takes the PR out of the merge queue; already off or out is fine. */
export async function withdrawMerge(
  ctx: MechanismContext,
  effect: Extract<Effect, { type: "withdrawMerge" }>,
): Promise<{ effect: Effect; status: "done" | "failed"; detail?: string }> {
  const pull = ctx.world?.pulls.find((p) => p.number === effect.pr) ?? null;
  const nodeId = pull?.nodeId;
  if (!nodeId) return { effect, status: "failed", detail: "no node id for the pull request" };
  try {
    if (effect.what === "queue") {
      await ctx.write(() => ctx.client.graphql(DEQUEUE_PULL_REQUEST_MUTATION, { id: nodeId }));
    } else {
      await ctx.write(() => ctx.client.graphql(DISABLE_AUTO_MERGE_MUTATION, { pullRequestId: nodeId }));
    }
    return { effect, status: "done" };
  } catch (error) {
    if (isOutage(error)) throw error;
    // GitHub says no (already off, not in the queue, merged meanwhile): the next snapshot shows where it stands.
    return { effect, status: "failed", detail: refusalWords(error) };
  }
}
