/**
 * The GraphQL documents the gateway sends. Validated against GitHub's published schema
 * (`@octokit/graphql-schema`) in test/github/queries.test.ts; the sandbox answers the same documents.
 */

const COMMENT_FIELDS = `
fragment AutopilotComment on IssueComment {
  id
  databaseId
  body
  createdAt
  updatedAt
  viewerDidAuthor
  author { __typename login ... on Bot { databaseId } }
  reactionGroups { content viewerHasReacted }
}`;

/** An issue outside the pool read for the commands on it: who opened it, and its newest comments. */
const COMMENTED_ISSUE_FIELDS = `
fragment AutopilotCommentedIssue on Issue {
  number
  title
  state
  createdAt
  author { login }
  comments(last: 5) { nodes { ...AutopilotComment } }
}`;

const TRACKING_FIELDS = `
fragment AutopilotTracking on Issue {
  id
  number
  title
  body
  state
  createdAt
  updatedAt
  isPinned
  lastEditedAt
  editor { login }
  viewerDidAuthor
  author { __typename login ... on Bot { databaseId } }
  comments(last: 30) { pageInfo { hasPreviousPage startCursor } nodes { ...AutopilotComment } }
}`;

/**
 * GitHub's native "blocked by" relations. Served by github.com's GraphQL API but not yet described by the
 * published schema package (the sandbox adds it the same way); servers without it get the query without it.
 */
const BLOCKED_BY_FIELD = "blockedBy(first: 20) { nodes { number state title } }";

const poolIssueFields = (blockedBy: boolean) => `
fragment AutopilotIssue on Issue {
  id
  number
  title
  body
  state
  stateReason
  createdAt
  updatedAt
  closedAt
  author { login }
  labels(first: 30) { nodes { id name } }
  parent { number state title }
  subIssues(first: 50) { nodes { number state title createdAt repository { nameWithOwner } } }${blockedBy ? `\n  ${BLOCKED_BY_FIELD}` : ""}
  lastEditedAt
  editor { login }
  userContentEdits(first: 10) { nodes { editedAt editor { login } } }
  timelineItems(itemTypes: [LABELED_EVENT], last: 10) {
    nodes { ... on LabeledEvent { createdAt actor { __typename login ... on Bot { databaseId } } label { name } } }
  }
  renames: timelineItems(itemTypes: [RENAMED_TITLE_EVENT], last: 5) {
    nodes { ... on RenamedTitleEvent { createdAt actor { login } } }
  }
  comments(last: 20) { pageInfo { hasPreviousPage startCursor } nodes { ...AutopilotComment } }
}`;

const CLOSED_ISSUE_FIELDS = `
fragment AutopilotClosedIssue on Issue {
  number
  title
  state
  stateReason
  createdAt
  closedAt
  author { login }
  labels(first: 30) { nodes { name } }
  parent { number }
}`;

const PULL_FIELDS = `
fragment AutopilotPull on PullRequest {
  id
  number
  title
  body
  state
  isDraft
  createdAt
  headRefName
  headRefOid
  baseRefName
  baseRefOid
  mergeable
  mergeStateStatus
  autoMergeRequest { mergeMethod enabledBy { login } }
  mergeQueueEntry { position state }
  isCrossRepository
  headRepository { nameWithOwner }
  author { __typename login ... on Bot { databaseId } ... on User { databaseId } }
  labels(first: 20) { nodes { id name } }
  commits(last: 1) {
    nodes {
      commit {
        oid
        committedDate
        statusCheckRollup {
          state
          contexts(first: 100) {
            nodes {
              __typename
              ... on CheckRun {
                name
                status
                conclusion
                summary
                detailsUrl
                checkSuite { app { slug } }
              }
              ... on StatusContext { context state description targetUrl }
            }
          }
        }
      }
    }
  }
  reviews(last: 30) { nodes { author { login } state submittedAt body commit { oid } } }
  reviewThreads(last: 20) {
    nodes {
      isResolved
      comments(last: 10) {
        nodes {
          databaseId
          author { __typename login }
          body
          path
          createdAt
          viewerDidAuthor
          reactionGroups { content viewerHasReacted }
        }
      }
    }
  }
  comments(last: 10) {
    nodes { databaseId author { __typename login } body createdAt viewerDidAuthor reactionGroups { content viewerHasReacted } }
  }
}`;

const CLOSED_PULL_FIELDS = `
fragment AutopilotClosedPull on PullRequest {
  number
  title
  state
  createdAt
  headRefName
  headRefOid
  headRef { name }
  baseRefName
  labels(first: 20) { nodes { name } }
  isCrossRepository
  headRepository { nameWithOwner }
  author { __typename login ... on Bot { databaseId } ... on User { databaseId } }
  comments(last: 5) { nodes { ...AutopilotComment } }
}`;

/**
 * Pool issues per page. GitHub charges points by the page size asked for, not by what the page holds
 * (sandbox/emulator/graphql/graphql-cost.ts follows its rule: each of an issue's seven nested connections
 * costs a request per issue the page may hold, a point per 100 requests). The first page is fetched every
 * reconcile, a small repository's only one: 50 keeps an idle tick at 9 points. Later pages are only fetched
 * for a larger pool and ask for what is left (the first page's `totalCount`), up to GitHub's 100: half the
 * requests of pages of 50, and no points for room that stays empty.
 */
export const FIRST_ISSUES_PAGE = 50;
const NEXT_ISSUES_PAGE = 100;

/** The size of the next pool page: what is left of `total` after `fetched`, within 1..NEXT_ISSUES_PAGE. */
export function nextIssuesPage(total: number | undefined, fetched: number): number {
  if (total === undefined || !Number.isFinite(total)) return NEXT_ISSUES_PAGE;
  return Math.min(NEXT_ISSUES_PAGE, Math.max(1, total - fetched));
}

/**
 * The world in one request (later pages repeat it with the finished parts switched off): repository facts,
 * config file, tracking-issue candidates, open pool issues, recently closed pool issues, open pull requests
 * (filtered to Autopilot's branches by the caller) and recently closed ones, and the newest comments of the
 * recently closed pull requests and of the issues updated last, closed and open (a comment updates its issue: a
 * command written on a merged task's issue or pull request, or on a skipped task's issue, which carries no pool
 * label, is among them, src/core/reconcile/commands/comment-commands.ts).
 */
function snapshotQuery(options: { blockedBy: boolean }): string {
  return `
query AutopilotSnapshot(
  $owner: String!
  $name: String!
  $labels: [String!]
  $configExpression: String!
  $botLogin: String
  $issuesAfter: String
  $issuesFirst: Int!
  $pullsAfter: String
  $withRepo: Boolean!
  $withIssues: Boolean!
  $withPulls: Boolean!
  $findTracking: Boolean!
  $withTrackingNumber: Boolean!
  $trackingNumber: Int!
  $taskBranchRefs: String!
) {
  rateLimit { cost remaining resetAt }
  viewer @include(if: $withRepo) { databaseId login }
  repository(owner: $owner, name: $name) {
    id @include(if: $withRepo)
    defaultBranchRef @include(if: $withRepo) { name target { oid } }
    owner @include(if: $withRepo) { __typename login }
    configFile: object(expression: $configExpression) @include(if: $withRepo) { ... on Blob { text } }
    dispatchLocks: refs(refPrefix: "refs/autopilot/dispatch/", first: 100) @include(if: $withRepo) {
      pageInfo { hasNextPage }
      nodes { name }
    }
    taskBranches: refs(refPrefix: $taskBranchRefs, first: 100) @include(if: $withRepo) {
      pageInfo { hasNextPage }
      nodes { name target { oid } }
    }
    pinnedIssues(first: 3) @include(if: $findTracking) { nodes { issue { ...AutopilotTracking } } }
    trackingByBot: issues(
      first: 5
      states: [OPEN]
      filterBy: { createdBy: $botLogin }
      orderBy: { field: CREATED_AT, direction: ASC }
    ) @include(if: $findTracking) {
      nodes { ...AutopilotTracking }
    }
    trackingIssue: issue(number: $trackingNumber) @include(if: $withTrackingNumber) { ...AutopilotTracking }
    issues(
      first: $issuesFirst
      after: $issuesAfter
      states: [OPEN]
      labels: $labels
      orderBy: { field: CREATED_AT, direction: ASC }
    ) @include(if: $withIssues) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...AutopilotIssue }
    }
    recentlyClosed: issues(
      first: 30
      states: [CLOSED]
      labels: $labels
      orderBy: { field: UPDATED_AT, direction: DESC }
    ) @include(if: $withRepo) {
      nodes { ...AutopilotClosedIssue }
    }
    pullRequests(
      first: 20
      after: $pullsAfter
      states: [OPEN]
      orderBy: { field: CREATED_AT, direction: ASC }
    ) @include(if: $withPulls) {
      pageInfo { hasNextPage endCursor }
      nodes { ...AutopilotPull }
    }
    recentPulls: pullRequests(
      first: 20
      states: [CLOSED, MERGED]
      orderBy: { field: UPDATED_AT, direction: DESC }
    ) @include(if: $withRepo) {
      nodes { ...AutopilotClosedPull }
    }
    recentlyCommentedClosed: issues(
      first: 10
      states: [CLOSED]
      orderBy: { field: UPDATED_AT, direction: DESC }
    ) @include(if: $withRepo) {
      nodes { ...AutopilotCommentedIssue stateReason closedAt }
    }
    recentlyCommentedOpen: issues(
      first: 10
      states: [OPEN]
      orderBy: { field: UPDATED_AT, direction: DESC }
    ) @include(if: $withRepo) {
      nodes { ...AutopilotCommentedIssue labels(first: 20) { nodes { name } } }
    }
  }
}
${COMMENT_FIELDS}
${COMMENTED_ISSUE_FIELDS}
${TRACKING_FIELDS}
${poolIssueFields(options.blockedBy)}
${CLOSED_ISSUE_FIELDS}
${PULL_FIELDS}
${CLOSED_PULL_FIELDS}
`;
}

export const SNAPSHOT_QUERY = snapshotQuery({ blockedBy: true });
export const SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY = snapshotQuery({ blockedBy: false });

/** States of issues referenced by the pool but not in it (dependencies), by alias, in one request. */
export function issueStatesQuery(numbers: readonly number[]): string {
  const fields = numbers
    .map(
      (n) =>
        `    i${n}: issueOrPullRequest(number: ${n}) {\n      __typename\n      ... on Issue { ...AutopilotClosedIssue }\n      ... on PullRequest { number title pullState: state createdAt }\n    }`,
    )
    .join("\n");
  return `query AutopilotIssueStates($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
${fields}
  }
}
${CLOSED_ISSUE_FIELDS}
`;
}

/**
 * Who linked each sub-issue of the given parents, and when (src/github/snapshot/sub-issue-links.ts), by alias in
 * one request: the newest 100 `SubIssueAddedEvent`s of each parent's timeline
 * (https://docs.github.com/en/graphql/reference/objects#subissueaddedevent).
 */
export function subIssueLinksQuery(parents: readonly number[]): string {
  const fields = parents
    .map(
      (n) =>
        `    p${n}: issue(number: ${n}) {\n      timelineItems(itemTypes: [SUB_ISSUE_ADDED_EVENT], last: 100) {\n        nodes { ... on SubIssueAddedEvent { createdAt actor { login } subIssue { number repository { nameWithOwner } } } }\n      }\n    }`,
    )
    .join("\n");
  return `query AutopilotSubIssueLinks($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
${fields}
  }
}
`;
}

/**
 * Comments the snapshot's `comments(last: …)` did not reach: older comments of one issue, a page of 100 at a
 * time walking back (src/github/snapshot/buried-comments.ts), and comments by node id (a task's result comment, its id
 * kept in the dashboard state).
 */
export const OLDER_COMMENTS_QUERY = `
query AutopilotOlderComments($owner: String!, $name: String!, $number: Int!, $before: String) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      comments(last: 100, before: $before) {
        pageInfo { hasPreviousPage startCursor }
        nodes { ...AutopilotComment }
      }
    }
  }
}
${COMMENT_FIELDS}
`;

export const COMMENTS_BY_ID_QUERY = `
query AutopilotCommentsById($ids: [ID!]!) {
  nodes(ids: $ids) { __typename ... on IssueComment { ...AutopilotComment issue { number } } }
}
${COMMENT_FIELDS}
`;

/** The node id and marker of one issue (the tracking issue's re-read before a write uses REST instead). */
export const PIN_ISSUE_MUTATION = `
mutation AutopilotPinIssue($issueId: ID!) {
  pinIssue(input: { issueId: $issueId }) { issue { number isPinned } }
}`;

/** A label transition in one request: add, then remove (src/github/execution/executor.ts, `moveLabelsInOneRequest`). */
export const MOVE_LABELS_MUTATION = `
mutation AutopilotMoveLabels($issue: ID!, $add: [ID!]!, $remove: [ID!]!) {
  added: addLabelsToLabelable(input: { labelableId: $issue, labelIds: $add }) { clientMutationId }
  removed: removeLabelsFromLabelable(input: { labelableId: $issue, labelIds: $remove }) { clientMutationId }
}`;

export const ISSUE_NODE_ID_QUERY = `
query AutopilotIssueNodeId($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { id isPinned } }
}`;

/**
 * GitHub's own merge mechanisms (src/github/execution/merge-mechanisms.ts), each pinned to the head Autopilot's gates
 * approved by `expectedHeadOid`, and their withdrawal when that head is no longer the one to merge.
 */
export const ENABLE_AUTO_MERGE_MUTATION = `
mutation AutopilotEnableAutoMerge($pullRequestId: ID!, $mergeMethod: PullRequestMergeMethod!, $expectedHeadOid: GitObjectID!) {
  enablePullRequestAutoMerge(
    input: { pullRequestId: $pullRequestId, mergeMethod: $mergeMethod, expectedHeadOid: $expectedHeadOid }
  ) {
    pullRequest { number autoMergeRequest { enabledAt } }
  }
}`;

export const DISABLE_AUTO_MERGE_MUTATION = `
mutation AutopilotDisableAutoMerge($pullRequestId: ID!) {
  disablePullRequestAutoMerge(input: { pullRequestId: $pullRequestId }) { pullRequest { number } }
}`;

export const ENQUEUE_PULL_REQUEST_MUTATION = `
mutation AutopilotEnqueuePullRequest($pullRequestId: ID!, $expectedHeadOid: GitObjectID!) {
  enqueuePullRequest(input: { pullRequestId: $pullRequestId, expectedHeadOid: $expectedHeadOid }) {
    mergeQueueEntry { position state }
  }
}`;

export const DEQUEUE_PULL_REQUEST_MUTATION = `
mutation AutopilotDequeuePullRequest($id: ID!) {
  dequeuePullRequest(input: { id: $id }) { mergeQueueEntry { state } }
}`;

/**
 * Deletes several refs in one request (an ended task's dispatch locks and merged branch, every such task of one
 * reconcile): `updateRefs` applies all of them or none
 * (https://docs.github.com/en/graphql/reference/mutations#updaterefs), and an `afterOid` of forty zeros deletes.
 */
export const DELETE_REFS_MUTATION = `
mutation AutopilotDeleteRefs($repository: ID!, $refs: [RefUpdate!]!) {
  updateRefs(input: { repositoryId: $repository, refUpdates: $refs }) { clientMutationId }
}`;

/** `/autopilot rollback` of a merged task: https://docs.github.com/en/graphql/reference/mutations#revertpullrequest */
export const REVERT_PULL_REQUEST_MUTATION = `
mutation AutopilotRevertPullRequest($pullRequestId: ID!, $title: String, $body: String) {
  revertPullRequest(input: { pullRequestId: $pullRequestId, title: $title, body: $body }) {
    revertPullRequest { number headRefName }
  }
}`;
