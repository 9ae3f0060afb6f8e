/**
 * When, and by whom, each sub-issue of an epic about to pool was linked to it: the parent's `SubIssueAddedEvent`s
 * (https://docs.github.com/en/graphql/reference/objects#subissueaddedevent). An epic's ready label approves only
 * the sub-issues linked before it, or linked since by a writer (src/core/tasks/sub-issue-links.ts).
 *
 * Read only for a parent whose pooling the decisions may do now: open, labeled ready by someone other than
 * Autopilot, with sub-issues, and no epic in the dashboard state pooled for this label yet (the core pools once
 * per label). All such parents in one request (the newest 100 link events of each): none on the reconciles
 * between, so an epic costs one request when its label is new. A link not read (a failed read, a server without
 * the event type, more than 100 newer links) stays unknown, and the core does not pool that sub-issue.
 */
import type { DashboardState } from "../../core/dashboard/index.js";
import type { IssueNode, SubIssueLink } from "../../core/world.js";
import { subIssueLinksQuery } from "../queries.js";
import type { SnapshotContext } from "./snapshot-context.js";
import { compact } from "./snapshot-response.js";

/** Parents per request (aliases of one query). */
const PARENTS_PER_QUERY = 50;

interface LinksResponse {
  repository: Record<
    string,
    {
      timelineItems?: {
        nodes?:
          | ({
              createdAt?: string;
              actor?: { login: string } | null;
              subIssue?: { number: number; repository?: { nameWithOwner: string } | null } | null;
            } | null)[]
          | null;
      } | null;
    } | null
  > | null;
}

/** The parents whose pooling may happen in this reconcile (see above). */
export function parentsAboutToPool(
  issues: Iterable<IssueNode>,
  options: { readyLabel: string; botLogin: string; epics: DashboardState["epics"] | undefined },
): number[] {
  const out: number[] = [];
  for (const issue of issues) {
    const by = issue.readyLabeledBy ?? null;
    if (issue.state !== "open" || !issue.labels.includes(options.readyLabel)) continue;
    if (!issue.subIssues?.length || !by || by.toLowerCase() === options.botLogin.toLowerCase()) continue;
    const epic = options.epics?.[String(issue.number)];
    const newer = !!epic && !!issue.readyLabeledAt && Date.parse(issue.readyLabeledAt) > Date.parse(epic.at);
    if (!epic || newer) out.push(issue.number);
  }
  return out.sort((a, b) => a - b);
}

/** Each parent's sub-issue links, the newest per sub-issue of this repository; parents not read are left out. */
export async function readSubIssueLinks(
  ctx: Pick<SnapshotContext, "repo" | "log">,
  graphql: (query: string, variables: Record<string, unknown>) => Promise<unknown>,
  parents: readonly number[],
): Promise<Map<number, SubIssueLink[]>> {
  const out = new Map<number, SubIssueLink[]>();
  const here = `${ctx.repo.owner}/${ctx.repo.name}`.toLowerCase();
  for (let i = 0; i < parents.length; i += PARENTS_PER_QUERY) {
    const chunk = parents.slice(i, i + PARENTS_PER_QUERY);
    let data: LinksResponse;
    try {
      data = (await graphql(subIssueLinksQuery(chunk), {
        owner: ctx.repo.owner,
        name: ctx.repo.name,
      })) as LinksResponse;
    } catch (error) {
      // A server that does not know the event type answers with errors: the links stay unknown (nothing is
      // pooled by them), and the rest of the snapshot stands. A failed request fails the snapshot as any read.
      if ((error as { name?: string })?.name !== "GraphqlResponseError") throw error;
      ctx.log.warn(`sub-issue links of ${chunk.map((n) => `#${n}`).join(", ")} not read: ${String(error)}`);
      continue;
    }
    for (const parent of chunk) {
      const node = data.repository?.[`p${parent}`];
      if (!node) continue;
      const newest = new Map<number, SubIssueLink>();
      for (const event of compact(node.timelineItems?.nodes)) {
        const sub = event.subIssue;
        if (!sub || !event.createdAt) continue;
        // A sub-issue of another repository: its number names another issue here (snapshot.ts leaves it out).
        if (sub.repository && sub.repository.nameWithOwner.toLowerCase() !== here) continue;
        const seen = newest.get(sub.number);
        if (!seen || Date.parse(event.createdAt) >= Date.parse(seen.at))
          newest.set(sub.number, { issue: sub.number, at: event.createdAt, by: event.actor?.login ?? null });
      }
      out.set(parent, [...newest.values()]);
    }
  }
  return out;
}
