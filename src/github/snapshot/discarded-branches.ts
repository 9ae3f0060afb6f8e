/**
 * Whether the task branches `/autopilot rollback` of unmerged work is deleting still exist
 * (src/core/reconcile/commands/rollback.ts `processDiscards`): "Get a reference"
 * (https://docs.github.com/en/rest/git/refs#get-a-reference) answers 404 when the ref does not exist. A read GitHub
 * refuses otherwise leaves the branch unknown (the controller then goes on asking for its deletion).
 */
import { isOutage, statusOf } from "../transport/errors.js";
import type { OctokitSurface, RepoRef } from "../transport/octokit-surface.js";

/** Branches read per reconcile; for any others, processDiscards goes by a closed PR on them, else SETTLE_MINUTES. */
export const MAX_DISCARDED_READS = 20;

export async function readDiscardedBranches(
  ctx: { client: OctokitSurface; repo: RepoRef; read: <T>(call: () => Promise<T>) => Promise<T> },
  branches: readonly string[],
): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const branch of branches) {
    try {
      await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          ref: `heads/${branch}`,
        }),
      );
      out[branch] = true;
    } catch (error) {
      if (isOutage(error)) throw error;
      if (statusOf(error) === 404) out[branch] = false;
    }
  }
  return out;
}
