export interface WorkerIssue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  author: string | null;
}

export interface WorkerComment {
  id: number;
  author: string | null;
  /** "User", "Bot", "Organization"… */
  authorType: string | null;
  /** The author's account id (REST `user.id`): whose comment it is, which a login cannot fake. */
  authorId: number | null;
  body: string;
  createdAt: string;
  updatedAt: string;
  /** The issue or pull request it is on (`getComment` only: REST `issue_url`). */
  issue?: number;
}

export interface WorkerPull {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  headRef: string;
  headSha: string;
  baseRef: string;
  labels: string[];
  url: string;
}

export interface FailingCheck {
  name: string;
  conclusion: string;
  title: string | null;
  summary: string | null;
  text: string | null;
  url: string | null;
}

export interface ReviewFeedback {
  kind: "review" | "review_comment";
  author: string | null;
  authorType: string | null;
  state: string | null;
  body: string;
  path: string | null;
  line: number | null;
  createdAt: string;
}

export const FAILING = new Set(["failure", "timed_out", "action_required", "startup_failure", "stale"]);

export function status(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "status" in error
    ? Number((error as { status: unknown }).status)
    : undefined;
}

/** Node ids in REST answers, kept so a label transition can go in one GraphQL request. */
export function rememberLabelIds(labels: unknown[], into: Map<string, string>): void {
  for (const label of labels) {
    if (typeof label !== "object" || label === null) continue;
    const { name, node_id: id } = label as { name?: unknown; node_id?: unknown };
    if (typeof name === "string" && typeof id === "string" && id) into.set(name, id);
  }
}

export function labelNames(labels: unknown[]): string[] {
  return labels
    .map((label) => (typeof label === "string" ? label : (label as { name?: string }).name))
    .filter((name): name is string => typeof name === "string");
}

interface GraphqlActor {
  __typename?: string;
  login?: string | null;
  databaseId?: number | null;
}

interface GraphqlComment {
  databaseId?: number | null;
  body?: string | null;
  createdAt: string;
  updatedAt: string;
  author?: GraphqlActor | null;
}

export type GraphqlCommentPage = {
  pageInfo: { hasNextPage: boolean };
  nodes?: (GraphqlComment | null)[] | null;
} | null;

export interface GraphqlClaim {
  viewer?: { databaseId?: number | null; login?: string | null } | null;
  repository?: { issue?: { comments?: GraphqlCommentPage } | null } | null;
}

export interface GraphqlLabel {
  id?: string | null;
  name?: string | null;
}

export interface GraphqlTask {
  repository?: {
    issue?: {
      id: string;
      number: number;
      title: string;
      body?: string | null;
      state: string;
      author?: { login?: string | null } | null;
      labels?: { nodes?: (GraphqlLabel | null)[] | null } | null;
      comments?: GraphqlCommentPage;
    } | null;
  } & Record<string, unknown>;
}

/** A GraphQL comment in REST's shape: a bot's login gets REST's `[bot]` suffix, its id is REST's `user.id`. */
function graphqlComment(node: GraphqlComment): WorkerComment | null {
  if (typeof node.databaseId !== "number") return null;
  const author = node.author ?? null;
  const type = author?.__typename ?? null;
  const login = author?.login ? (type === "Bot" ? `${author.login}[bot]` : author.login) : null;
  return {
    id: node.databaseId,
    author: login,
    authorType: type,
    authorId: typeof author?.databaseId === "number" ? author.databaseId : null,
    body: node.body ?? "",
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
  };
}

export function rememberGraphqlLabels(
  labels: (GraphqlLabel | null | undefined)[],
  into: Map<string, string>,
): void {
  for (const label of labels) if (label?.id && label.name) into.set(label.name, label.id);
}
interface RestComment {
  id: number;
  user?: { login: string; type?: string; id?: number } | null;
  body?: string | null;
  created_at: string;
  updated_at: string;
  issue_url?: string;
}

export interface RestPull {
  node_id?: string;
  number: number;
  title: string;
  body?: string | null;
  state: string;
  head: { ref: string; sha: string };
  base: { ref: string };
  labels: unknown[];
  html_url: string;
}

export function restComment(data: RestComment): WorkerComment {
  return {
    id: data.id,
    author: data.user?.login ?? null,
    authorType: data.user?.type ?? null,
    authorId: typeof data.user?.id === "number" ? data.user.id : null,
    body: data.body ?? "",
    createdAt: data.created_at,
    updatedAt: data.updated_at,
  };
}

export function selfFrom(viewer: GraphqlClaim["viewer"]): { id: number | null; login: string | null } {
  return {
    id: typeof viewer?.databaseId === "number" ? viewer.databaseId : null,
    login: typeof viewer?.login === "string" && viewer.login ? viewer.login : null,
  };
}

/** Every comment of one GraphQL page, in REST's shape; null when the page does not hold them all. */
export function wholePage(page: GraphqlCommentPage | undefined): WorkerComment[] | null {
  if (!page || page.pageInfo.hasNextPage) return null;
  const comments = (page.nodes ?? []).map((node) => (node ? graphqlComment(node) : null));
  return comments.every((c) => c !== null) ? (comments as WorkerComment[]) : null;
}
