/**
 * The writes of `/autopilot rollback` and `cleanup` (src/core/reconcile/commands/rollback.ts, branch-cleanup.ts): a
 * task's PR closed unmerged, its issue opened again, and GitHub's revert of a merged PR
 * (https://docs.github.com/en/graphql/reference/mutations#revertpullrequest). Each is safe to repeat.
 */
import { issueOfRevertBranch } from "../../core/contract.js";
import type { Effect } from "../../core/effects.js";
import type { WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { isOutage, refusalWords, statusOf } from "../transport/errors.js";
import { REVERT_PULL_REQUEST_MUTATION } from "../queries.js";

type RecoveryEffect = Extract<Effect, { type: "closePull" | "reopenIssue" | "revertPull" }>;

interface RecoveryContext {
  client: OctokitSurface;
  repo: RepoRef;
  log: GatewayLog;
  world: WorldSnapshot | null;
  botId?: number | null;
  branchPrefix: string;
  write: <T>(call: () => Promise<T>) => Promise<T>;
  read: <T>(call: () => Promise<T>) => Promise<T>;
}

/** Effects the snapshot already shows done (no request). */
export function recoveryAlreadyDone(
  world: WorldSnapshot | null,
  branchPrefix: string,
  effect: RecoveryEffect,
): string | null {
  switch (effect.type) {
    case "closePull": {
      const pr = world?.pulls.find((p) => p.number === effect.pr);
      return pr && pr.state !== "open" ? `PR #${effect.pr} is already ${pr.state}` : null;
    }
    case "reopenIssue": {
      const issue = world?.issues.find((i) => i.number === effect.issue);
      return issue?.state === "open" ? "already open" : null;
    }
    case "revertPull": {
      // Only Autopilot's own revert counts (its account id): a person's branch of the same name proves nothing.
      const existing = world?.pulls.find(
        (p) =>
          issueOfRevertBranch(branchPrefix, p.headRef)?.pr === effect.pr &&
          p.state !== "closed" &&
          (world.botId === undefined || (p.authorId != null && p.authorId === world.botId)),
      );
      return existing ? `PR #${existing.number} already reverts PR #${effect.pr}` : null;
    }
  }
}

export async function executeRecovery(
  ctx: RecoveryContext,
  effect: RecoveryEffect,
): Promise<{ effect: Effect; status: "done" | "skipped" | "failed"; detail?: string }> {
  const o = { owner: ctx.repo.owner, repo: ctx.repo.name };
  try {
    switch (effect.type) {
      case "closePull":
        await ctx.write(() =>
          ctx.client.request("PATCH /repos/{owner}/{repo}/pulls/{pull_number}", {
            ...o,
            pull_number: effect.pr,
            state: "closed",
          }),
        );
        return { effect, status: "done" };
      case "reopenIssue":
        await ctx.write(() =>
          ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
            ...o,
            issue_number: effect.issue,
            state: "open",
          }),
        );
        return { effect, status: "done" };
      case "revertPull": {
        // The mutation names the PR by its node id; the closed PRs the snapshot reads do not carry it.
        const known = ctx.world?.pulls.find((p) => p.number === effect.pr)?.nodeId;
        const nodeId =
          known ??
          (
            (
              await ctx.read(() =>
                ctx.client.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
                  ...o,
                  pull_number: effect.pr,
                }),
              )
            ).data as { node_id: string }
          ).node_id;
        const answer = (await ctx.write(() =>
          ctx.client.graphql(REVERT_PULL_REQUEST_MUTATION, {
            pullRequestId: nodeId,
            title: effect.title,
            body: effect.body,
          }),
        )) as { revertPullRequest?: { revertPullRequest?: { number?: number } | null } | null };
        const number = answer.revertPullRequest?.revertPullRequest?.number;
        ctx.log.info(`PR #${number ?? "?"} reverts PR #${effect.pr} for #${effect.issue}`);
        return { effect, status: "done", detail: number ? `revert PR #${number}` : undefined };
      }
    }
  } catch (error) {
    if (isOutage(error)) throw error;
    const status = statusOf(error);
    if (effect.type === "closePull" && (status === 404 || status === 422))
      return { effect, status: "skipped", detail: "PR already closed or gone" };
    // GitHub says no (not merged, a conflict, no permission): the task waits in review with the line saying so.
    return { effect, status: "failed", detail: refusalWords(error) };
  }
}
