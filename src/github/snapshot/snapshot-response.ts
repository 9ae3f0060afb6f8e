/** The shapes of GitHub's answers to the snapshot queries (src/github/queries.ts), only what is read. */

export interface Login {
  login?: string | null;
  __typename?: string;
  /** Served for bots (`... on Bot { databaseId }`): compared with the viewer's account id. */
  databaseId?: number | null;
}
/** A comment connection read from its end (`comments(last: N)`): older comments lie before `startCursor`. */
export interface GqlCommentWindow {
  pageInfo?: { hasPreviousPage: boolean; startCursor: string | null } | null;
  nodes: (GqlComment | null)[] | null;
}
export interface Named {
  name: string;
}
/** A label as the pool's issues and pulls carry it: its node id is what a label mutation takes. */
export interface GqlLabel extends Named {
  id?: string;
}
export interface GqlComment {
  /** The comment's node id (what `nodes(ids:)` finds it by). */
  id?: string;
  databaseId: number | null;
  body: string;
  createdAt: string;
  updatedAt: string;
  viewerDidAuthor?: boolean;
  author: Login | null;
  reactionGroups?: { content: string; viewerHasReacted: boolean }[] | null;
}
export interface GqlTracking {
  id: string;
  number: number;
  title: string;
  body: string;
  state: string;
  createdAt?: string;
  updatedAt: string;
  isPinned?: boolean | null;
  lastEditedAt?: string | null;
  editor?: Login | null;
  viewerDidAuthor?: boolean;
  author?: Login | null;
  comments?: GqlCommentWindow | null;
}
export interface GqlIssue {
  id?: string;
  number: number;
  title: string;
  body?: string;
  state: string;
  stateReason?: string | null;
  createdAt: string;
  updatedAt?: string;
  closedAt?: string | null;
  author?: Login | null;
  labels?: { nodes: (GqlLabel | null)[] | null } | null;
  parent?: { number: number; state?: string; title?: string } | null;
  subIssues?: {
    nodes:
      | ({
          number: number;
          state: string;
          title: string;
          createdAt?: string;
          repository?: { nameWithOwner: string } | null;
        } | null)[]
      | null;
  } | null;
  blockedBy?: { nodes: ({ number: number; state: string; title: string } | null)[] | null } | null;
  timelineItems?: {
    nodes: ({ createdAt?: string; actor?: Login | null; label?: Named | null } | null)[] | null;
  } | null;
  renames?: { nodes: ({ createdAt?: string; actor?: Login | null } | null)[] | null } | null;
  lastEditedAt?: string | null;
  editor?: Login | null;
  userContentEdits?: { nodes: ({ editedAt: string; editor?: Login | null } | null)[] | null } | null;
  comments?: GqlCommentWindow | null;
}
export interface GqlContext {
  __typename: string;
  name?: string;
  status?: string;
  conclusion?: string | null;
  summary?: string | null;
  detailsUrl?: string | null;
  checkSuite?: { app?: { slug?: string } | null } | null;
  context?: string;
  state?: string;
  description?: string | null;
  targetUrl?: string | null;
}
export interface GqlPull {
  id?: string;
  number: number;
  title: string;
  body?: string;
  state: string;
  isDraft?: boolean;
  createdAt: string;
  headRefName: string;
  headRefOid: string;
  /** Asked of closed and merged pulls only: null once the head branch is deleted. */
  headRef?: { name: string } | null;
  baseRefName: string;
  baseRefOid?: string | null;
  mergeable?: string;
  mergeStateStatus?: string | null;
  autoMergeRequest?: { mergeMethod?: string | null; enabledBy?: { login: string } | null } | null;
  mergeQueueEntry?: { position?: number | null; state?: string | null } | null;
  isCrossRepository?: boolean;
  headRepository?: { nameWithOwner: string } | null;
  author?: (Login & { databaseId?: number | null }) | null;
  labels?: { nodes: (GqlLabel | null)[] | null } | null;
  commits?: {
    nodes:
      | ({
          commit: {
            oid: string;
            committedDate?: string;
            statusCheckRollup?: { state: string; contexts: { nodes: (GqlContext | null)[] | null } } | null;
          };
        } | null)[]
      | null;
  } | null;
  reviews?: {
    nodes:
      | ({
          author: Login | null;
          state: string;
          submittedAt: string | null;
          body: string;
          commit?: { oid: string } | null;
        } | null)[]
      | null;
  } | null;
  reviewThreads?: {
    nodes:
      | ({
          isResolved: boolean;
          comments: {
            nodes: (ReviewComment | null)[] | null;
          };
        } | null)[]
      | null;
  } | null;
  /** An open pull's newest comments (a few fields), a closed one's (every field of `GqlComment`). */
  comments?: {
    nodes: (PullComment | null)[] | null;
  } | null;
}
/** A line comment of a pull-request review (its id is from the review comments' sequence, not the issue comments'). */
type ReviewComment = Pick<GqlComment, "author" | "body" | "createdAt"> &
  Partial<Pick<GqlComment, "databaseId" | "viewerDidAuthor" | "reactionGroups">> & { path: string };
type PullComment = Pick<GqlComment, "author" | "body" | "createdAt"> &
  Partial<Omit<GqlComment, "author" | "body" | "createdAt">>;
export interface Page<T> {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: (T | null)[] | null;
}
export interface SnapshotResponse {
  rateLimit?: { cost: number; remaining: number; resetAt: string } | null;
  viewer?: { databaseId?: number | null; login?: string } | null;
  repository: {
    id?: string;
    defaultBranchRef?: { name: string; target?: { oid?: string } | null } | null;
    owner?: { __typename: string; login: string } | null;
    configFile?: { text?: string | null } | null;
    dispatchLocks?: {
      pageInfo?: { hasNextPage: boolean } | null;
      nodes: ({ name: string } | null)[] | null;
    } | null;
    taskBranches?: {
      pageInfo?: { hasNextPage: boolean } | null;
      nodes: ({ name: string; target?: { oid?: string } | null } | null)[] | null;
    } | null;
    pinnedIssues?: { nodes: ({ issue: GqlTracking | null } | null)[] | null } | null;
    trackingByBot?: { nodes: (GqlTracking | null)[] | null } | null;
    trackingIssue?: GqlTracking | null;
    issues?: (Page<GqlIssue> & { totalCount?: number }) | null;
    recentlyClosed?: { nodes: (GqlIssue | null)[] | null } | null;
    pullRequests?: Page<GqlPull> | null;
    recentPulls?: { nodes: (GqlPull | null)[] | null } | null;
    /** Closed issues updated last, with their newest comments (a command on a merged task's issue). */
    recentlyCommentedClosed?: { nodes: (GqlIssue | null)[] | null } | null;
    /** Open issues updated last, with their labels and newest comments (a command on a skipped task's issue). */
    recentlyCommentedOpen?: { nodes: (GqlIssue | null)[] | null } | null;
  } | null;
}

/** A GraphQL list's nodes without the nulls GitHub puts in place of what the token cannot see. */
export function compact<T>(list: (T | null | undefined)[] | null | undefined): T[] {
  return (list ?? []).filter((x): x is T => x !== null && x !== undefined);
}
