/**
 * GitHub's record of who moved a task branch, for the stale-branch sweep (src/core/reconcile/pulls/stale-branches.ts):
 * "List repository activities" (https://docs.github.com/rest/repos/repos#list-repository-activities), one page
 * of 100 per branch, newest first. The actor is the account whose token pushed, by account id; a branch with
 * more moves than one page is reported incomplete (and kept). A read GitHub refuses leaves the branch unread
 * (kept too).
 *
 * Only branches the snapshot listed are read, and a record is kept per branch with the commit the branch was at:
 * while the branch stays there nobody pushed to it, so the record is reused instead of read again. An idle
 * repository therefore reads nothing here once each ended task's branch has been read once.
 */
import { isOutage } from "../transport/errors.js";
import type { BranchActivity } from "../../core/world.js";
import type { OctokitSurface, RepoRef } from "../transport/octokit-surface.js";

const PAGE = 100;

/** The most records one reconcile reads (the others wait for the next reconcile). */
const READS_PER_RECONCILE = 10;

export async function readBranchActivity(
  ctx: { client: OctokitSurface; repo: RepoRef; read: <T>(call: () => Promise<T>) => Promise<T> },
  branches: readonly { branch: string; oid: string }[],
  known: Map<string, { oid: string; activity: BranchActivity }>,
): Promise<Record<string, BranchActivity>> {
  const out: Record<string, BranchActivity> = {};
  const listed = new Set(branches.map((b) => b.branch));
  for (const branch of [...known.keys()]) if (!listed.has(branch)) known.delete(branch);
  let reads = 0;
  for (const { branch, oid } of branches) {
    const kept = known.get(branch);
    if (kept && kept.oid === oid) {
      out[branch] = kept.activity;
      continue;
    }
    if (reads >= READS_PER_RECONCILE) continue;
    reads++;
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
      const rows = data as {
        timestamp: string;
        activity_type: string;
        after?: string;
        actor: { id?: number } | null;
      }[];
      const activity: BranchActivity = {
        entries: rows.map((r) => ({ actorId: r.actor?.id ?? null, at: r.timestamp, type: r.activity_type })),
        complete: rows.length < PAGE,
      };
      out[branch] = activity;
      // Kept only when the record ends at the listed commit (a push since the listing is read again next time).
      if (oid && rows[0]?.after === oid) known.set(branch, { oid, activity });
    } catch (error) {
      if (isOutage(error)) throw error;
    }
  }
  return out;
}
