/**
 * Comments the snapshot's `comments(last: N)` windows did not reach, fetched only when something depends on
 * them, so that no worker result, command or answer is lost however many comments follow it:
 *
 * - the result comment of a task whose result the decisions wait for (a dispatch not acted on yet, or a live
 *   run), when the dashboard state keeps its node id (the worker edits that one comment in place from its
 *   first attempt on, so later discussion buries it): all such comments in one `nodes(ids:)` request;
 * - such a task's result when it is neither in its window nor known by id (state lost or rebuilt, or a
 *   controller upgraded): its older comments, walking back a page of 100 at a time until Autopilot's own
 *   result comment turns up;
 * - an issue (a task or the tracking issue) whose window starts after the state's command cursor (or, when
 *   no comment was processed yet, after the state began): older comments walking back until the cursor, so
 *   commands and answers posted in a burst are all read.
 *
 * Each walk stops after MAX_PAGES_PER_ISSUE pages. An idle repository, and any issue whose window holds all
 * that matters, costs nothing here.
 */
import type { SnapshotContext } from "./snapshot-context.js";
import { compact, type GqlComment, type GqlCommentWindow } from "./snapshot-response.js";
import { COMMENTS_BY_ID_QUERY, OLDER_COMMENTS_QUERY } from "../queries.js";

/** Pages of 100 read back per issue and reconcile at most. */
const MAX_PAGES_PER_ISSUE = 10;

export interface CommentWindowRead {
  issue: number;
  window: GqlCommentWindow | null | undefined;
}

interface BuriedCommentNeeds {
  /** The newest comment the dashboard state has processed (its database id); null when none is known. */
  cursorId: number | null;
  /**
   * Without a cursor, when the state began (the tracking issue's creation): no comment after it has been
   * processed yet. Null when there is no state either (nothing is read back then).
   */
  stateSince: string | null;
  /** Node id of each task's result comment, from the dashboard state, by issue number. */
  resultComments: ReadonlyMap<number, string>;
  /**
   * Whether the decisions wait for the issue's worker result: a dispatch not acted on yet, or a live run (a
   * result already acted on is not needed again, so a settled task with a long discussion costs nothing).
   */
  expectsResult: (issue: number) => boolean;
  /** Whether a comment is Autopilot's own worker result for that issue. */
  isResult: (comment: GqlComment, issue: number) => boolean;
}

interface BuriedComment {
  issue: number;
  comment: GqlComment;
}

interface ByIdAnswer {
  nodes: ({ __typename?: string; issue?: { number: number } | null } & GqlComment)[] | null;
}

interface OlderAnswer {
  repository: { issue: { comments: GqlCommentWindow | null } | null } | null;
}

/**
 * `graphql` answers a query, accepting partial data when every error is NOT_FOUND: a result comment deleted
 * since its id was kept is a null node (its task's older comments are read instead), not a failed snapshot.
 */
export async function fetchBuriedComments(
  ctx: Pick<SnapshotContext, "repo" | "log">,
  graphql: (query: string, variables: Record<string, unknown>) => Promise<unknown>,
  windows: readonly CommentWindowRead[],
  needs: BuriedCommentNeeds,
): Promise<BuriedComment[]> {
  const found: BuriedComment[] = [];
  const readIds = new Set<string>();
  const resultSeen = new Set<number>();
  for (const { issue, window } of windows) {
    for (const c of compact(window?.nodes)) {
      if (c.id) readIds.add(c.id);
      if (needs.isResult(c, issue)) resultSeen.add(issue);
    }
  }

  // Result comments known by id and not in their issue's window: one request for all of them.
  const open = new Set(windows.map((w) => w.issue));
  const wanted = [...needs.resultComments].filter(
    ([issue, id]) => open.has(issue) && !readIds.has(id) && needs.expectsResult(issue),
  );
  for (let i = 0; i < wanted.length; i += 100) {
    const chunk = wanted.slice(i, i + 100);
    const data = (await graphql(COMMENTS_BY_ID_QUERY, { ids: chunk.map(([, id]) => id) })) as ByIdAnswer;
    for (const node of compact(data.nodes)) {
      const issue = node.issue?.number;
      if (node.__typename !== "IssueComment" || issue === undefined) continue;
      found.push({ issue, comment: node });
      if (needs.isResult(node, issue)) resultSeen.add(issue);
    }
  }

  for (const { issue, window } of windows) {
    const read = compact(window?.nodes);
    let before = window?.pageInfo?.hasPreviousPage ? window.pageInfo.startCursor : null;
    if (!before) continue;
    let needCursor = read.length > 0 && read.every((c) => !processedBefore(c, needs));
    let needResult = needs.expectsResult(issue) && !resultSeen.has(issue);
    let pages = 0;
    while (before && (needCursor || needResult) && pages < MAX_PAGES_PER_ISSUE) {
      pages++;
      const data = (await graphql(OLDER_COMMENTS_QUERY, {
        owner: ctx.repo.owner,
        name: ctx.repo.name,
        number: issue,
        before,
      })) as OlderAnswer;
      const page = data.repository?.issue?.comments;
      for (const c of compact(page?.nodes)) {
        found.push({ issue, comment: c });
        if (processedBefore(c, needs)) needCursor = false;
        if (needs.isResult(c, issue)) needResult = false;
      }
      before = page?.pageInfo?.hasPreviousPage ? page.pageInfo.startCursor : null;
    }
    if (before && (needCursor || needResult)) {
      ctx.log.warn(
        `#${issue}: read ${pages * 100} older comments without reaching ${needCursor ? "the command cursor" : "the worker's result"}; older comments are not read`,
      );
    }
  }
  return found;
}

/** Whether a comment is at or before the command cursor (or, without one, older than the state). */
function processedBefore(c: GqlComment, needs: BuriedCommentNeeds): boolean {
  if (needs.cursorId !== null) return c.databaseId !== null && c.databaseId <= needs.cursorId;
  if (needs.stateSince === null) return true;
  return c.createdAt < needs.stateSince;
}
