/** GraphQL node ids of store records. */

/** Node ids the GraphQL layer can decode: `<prefix>_<base64url(kind:id)>`. */
export function encodeNodeId(kind: NodeKind, id: number | string): string {
  const prefix = NODE_PREFIX[kind];
  return `${prefix}_${Buffer.from(`${kind}:${id}`).toString("base64url")}`;
}

export function decodeNodeId(nodeId: string): { kind: NodeKind; id: string } | null {
  const underscore = nodeId.indexOf("_");
  if (underscore < 0) return null;
  const decoded = Buffer.from(nodeId.slice(underscore + 1), "base64url").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  const kind = decoded.slice(0, colon);
  if (!(kind in NODE_PREFIX)) return null;
  return { kind: kind as NodeKind, id: decoded.slice(colon + 1) };
}

const NODE_PREFIX = {
  User: "U",
  Bot: "BOT",
  Organization: "O",
  Repository: "R",
  Issue: "I",
  PullRequest: "PR",
  IssueComment: "IC",
  Label: "LA",
  PullRequestReview: "PRR",
  PullRequestReviewComment: "PRRC",
  PullRequestReviewThread: "PRRT",
  CheckRun: "CR",
  CheckSuite: "CS",
  StatusContext: "SC",
  Workflow: "W",
  WorkflowRun: "WFR",
  Artifact: "ART",
  Job: "CR",
  Reaction: "REA",
  Event: "LE",
} as const;
type NodeKind = keyof typeof NODE_PREFIX;
