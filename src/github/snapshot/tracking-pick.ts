/** Which issue is the tracking issue, and which open ones of Autopilot's carry its marker beside it. */
import { TRACKING_MARKER } from "../../core/dashboard/index.js";
import { byApp } from "./snapshot-nodes.js";
import { compact, type GqlTracking, type SnapshotResponse } from "./snapshot-response.js";

/**
 * The tracking issue: an issue Autopilot opened that carries the marker (one by anyone else is not), the oldest
 * open one; and the younger open ones beside it (`duplicates`), which a create whose own check for an older
 * issue failed left open (src/github/execution/tracking-issue-effects.ts): they are closed as duplicates
 * (src/core/reconcile/tracking-write.ts). Only the issues the query listed are seen (all of Autopilot's own
 * when it looked for the tracking issue).
 */
export function pickTracking(
  data: SnapshotResponse,
  appId: number | null,
): { tracking: GqlTracking | null; duplicates: number[] } {
  const repo = data.repository;
  if (!repo) return { tracking: null, duplicates: [] };
  const candidates = [
    repo.trackingIssue ?? null,
    ...compact(repo.pinnedIssues?.nodes).map((n) => n.issue),
    ...compact(repo.trackingByBot?.nodes),
  ].filter((c): c is GqlTracking =>
    Boolean(
      c &&
        typeof c.body === "string" &&
        c.body.includes(TRACKING_MARKER) &&
        byApp(c.author, c.viewerDidAuthor, appId),
    ),
  );
  const open = candidates.filter((c) => c.state !== "CLOSED");
  const pool = open.length > 0 ? open : candidates;
  const tracking = pool.sort((a, b) => a.number - b.number)[0] ?? null;
  const duplicates = [
    ...new Set(open.filter((c) => tracking && c.number > tracking.number).map((c) => c.number)),
  ];
  return { tracking, duplicates };
}
