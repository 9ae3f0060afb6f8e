/**
 * The worker's GraphQL documents (src/github/worker-github.ts). Each asks GitHub's schema only for fields its
 * reference documents (https://docs.github.com/en/graphql/reference/objects#repository for `issue`, `label`
 * and `pullRequests`; #issue for `comments` and `labels`; #issuecomment; #pullrequest), and costs one point
 * (https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api: three
 * connections of at most 100 nodes each, 1–3 requests, rounded to the minimum of 1).
 */

/** Fields of an `IssueComment` the worker reads (`WorkerComment`): REST's `user.id` is the author's `databaseId`. */
const COMMENT_FIELDS = `databaseId body createdAt updatedAt
        author { __typename login ... on User { databaseId } ... on Bot { databaseId } ... on Organization { databaseId } ... on Mannequin { databaseId } }`;

/**
 * The task issue with its labels and (`$comments`) its first 100 comments, and the node ids of the state labels
 * asked for (`label0`, `label1`… aliases, one variable each; `labelCount` of them).
 */
export function workerTaskQuery(labelCount: number): string {
  const indexes = Array.from({ length: labelCount }, (_, i) => i);
  const vars = indexes.map((i) => `, $label${i}: String!`).join("");
  const labels = indexes.map((i) => `\n    label${i}: label(name: $label${i}) { id name }`).join("");
  return `query AutopilotWorkerTask($owner: String!, $name: String!, $number: Int!, $comments: Boolean!${vars}) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      id number title body state
      author { login }
      labels(first: 100) { nodes { id name } }
      comments(first: 100) @include(if: $comments) {
        pageInfo { hasNextPage }
        nodes { ${COMMENT_FIELDS} }
      }
    }${labels}
  }
}`;
}

/**
 * The claim's read: the token's own account and the task issue's first 100 comments (the claim keeps only the
 * comments whose author id is the viewer's).
 */
export const WORKER_CLAIM_QUERY = `query AutopilotWorkerClaim($owner: String!, $name: String!, $number: Int!) {
  viewer { databaseId login }
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      comments(first: 100) {
        pageInfo { hasNextPage }
        nodes { ${COMMENT_FIELDS} }
      }
    }
  }
}`;

/** A review transition in one call: the PR gets the label, then the issue moves (fields run in order). */
export const LABEL_FOR_REVIEW_MUTATION = `
mutation AutopilotLabelForReview($pull: ID!, $issue: ID!, $add: [ID!]!, $remove: [ID!]!) {
  pull: addLabelsToLabelable(input: { labelableId: $pull, labelIds: $add }) { clientMutationId }
  added: addLabelsToLabelable(input: { labelableId: $issue, labelIds: $add }) { clientMutationId }
  removed: removeLabelsFromLabelable(input: { labelableId: $issue, labelIds: $remove }) { clientMutationId }
}`;

/**
 * The inline review comments of resolved review conversations (the last 100 conversations, 100 comments each):
 * what a reviewer considers settled does not go to the agent again.
 */
export const RESOLVED_REVIEW_COMMENTS_QUERY = `query AutopilotResolvedReviewComments($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(last: 100) { nodes { isResolved comments(first: 100) { nodes { databaseId } } } }
    }
  }
}`;
