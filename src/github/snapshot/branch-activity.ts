/**
 * GitHub's record of who moved a task branch, for the stale-branch sweep (src/core/reconcile/pulls/stale-branches.ts):
 * "List repository activities" (https://docs.github.com/rest/repos/repos#list-repository-activities), one page
 * of 100 per branch, newest first. The actor is the account whose token pushed, by account id; a branch with
 * more moves than one page is reported incomplete (and kept). A read GitHub refuses leaves the branch unread
 * (kept too).
 */
import { isOutage } from "../transport/errors.js";
import type { BranchActivity } from "../../core/world.js";
import type { OctokitSurface, RepoRef } from "../transport/octokit-surface.js";

const PAGE = 100;

export async function readBranchActivity(
  ctx: { client: OctokitSurface; repo: RepoRef; read: <T>(call: () => Promise<T>) => Promise<T> },
  branches: readonly string[],
): Promise<Record<string, BranchActivity>> {
  const out: Record<string, BranchActivity> = {};
  for (const branch of branches) {
    try {
      const { data } = await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/activity", {
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          ref: `refs/heads/${branch}`,
          direction: "desc",
          per_page: PAGE,
        }),
      );
      const rows = data as { timestamp: string; activity_type: string; actor: { id?: number } | null }[];
      out[branch] = {
        entries: rows.map((r) => ({ actorId: r.actor?.id ?? null, at: r.timestamp, type: r.activity_type })),
        complete: rows.length < PAGE,
      };
    } catch (error) {
      if (isOutage(error)) throw error;
    }
  }
  return out;
}
