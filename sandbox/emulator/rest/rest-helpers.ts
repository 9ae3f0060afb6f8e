/**
 * What every REST handler shares: the request it gets and the reply it gives, errors in GitHub's shape,
 * readers of the body and path, the lookups of the path's repository, issue and pull request, and paginated
 * lists.
 */
import type { RateLimiter, RateResource } from "../server/accounting.js";
import type { Identity, SandboxApp } from "../server/auth.js";
import type { MatchedOperation } from "../server/openapi.js";
import type { Json, Shapes } from "../shapes.js";
import {
  type Issue,
  type Permission,
  type PullFields,
  permissionAtLeast,
  type Repo,
  type SandboxStore,
  StoreError,
} from "../store.js";

export interface RestRequest {
  store: SandboxStore;
  shapes: Shapes;
  app: SandboxApp;
  identity: Identity;
  match: MatchedOperation;
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string>;
  /** Full request URL (for Link headers). */
  url: URL;
  rateLimiter: RateLimiter;
  limitFor: (identity: Identity, resource: RateResource) => number;
}

export interface RestReply {
  status: number;
  body?: Json;
  /** Raw text body (contents API with the raw media type). */
  text?: string;
  headers?: Record<string, string>;
}

export type RestHandler = (req: RestRequest) => RestReply | Promise<RestReply>;

export function fail(
  status: number,
  message: string,
  errors: ReadonlyArray<Record<string, string>> = [],
): never {
  throw new StoreError(status, message, errors);
}

export function bodyObject(req: RestRequest): Record<string, unknown> {
  const b = req.body;
  return b && typeof b === "object" && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

export function str(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return String(v);
}

export function strOrNull(o: Record<string, unknown>, key: string): string | null | undefined {
  if (!(key in o)) return undefined;
  const v = o[key];
  return v === null ? null : String(v);
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) ? n : fallback;
}

export function num(s: string | undefined): number {
  const n = Number(s);
  if (!Number.isInteger(n)) fail(404, "Not Found");
  return n;
}

/** Label names from every form GitHub accepts: `["a"]`, `{labels: ["a"]}`, `{labels: [{name: "a"}]}`, `"a"`. */
export function labelNames(body: unknown): string[] {
  const raw = Array.isArray(body)
    ? body
    : body && typeof body === "object"
      ? (body as { labels?: unknown }).labels
      : typeof body === "string"
        ? [body]
        : undefined;
  if (raw === undefined || raw === null) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  return list
    .map((item) =>
      typeof item === "string"
        ? item
        : item && typeof item === "object"
          ? String((item as { name?: unknown }).name ?? "")
          : "",
    )
    .filter((name) => name.length > 0);
}

export function repoOf(req: RestRequest): Repo {
  const repo = req.store.getRepo({ owner: req.params.owner ?? "", name: req.params.repo ?? "" });
  if (!repo) fail(404, "Not Found");
  return repo;
}

export function issueOf(req: RestRequest, repo: Repo, key = "issue_number"): Issue {
  const issue = req.store.getIssue(repo.fullName, num(req.params[key]));
  if (!issue) fail(404, "Not Found");
  return issue;
}

export function pullOf(req: RestRequest, repo: Repo): Issue & { pull: PullFields } {
  const pull = req.store.getPull(repo.fullName, num(req.params.pull_number));
  if (!pull?.pull) fail(404, "Not Found");
  return pull as Issue & { pull: PullFields };
}

/** The commit SHA the path's `ref` names; 422 when it names none. */
export async function commitShaOf(req: RestRequest, repo: Repo): Promise<string> {
  const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
  if (!sha) fail(422, `No commit found for SHA: ${req.params.ref}`);
  return sha;
}

/** Applies `per_page`/`page` and builds GitHub's `Link` header. */
export function paginate<T>(req: RestRequest, items: T[]): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, int(req.query.per_page, 30)));
  const page = Math.max(1, int(req.query.page, 1));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (p: number, rel: string) => {
    const u = new URL(req.url.toString());
    u.searchParams.set("per_page", String(perPage));
    u.searchParams.set("page", String(p));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, "prev"));
  if (page < last) links.push(link(page + 1, "next"));
  if (page < last) links.push(link(last, "last"));
  if (page > 1) links.push(link(1, "first"));
  return { items: slice, headers: links.length ? { link: links.join(", ") } : {} };
}

export function list<T>(req: RestRequest, items: T[], render: (item: T) => Json): RestReply {
  const { items: page, headers } = paginate(req, items);
  return { status: 200, body: page.map(render), headers };
}

export function sortByDate<T>(
  items: T[],
  get: (item: T) => Date,
  direction: string | undefined,
  fallback: "asc" | "desc",
): T[] {
  const dir = (direction ?? fallback) === "asc" ? 1 : -1;
  return [...items].sort((a, b) => dir * (get(a).getTime() - get(b).getTime()));
}

/**
 * A list reply whose body counts the whole list (`total_count`) beside one page of it under `key`, as the
 * checks, Actions and installation list endpoints answer; `extra` fields go between the two.
 */
export function countedList<T>(
  req: RestRequest,
  key: string,
  items: T[],
  render: (item: T) => Json,
  extra: Record<string, Json> = {},
): RestReply {
  const { items: page, headers } = paginate(req, items);
  return { status: 200, body: { total_count: items.length, ...extra, [key]: page.map(render) }, headers };
}

/** The `permissions` flags of a user's role on a repository (each true when the role reaches it). */
export function permissionFlags(permission: Permission): Record<string, boolean> {
  return {
    admin: permissionAtLeast(permission, "admin"),
    maintain: permissionAtLeast(permission, "maintain"),
    push: permissionAtLeast(permission, "write"),
    triage: permissionAtLeast(permission, "triage"),
    pull: permissionAtLeast(permission, "read"),
  };
}
