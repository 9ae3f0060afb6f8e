/**
 * Stateful REST handlers, keyed by the OpenAPI operationId. Requests reach them already authenticated,
 * rate-limited and validated against GitHub's description; they read and change the store and answer in
 * GitHub's shapes.
 */
import { createHash } from "node:crypto";
import { parse as parseYaml } from "yaml";
import type { RateLimiter, RateResource } from "./accounting.js";
import type { Identity, SandboxApp } from "./auth.js";
import type { MatchedOperation } from "./openapi.js";
import { type Json, type JsonObject, type Shapes, iso } from "./shapes.js";
import {
  type CheckConclusion,
  type CheckStatus,
  type Issue,
  type IssueState,
  type LockReason,
  type MergeMethod,
  type Permission,
  type PullFields,
  type ReactionContent,
  type Repo,
  type SandboxStore,
  type StateReason,
  type StatusState,
  StoreError,
  type WorkflowRun,
  permissionAtLeast,
} from "./store.js";

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

type Handler = (req: RestRequest) => RestReply | Promise<RestReply>;

// ---------------------------------------------------------------------------------------------------------
// helpers

export function fail(
  status: number,
  message: string,
  errors: ReadonlyArray<Record<string, string>> = [],
): never {
  throw new StoreError(status, message, errors);
}

function bodyObject(req: RestRequest): Record<string, unknown> {
  const b = req.body;
  return b && typeof b === "object" && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

function str(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return String(v);
}

function strOrNull(o: Record<string, unknown>, key: string): string | null | undefined {
  if (!(key in o)) return undefined;
  const v = o[key];
  return v === null ? null : String(v);
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) ? n : fallback;
}

function num(s: string | undefined): number {
  const n = Number(s);
  if (!Number.isInteger(n)) fail(404, "Not Found");
  return n;
}

/** Label names from every form GitHub accepts: `["a"]`, `{labels: ["a"]}`, `{labels: [{name: "a"}]}`, `"a"`. */
function labelNames(body: unknown): string[] {
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

function issueOf(req: RestRequest, repo: Repo, key = "issue_number"): Issue {
  const issue = req.store.getIssue(repo.fullName, num(req.params[key]));
  if (!issue) fail(404, "Not Found");
  return issue;
}

function pullOf(req: RestRequest, repo: Repo): Issue & { pull: PullFields } {
  const pull = req.store.getPull(repo.fullName, num(req.params.pull_number));
  if (!pull?.pull) fail(404, "Not Found");
  return pull as Issue & { pull: PullFields };
}

/** Applies `per_page`/`page` and builds GitHub's `Link` header. */
function paginate<T>(req: RestRequest, items: T[]): { items: T[]; headers: Record<string, string> } {
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

function sortByDate<T>(
  items: T[],
  get: (item: T) => Date,
  direction: string | undefined,
  fallback: "asc" | "desc",
): T[] {
  const dir = (direction ?? fallback) === "asc" ? 1 : -1;
  return [...items].sort((a, b) => dir * (get(a).getTime() - get(b).getTime()));
}

/** Permission a user token needs for an operation (installation and worker tokens act as the app). */
const USER_NEEDS: Record<string, Permission> = {
  "issues/create": "read",
  "issues/create-comment": "read",
  "reactions/create-for-issue-comment": "read",
  "reactions/create-for-issue": "read",
  "reactions/delete-for-issue-comment": "read",
  "reactions/delete-for-issue": "read",
  "pulls/create-review": "read",
  "pulls/submit-review": "read",
  "pulls/create": "read",
  "issues/update-comment": "read",
  "issues/delete-comment": "read",
  "issues/add-labels": "triage",
  "issues/set-labels": "triage",
  "issues/remove-label": "triage",
  "issues/remove-all-labels": "triage",
  "issues/update": "read",
  "pulls/update": "read",
  "issues/lock": "triage",
  "issues/unlock": "triage",
  "pulls/request-reviewers": "triage",
  "pulls/remove-requested-reviewers": "triage",
};

function requireWrite(req: RestRequest, repo: Repo, need: Permission): void {
  const id = req.identity;
  if (id.kind === "app") fail(403, "Resource not accessible by integration");
  if (id.kind === "worker" && id.token?.repositories && !id.token.repositories.includes(repo.fullName)) {
    fail(403, "Resource not accessible by integration");
  }
  if (id.kind !== "user") return;
  const have = req.store.getPermission(repo.fullName, id.login);
  if (!permissionAtLeast(have, need)) {
    fail(
      403,
      need === "admin"
        ? "Must have admin rights to Repository."
        : "Resource not accessible by personal access token",
    );
  }
}

/** Authorization checks shared by every repository operation. */
export function authorizeRepoOperation(req: RestRequest): void {
  if (!req.match.template.startsWith("/repos/{owner}/{repo}")) return;
  const repo = repoOf(req);
  const id = req.identity;
  if (id.kind === "app" && req.match.operationId !== "apps/get-repo-installation") {
    fail(403, "Resource not accessible by integration");
  }
  // An installation token minted for selected repositories does not see the others.
  if (
    id.kind === "installation" &&
    id.token?.repositories &&
    !id.token.repositories.includes(repo.fullName)
  ) {
    fail(404, "Not Found");
  }
  if (req.match.method === "GET" || req.match.method === "HEAD") {
    if (id.kind === "user" && repo.private && req.store.getPermission(repo.fullName, id.login) === "none") {
      fail(404, "Not Found");
    }
    return;
  }
  requireWrite(req, repo, USER_NEEDS[req.match.operationId] ?? "write");
}

function isAuthorOrTriage(
  req: RestRequest,
  repo: Repo,
  author: string,
  need: Permission = "triage",
): boolean {
  const id = req.identity;
  if (id.kind !== "user") return true;
  if (id.login.toLowerCase() === author.toLowerCase()) return true;
  return permissionAtLeast(req.store.getPermission(repo.fullName, id.login), need);
}

const ZERO = "0000000000000000000000000000000000000000";

function commitJson(
  req: RestRequest,
  repo: Repo,
  sha: string,
  info: Awaited<ReturnType<SandboxStore["getCommit"]>>,
): JsonObject {
  const api = req.shapes.repoApi(repo);
  const author = {
    name: info?.authorName ?? "sandbox",
    email: info?.authorEmail ?? "sandbox@users.noreply.github.com",
    date: info?.authorDate ?? new Date(0).toISOString(),
  };
  return {
    url: `${api}/commits/${sha}`,
    sha,
    node_id: `C_${Buffer.from(`Commit:${sha}`).toString("base64url")}`,
    html_url: `${req.shapes.repoHtml(repo)}/commit/${sha}`,
    comments_url: `${api}/commits/${sha}/comments`,
    commit: {
      url: `${api}/git/commits/${sha}`,
      author,
      committer: {
        name: info?.committerName ?? author.name,
        email: info?.committerEmail ?? author.email,
        date: info?.committerDate ?? author.date,
      },
      message: info?.message ?? "",
      comment_count: 0,
      tree: { sha: info?.tree ?? sha, url: `${api}/git/trees/${info?.tree ?? sha}` },
      verification: {
        verified: false,
        reason: "unsigned",
        signature: null,
        payload: null,
        verified_at: null,
      },
    },
    author: null,
    committer: null,
    parents: (info?.parents ?? []).map((p) => ({
      sha: p,
      url: `${api}/commits/${p}`,
      html_url: `${req.shapes.repoHtml(repo)}/commit/${p}`,
    })),
  };
}

function refJson(req: RestRequest, repo: Repo, ref: string, sha: string): JsonObject {
  const api = req.shapes.repoApi(repo);
  return {
    ref,
    node_id: `REF_${Buffer.from(`${repo.fullName}:${ref}`).toString("base64url")}`,
    url: `${api}/git/${ref}`,
    object: { type: "commit", sha, url: `${api}/git/commits/${sha}` },
  };
}

/** Registers workflow files found under `.github/workflows` (the git backend or in-memory files). */
async function discoverWorkflows(req: RestRequest, repo: Repo): Promise<void> {
  let entries: Awaited<ReturnType<SandboxStore["listDirectory"]>> = null;
  try {
    entries = await req.store.listDirectory(repo.fullName, ".github/workflows");
  } catch {
    return;
  }
  for (const entry of entries ?? []) {
    if (entry.type !== "file" || !/\.ya?ml$/.test(entry.name)) continue;
    if (req.store.getWorkflow(repo.fullName, entry.path)) continue;
    let name: string | undefined;
    try {
      const text = (await req.store.readFile(repo.fullName, entry.path))?.toString("utf8");
      const doc = text ? (parseYaml(text) as { name?: unknown } | null) : null;
      if (doc && typeof doc.name === "string") name = doc.name;
    } catch {
      // an unparsable workflow is still a workflow
    }
    req.store.addWorkflow(repo.fullName, { path: entry.path, ...(name ? { name } : {}) });
  }
}

/** GitHub's checks on dispatch inputs, when the workflow file can be read. */
async function checkDispatchInputs(
  req: RestRequest,
  repo: Repo,
  path: string,
  ref: string,
  inputs: Record<string, string>,
): Promise<void> {
  let text: string | undefined;
  try {
    text = (await req.store.readFile(repo.fullName, path, ref))?.toString("utf8");
  } catch {
    return;
  }
  if (!text) return;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return;
  }
  if (!doc || typeof doc !== "object") return;
  const on = (doc as Record<string, unknown>).on ?? (doc as Record<string, unknown>).true;
  const hasDispatch =
    on === "workflow_dispatch" ||
    (Array.isArray(on) && on.includes("workflow_dispatch")) ||
    (on !== null && typeof on === "object" && !Array.isArray(on) && "workflow_dispatch" in on);
  if (!hasDispatch) fail(422, "Workflow does not have 'workflow_dispatch' trigger");
  const spec =
    on && typeof on === "object" && !Array.isArray(on)
      ? (on as Record<string, unknown>).workflow_dispatch
      : null;
  const declared =
    spec && typeof spec === "object"
      ? ((spec as { inputs?: unknown }).inputs as Record<string, unknown> | undefined)
      : undefined;
  const known = declared && typeof declared === "object" ? declared : {};
  const unexpected = Object.keys(inputs).filter((k) => !(k in known));
  if (unexpected.length) fail(422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`);
  const missing = Object.entries(known)
    .filter(
      ([k, v]) =>
        v &&
        typeof v === "object" &&
        (v as { required?: unknown }).required === true &&
        !(k in inputs) &&
        (v as { default?: unknown }).default === undefined,
    )
    .map(([k]) => k);
  if (missing.length)
    fail(422, `Required input${missing.length > 1 ? "s" : ""} '${missing.join("', '")}' not provided`);
}

function parseCreated(filter: string | undefined): { from?: Date; to?: Date } {
  if (!filter) return {};
  const range = /^(.+)\.\.(.+)$/.exec(filter);
  if (range) return { from: new Date(range[1]!), to: new Date(range[2]!) };
  const cmp = /^(>=|<=|>|<)?(.+)$/.exec(filter)!;
  const date = new Date(cmp[2]!);
  if (cmp[1] === ">=" || cmp[1] === ">") return { from: date };
  if (cmp[1] === "<=" || cmp[1] === "<") return { to: date };
  return { from: date, to: new Date(date.getTime() + 86_400_000 - 1) };
}

async function requireWorkflow(req: RestRequest, repo: Repo) {
  const id = req.params.workflow_id ?? "";
  let workflow = req.store.getWorkflow(repo.fullName, id);
  if (!workflow) {
    await discoverWorkflows(req, repo);
    workflow = req.store.getWorkflow(repo.fullName, id);
  }
  if (!workflow) fail(404, "Not Found");
  return workflow;
}

function runsReply(req: RestRequest, repo: Repo, runs: WorkflowRun[]): RestReply {
  const { items, headers } = paginate(req, runs);
  return {
    status: 200,
    body: { total_count: runs.length, workflow_runs: items.map((r) => req.shapes.workflowRun(repo, r)) },
    headers,
  };
}

function filterRuns(req: RestRequest, repo: Repo, workflow?: number): WorkflowRun[] {
  const created = parseCreated(req.query.created);
  return req.store.listWorkflowRuns(repo.fullName, {
    ...(workflow !== undefined ? { workflow } : {}),
    ...(req.query.status ? { status: req.query.status } : {}),
    ...(req.query.branch ? { branch: req.query.branch } : {}),
    ...(req.query.event ? { event: req.query.event } : {}),
    ...(req.query.actor ? { actor: req.query.actor } : {}),
    ...(req.query.head_sha ? { headSha: req.query.head_sha } : {}),
    ...(created.from ? { createdFrom: created.from } : {}),
    ...(created.to ? { createdTo: created.to } : {}),
  });
}

function roleName(permission: Permission): { permission: string; role_name: string } {
  const legacy = permission === "maintain" ? "write" : permission === "triage" ? "read" : permission;
  return { permission: legacy, role_name: permission };
}

function contentsEntry(
  req: RestRequest,
  repo: Repo,
  entry: { name: string; path: string; type: "file" | "dir"; sha: string; size: number },
  ref: string,
): JsonObject {
  const api = `${req.shapes.repoApi(repo)}/contents/${entry.path}?ref=${encodeURIComponent(ref)}`;
  const html = `${req.shapes.repoHtml(repo)}/${entry.type === "dir" ? "tree" : "blob"}/${ref}/${entry.path}`;
  const git = `${req.shapes.repoApi(repo)}/git/${entry.type === "dir" ? "trees" : "blobs"}/${entry.sha}`;
  return {
    type: entry.type,
    size: entry.size,
    name: entry.name,
    path: entry.path,
    sha: entry.sha,
    url: api,
    git_url: git,
    html_url: html,
    download_url:
      entry.type === "file" ? `${req.shapes.htmlUrl}/raw/${repo.fullName}/${ref}/${entry.path}` : null,
    _links: { self: api, git, html },
  };
}

function issueFilter(req: RestRequest, repo: Repo): Issue[] {
  const q = req.query;
  const state = q.state ?? "open";
  const wanted = (q.labels ?? "")
    .split(",")
    .map((l) => l.trim().toLowerCase())
    .filter(Boolean);
  const since = q.since ? new Date(q.since) : null;
  let issues = req.store
    .listIssues(repo.fullName)
    .filter((i) => state === "all" || i.state === state)
    .filter((i) => wanted.every((w) => i.labels.some((l) => l.toLowerCase() === w)))
    .filter((i) => !since || i.updatedAt.getTime() >= since.getTime())
    .filter((i) => !q.creator || i.user.toLowerCase() === q.creator.toLowerCase())
    .filter((i) => {
      if (!q.assignee) return true;
      if (q.assignee === "none") return i.assignees.length === 0;
      if (q.assignee === "*") return i.assignees.length > 0;
      return i.assignees.some((a) => a.toLowerCase() === q.assignee!.toLowerCase());
    })
    .filter((i) => !q.mentioned || (i.body ?? "").includes(`@${q.mentioned}`));
  const sort = q.sort ?? "created";
  const dir = (q.direction ?? "desc") === "asc" ? 1 : -1;
  if (sort === "comments") {
    const count = (i: Issue) => req.store.listComments(repo.fullName, i.number).length;
    issues = [...issues].sort((a, b) => dir * (count(a) - count(b)) || dir * (a.number - b.number));
  } else {
    const key =
      sort === "updated" ? (i: Issue) => i.updatedAt.getTime() : (i: Issue) => i.createdAt.getTime();
    issues = [...issues].sort((a, b) => dir * (key(a) - key(b)) || dir * (a.number - b.number));
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------------------
// handlers

export const restHandlers: Record<string, Handler> = {
  // ----- meta, users, apps ---------------------------------------------------------------------------------
  "meta/root": (req) => ({ status: 200, body: { current_user_url: `${req.shapes.apiUrl}/user` } }),

  "rate-limit/get": (req) => {
    const core = req.rateLimiter.peek(req.identity.bucket, "core", req.limitFor(req.identity, "core"));
    const graphql = req.rateLimiter.peek(
      req.identity.bucket,
      "graphql",
      req.limitFor(req.identity, "graphql"),
    );
    const view = (s: typeof core) => ({
      limit: s.limit,
      remaining: s.remaining,
      reset: s.reset,
      used: s.used,
      resource: s.resource,
    });
    const other = (resource: string) => ({ limit: 30, remaining: 30, reset: core.reset, used: 0, resource });
    return {
      status: 200,
      body: {
        resources: {
          core: view(core),
          graphql: view(graphql),
          search: other("search"),
          integration_manifest: other("integration_manifest"),
        },
        rate: view(core),
      },
    };
  },

  "users/get-authenticated": (req) => {
    if (req.identity.kind !== "user") fail(403, "Resource not accessible by integration");
    return { status: 200, body: req.shapes.publicUser(req.identity.login) };
  },

  "users/get-by-username": (req) => {
    const user = req.store.getUser(req.params.username ?? "");
    if (!user) fail(404, "Not Found");
    return { status: 200, body: req.shapes.publicUser(user.login) };
  },

  "apps/get-authenticated": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return { status: 200, body: { ...req.shapes.appObject(req.app.slug), installations_count: 1 } };
  },

  "apps/get-by-slug": (req) => {
    if (req.params.app_slug !== req.app.slug && req.params.app_slug !== "github-actions")
      fail(404, "Not Found");
    return { status: 200, body: req.shapes.appObject(req.params.app_slug ?? req.app.slug) };
  },

  "apps/list-installations": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return list(req, [req.shapes.installation()], (i) => i);
  },

  "apps/get-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    if (num(req.params.installation_id) !== req.app.installationId) fail(404, "Not Found");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-repo-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    repoOf(req);
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-org-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-user-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/create-installation-access-token": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    if (num(req.params.installation_id) !== req.app.installationId) fail(404, "Not Found");
    const b = bodyObject(req);
    const names = Array.isArray(b.repositories) ? b.repositories.map(String) : undefined;
    const ids = Array.isArray(b.repository_ids) ? b.repository_ids.map(Number) : undefined;
    let repos: Repo[] | null = null;
    if (names || ids) {
      repos = [];
      for (const name of names ?? []) {
        const found = req.store
          .listRepos()
          .find(
            (r) =>
              r.name.toLowerCase() === name.toLowerCase() || r.fullName.toLowerCase() === name.toLowerCase(),
          );
        if (!found)
          fail(
            422,
            "There is at least one repository that does not exist or is not accessible to the parent installation.",
          );
        repos.push(found);
      }
      for (const id of ids ?? []) {
        const found = req.store.getRepoById(id);
        if (!found)
          fail(
            422,
            "There is at least one repository that does not exist or is not accessible to the parent installation.",
          );
        repos.push(found);
      }
    }
    const info = req.store.issueInstallationToken(
      repos ? { repositories: repos.map((r) => r.fullName) } : {},
    );
    const permissions =
      (b.permissions as JsonObject | undefined) ?? (req.shapes.installation().permissions as JsonObject);
    return {
      status: 201,
      body: {
        token: info.token,
        expires_at: iso(info.expiresAt)!,
        permissions,
        repository_selection: repos ? "selected" : "all",
        ...(repos ? { repositories: repos.map((r) => req.shapes.repository(r)) } : {}),
      },
    };
  },

  "apps/revoke-installation-access-token": (req) => {
    if (req.identity.kind !== "installation" || !req.identity.token)
      fail(403, "Resource not accessible by integration");
    req.store.revokeToken(req.identity.token.token);
    return { status: 204 };
  },

  "apps/list-repos-accessible-to-installation": (req) => {
    if (req.identity.kind !== "installation" && req.identity.kind !== "worker")
      fail(403, "Resource not accessible by integration");
    const allowed = req.identity.token?.repositories;
    const repos = req.store.listRepos().filter((r) => !allowed || allowed.includes(r.fullName));
    const { items, headers } = paginate(req, repos);
    return {
      status: 200,
      body: {
        total_count: repos.length,
        repository_selection: allowed ? "selected" : "all",
        repositories: items.map((r) => req.shapes.repository(r)),
      },
      headers,
    };
  },

  // ----- repositories ----------------------------------------------------------------------------------------
  "repos/get": (req) => {
    const repo = repoOf(req);
    const viewer = req.identity.kind === "user" ? req.identity.login : undefined;
    const body = req.shapes.repository(repo, viewer);
    if (!viewer) body.permissions = { admin: false, maintain: false, push: true, triage: true, pull: true };
    return { status: 200, body };
  },

  "repos/get-collaborator-permission-level": (req) => {
    const repo = repoOf(req);
    const user = req.store.getUser(req.params.username ?? "");
    if (!user) fail(404, `${req.params.username} is not a user`);
    const permission = req.store.getPermission(repo.fullName, user.login);
    const { permission: legacy, role_name } = roleName(permission);
    return {
      status: 200,
      body: {
        permission: legacy,
        role_name,
        user: {
          ...req.shapes.user(user.login),
          permissions: {
            admin: permissionAtLeast(permission, "admin"),
            maintain: permissionAtLeast(permission, "maintain"),
            push: permissionAtLeast(permission, "write"),
            triage: permissionAtLeast(permission, "triage"),
            pull: permissionAtLeast(permission, "read"),
          },
          role_name,
        },
      },
    };
  },

  "repos/check-collaborator": (req) => {
    const repo = repoOf(req);
    const permission = req.store.getPermission(repo.fullName, req.params.username ?? "");
    return {
      status:
        permissionAtLeast(permission, "write") || permission === "triage" || permission === "read"
          ? 204
          : 404,
    };
  },

  "repos/list-collaborators": (req) => {
    const repo = repoOf(req);
    const users = req.store
      .listUsers()
      .filter((u) => u.type === "User" && req.store.getPermission(repo.fullName, u.login) !== "none");
    return list(req, users, (u) => {
      const permission = req.store.getPermission(repo.fullName, u.login);
      return {
        ...req.shapes.user(u.login),
        permissions: {
          admin: permissionAtLeast(permission, "admin"),
          maintain: permissionAtLeast(permission, "maintain"),
          push: permissionAtLeast(permission, "write"),
          triage: permissionAtLeast(permission, "triage"),
          pull: permissionAtLeast(permission, "read"),
        },
        role_name: permission,
      };
    });
  },

  "repos/get-content": async (req) => {
    const repo = repoOf(req);
    const path = (req.params.path ?? "").replace(/^\/+|\/+$/g, "");
    const ref = req.query.ref ?? repo.defaultBranch;
    if (!(await req.store.resolveRef(repo.fullName, ref))) fail(404, `No commit found for the ref ${ref}`);
    const content = path ? await req.store.readFile(repo.fullName, path, ref) : null;
    if (content) {
      const accept = req.headers.accept ?? "";
      if (/\.raw\b/.test(accept)) return { status: 200, text: content.toString("utf8") };
      const name = path.slice(path.lastIndexOf("/") + 1);
      const sha = gitBlobSha(content);
      const entry = contentsEntry(req, repo, { name, path, type: "file", sha, size: content.length }, ref);
      const base64 = content.toString("base64").replace(/.{60}/g, "$&\n");
      return {
        status: 200,
        body: { ...entry, encoding: "base64", content: base64.endsWith("\n") ? base64 : `${base64}\n` },
      };
    }
    const entries = await req.store.listDirectory(repo.fullName, path, ref);
    if (!entries) fail(404, "Not Found");
    return { status: 200, body: entries.map((e) => contentsEntry(req, repo, e, ref)) };
  },

  // ----- labels ------------------------------------------------------------------------------------------
  "issues/list-labels-for-repo": (req) => {
    const repo = repoOf(req);
    return list(req, req.store.listLabels(repo.fullName), (l) => req.shapes.label(repo, l));
  },

  "issues/create-label": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const label = req.store.createLabel(repo.fullName, {
      name: str(b, "name")!,
      ...(str(b, "color") ? { color: str(b, "color")! } : {}),
      ...(b.description !== undefined ? { description: strOrNull(b, "description") ?? null } : {}),
    });
    return { status: 201, body: req.shapes.label(repo, label) };
  },

  "issues/get-label": (req) => {
    const repo = repoOf(req);
    const label = req.store.getLabel(repo.fullName, req.params.name ?? "");
    if (!label) fail(404, "Not Found");
    return { status: 200, body: req.shapes.label(repo, label) };
  },

  "issues/update-label": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const label = req.store.updateLabel(repo.fullName, req.params.name ?? "", {
      ...(str(b, "new_name") ? { newName: str(b, "new_name")! } : {}),
      ...(str(b, "color") ? { color: str(b, "color")! } : {}),
      ...(b.description !== undefined ? { description: strOrNull(b, "description") ?? null } : {}),
    });
    return { status: 200, body: req.shapes.label(repo, label) };
  },

  "issues/delete-label": (req) => {
    const repo = repoOf(req);
    req.store.deleteLabel(repo.fullName, req.params.name ?? "");
    return { status: 204 };
  },

  "issues/list-labels-on-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, req.store.labelsOf(repo.fullName, issue), (l) => req.shapes.label(repo, l));
  },

  "issues/add-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const names = labelNames(req.body);
    if (names.length === 0) fail(422, "Invalid request.\n\nNo labels given.");
    const labels = req.store.addLabels(repo.fullName, issue.number, names, req.identity.login);
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/set-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const labels = req.store.setLabels(repo.fullName, issue.number, labelNames(req.body), req.identity.login);
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/remove-label": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const labels = req.store.removeLabel(
      repo.fullName,
      issue.number,
      req.params.name ?? "",
      req.identity.login,
    );
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/remove-all-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.clearLabels(repo.fullName, issue.number, req.identity.login);
    return { status: 204 };
  },

  // ----- issues ------------------------------------------------------------------------------------------
  "issues/list-for-repo": (req) => {
    const repo = repoOf(req);
    return list(req, issueFilter(req, repo), (i) => req.shapes.issue(repo, i));
  },

  "issues/create": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const canTriage = isAuthorOrTriage(req, repo, "", "triage");
    const labels = canTriage ? labelNames({ labels: b.labels ?? [] }) : [];
    const assignees = canTriage && Array.isArray(b.assignees) ? b.assignees.map(String) : [];
    if (canTriage && typeof b.assignee === "string") assignees.push(b.assignee);
    const issue = req.store.createIssue(repo.fullName, {
      title: str(b, "title") ?? "",
      body: strOrNull(b, "body") ?? null,
      labels,
      assignees,
      author: req.identity.login,
    });
    return {
      status: 201,
      body: req.shapes.issue(repo, issue),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/${issue.number}` },
    };
  },

  "issues/get": (req) => {
    const repo = repoOf(req);
    return { status: 200, body: req.shapes.issue(repo, issueOf(req, repo)) };
  },

  "issues/update": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const b = bodyObject(req);
    const touchesTriage = "labels" in b || "assignees" in b || "assignee" in b || "milestone" in b;
    if (!isAuthorOrTriage(req, repo, touchesTriage ? "" : issue.user)) {
      fail(403, "Resource not accessible by personal access token");
    }
    const assignees = Array.isArray(b.assignees)
      ? b.assignees.map(String)
      : typeof b.assignee === "string"
        ? [b.assignee]
        : b.assignee === null
          ? []
          : undefined;
    const reason = strOrNull(b, "state_reason");
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      {
        ...(b.title !== undefined && b.title !== null ? { title: String(b.title) } : {}),
        ...("body" in b ? { body: strOrNull(b, "body") ?? null } : {}),
        ...(str(b, "state") ? { state: str(b, "state") as IssueState } : {}),
        ...(reason !== undefined ? { stateReason: reason as StateReason } : {}),
        ...("labels" in b ? { labels: labelNames({ labels: b.labels ?? [] }) } : {}),
        ...(assignees ? { assignees } : {}),
      },
      req.identity.login,
    );
    return { status: 200, body: req.shapes.issue(repo, issue) };
  },

  "issues/lock": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const reason = (str(bodyObject(req), "lock_reason") ?? null) as LockReason;
    req.store.lockIssue(repo.fullName, issue.number, req.identity.login, reason);
    return { status: 204 };
  },

  "issues/unlock": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.unlockIssue(repo.fullName, issue.number, req.identity.login);
    return { status: 204 };
  },

  "issues/add-assignees": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const add = Array.isArray(bodyObject(req).assignees)
      ? (bodyObject(req).assignees as unknown[]).map(String)
      : [];
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      { assignees: [...new Set([...issue.assignees, ...add])] },
      req.identity.login,
    );
    return { status: 201, body: req.shapes.issue(repo, issue) };
  },

  "issues/remove-assignees": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const drop = new Set(
      (Array.isArray(bodyObject(req).assignees) ? (bodyObject(req).assignees as unknown[]) : []).map((a) =>
        String(a).toLowerCase(),
      ),
    );
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      { assignees: issue.assignees.filter((a) => !drop.has(a.toLowerCase())) },
      req.identity.login,
    );
    return { status: 200, body: req.shapes.issue(repo, issue) };
  },

  "issues/list-events": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, issue.events, (e) => req.shapes.issueEvent(repo, issue, e));
  },

  "issues/list-events-for-timeline": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    type Item = { at: Date; json: JsonObject };
    const items: Item[] = [
      ...issue.events.map((e) => ({ at: e.createdAt, json: req.shapes.issueEvent(repo, issue, e) })),
      ...req.store.listComments(repo.fullName, issue.number).map((c) => ({
        at: c.createdAt,
        json: { ...req.shapes.comment(repo, c), event: "commented", actor: req.shapes.user(c.user) },
      })),
    ];
    items.sort((a, b) => a.at.getTime() - b.at.getTime());
    return list(req, items, (i) => i.json);
  },

  // ----- sub-issues and dependencies -----------------------------------------------------------------------
  "issues/list-sub-issues": (req) => {
    return listRelatedIssues(req, (issue) => issue.subIssues);
  },

  "issues/add-sub-issue": (req) => {
    const repo = repoOf(req);
    const parent = issueOf(req, repo);
    const b = bodyObject(req);
    const child = req.store.getIssueById(repo.fullName, Number(b.sub_issue_id));
    if (!child)
      fail(422, "Validation Failed", [{ resource: "Issue", code: "invalid", field: "sub_issue_id" }]);
    req.store.addSubIssue(
      repo.fullName,
      parent.number,
      child.number,
      req.identity.login,
      b.replace_parent === true,
    );
    return { status: 201, body: req.shapes.issue(repo, child) };
  },

  "issues/remove-sub-issue": (req) => {
    const repo = repoOf(req);
    const parent = issueOf(req, repo);
    const child = req.store.getIssueById(repo.fullName, Number(bodyObject(req).sub_issue_id));
    if (!child) fail(404, "Not Found");
    req.store.removeSubIssue(repo.fullName, parent.number, child.number, req.identity.login);
    return { status: 200, body: req.shapes.issue(repo, child) };
  },

  "issues/get-parent": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const parent = issue.parent !== null ? req.store.getIssue(repo.fullName, issue.parent) : undefined;
    if (!parent) fail(404, "Not Found");
    return { status: 200, body: req.shapes.issue(repo, parent) };
  },

  "issues/list-dependencies-blocked-by": (req) => {
    return listRelatedIssues(req, (issue) => issue.blockedBy);
  },

  "issues/add-blocked-by-dependency": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const blocker = req.store.getIssueById(repo.fullName, Number(bodyObject(req).issue_id));
    if (!blocker) fail(422, "Validation Failed", [{ resource: "Issue", code: "invalid", field: "issue_id" }]);
    req.store.addBlockedBy(repo.fullName, issue.number, blocker.number, req.identity.login);
    return {
      status: 201,
      body: req.shapes.issue(repo, blocker),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/${issue.number}/dependencies/blocked_by` },
    };
  },

  "issues/remove-dependency-blocked-by": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const blocker = req.store.getIssueById(repo.fullName, num(req.params.issue_id));
    if (!blocker) fail(404, "Not Found");
    req.store.removeBlockedBy(repo.fullName, issue.number, blocker.number, req.identity.login);
    return { status: 200, body: req.shapes.issue(repo, blocker) };
  },

  "issues/list-dependencies-blocking": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, req.store.listBlocking(repo.fullName, issue.number), (i) => req.shapes.issue(repo, i));
  },

  // ----- comments and reactions -------------------------------------------------------------------------
  "issues/list-comments": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const since = req.query.since ? new Date(req.query.since) : null;
    const comments = req.store
      .listComments(repo.fullName, issue.number)
      .filter((c) => !since || c.updatedAt.getTime() >= since.getTime());
    return list(req, comments, (c) => req.shapes.comment(repo, c));
  },

  "issues/list-comments-for-repo": (req) => {
    const repo = repoOf(req);
    const since = req.query.since ? new Date(req.query.since) : null;
    let comments = req.store
      .listComments(repo.fullName)
      .filter((c) => !since || c.updatedAt.getTime() >= since.getTime());
    comments = sortByDate(
      comments,
      (c) => (req.query.sort === "updated" ? c.updatedAt : c.createdAt),
      req.query.direction,
      "asc",
    );
    return list(req, comments, (c) => req.shapes.comment(repo, c));
  },

  "issues/create-comment": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const body = str(bodyObject(req), "body") ?? "";
    if (body.length > 65536) {
      fail(422, "Validation Failed", [
        {
          resource: "IssueComment",
          code: "custom",
          field: "body",
          message: "body is too long (maximum is 65536 characters)",
        },
      ]);
    }
    const comment = req.store.createComment(repo.fullName, issue.number, body, req.identity.login);
    return {
      status: 201,
      body: req.shapes.comment(repo, comment),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/comments/${comment.id}` },
    };
  },

  "issues/get-comment": (req) => {
    const repo = repoOf(req);
    const comment = req.store.getComment(repo.fullName, num(req.params.comment_id));
    if (!comment) fail(404, "Not Found");
    return { status: 200, body: req.shapes.comment(repo, comment) };
  },

  "issues/update-comment": (req) => {
    const repo = repoOf(req);
    const comment = req.store.getComment(repo.fullName, num(req.params.comment_id));
    if (!comment) fail(404, "Not Found");
    if (!isAuthorOrTriage(req, repo, comment.user, "write"))
      fail(403, "Resource not accessible by personal access token");
    const body = str(bodyObject(req), "body") ?? "";
    if (body.length > 65536) {
      fail(422, "Validation Failed", [
        {
          resource: "IssueComment",
          code: "custom",
          field: "body",
          message: "body is too long (maximum is 65536 characters)",
        },
      ]);
    }
    req.store.updateComment(repo.fullName, comment.id, body, req.identity.login);
    return { status: 200, body: req.shapes.comment(repo, comment) };
  },

  "issues/delete-comment": (req) => {
    const repo = repoOf(req);
    const comment = req.store.getComment(repo.fullName, num(req.params.comment_id));
    if (!comment) fail(404, "Not Found");
    if (!isAuthorOrTriage(req, repo, comment.user, "write"))
      fail(403, "Resource not accessible by personal access token");
    req.store.deleteComment(repo.fullName, comment.id, req.identity.login);
    return { status: 204 };
  },

  "reactions/list-for-issue-comment": (req) => {
    const repo = repoOf(req);
    const reactions = req.store
      .listReactions(repo.fullName, { commentId: num(req.params.comment_id) })
      .filter((r) => !req.query.content || r.content === req.query.content);
    return list(req, reactions, (r) => req.shapes.reaction(r));
  },

  "reactions/create-for-issue-comment": (req) => {
    const repo = repoOf(req);
    const content = str(bodyObject(req), "content") as ReactionContent;
    const { reaction, created } = req.store.addReaction(
      repo.fullName,
      { commentId: num(req.params.comment_id) },
      content,
      req.identity.login,
    );
    return { status: created ? 201 : 200, body: req.shapes.reaction(reaction) };
  },

  "reactions/delete-for-issue-comment": (req) => {
    const repo = repoOf(req);
    req.store.deleteReaction(
      repo.fullName,
      { commentId: num(req.params.comment_id) },
      num(req.params.reaction_id),
    );
    return { status: 204 };
  },

  "reactions/list-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const reactions = req.store
      .listReactions(repo.fullName, { issueNumber: issue.number })
      .filter((r) => !req.query.content || r.content === req.query.content);
    return list(req, reactions, (r) => req.shapes.reaction(r));
  },

  "reactions/create-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const content = str(bodyObject(req), "content") as ReactionContent;
    const { reaction, created } = req.store.addReaction(
      repo.fullName,
      { issueNumber: issue.number },
      content,
      req.identity.login,
    );
    return { status: created ? 201 : 200, body: req.shapes.reaction(reaction) };
  },

  "reactions/delete-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.deleteReaction(repo.fullName, { issueNumber: issue.number }, num(req.params.reaction_id));
    return { status: 204 };
  },

  // ----- branches, refs, commits -------------------------------------------------------------------------
  "repos/list-branches": async (req) => {
    const repo = repoOf(req);
    const refs = (await req.store.listRefs(repo.fullName)).filter((r) => r.ref.startsWith("refs/heads/"));
    return list(req, refs, (r) => ({
      name: r.ref.slice("refs/heads/".length),
      commit: { sha: r.sha, url: `${req.shapes.repoApi(repo)}/commits/${r.sha}` },
      protected: false,
    }));
  },

  "repos/get-branch": async (req) => {
    const repo = repoOf(req);
    const branch = req.params.branch ?? "";
    const refs = await req.store.listRefs(repo.fullName);
    const found = refs.find((r) => r.ref === `refs/heads/${branch}`);
    if (!found) fail(404, "Branch not found");
    const info = await req.store.getCommit(repo.fullName, found.sha);
    const api = req.shapes.repoApi(repo);
    return {
      status: 200,
      body: {
        name: branch,
        commit: commitJson(req, repo, found.sha, info),
        _links: { self: `${api}/branches/${branch}`, html: `${req.shapes.repoHtml(repo)}/tree/${branch}` },
        protected: false,
        protection: {
          enabled: false,
          required_status_checks: { enforcement_level: "off", contexts: [], checks: [] },
        },
        protection_url: `${api}/branches/${branch}/protection`,
      },
    };
  },

  "repos/get-commit": async (req) => {
    const repo = repoOf(req);
    const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
    if (!sha) fail(422, `No commit found for SHA: ${req.params.ref}`);
    const info = await req.store.getCommit(repo.fullName, sha);
    let files: JsonObject[] = [];
    const parent = info?.parents[0];
    if (parent) {
      try {
        const diff = await req.store.compare(repo.fullName, parent, sha);
        files = diff.files.map((f) => diffEntry(req, repo, sha, f));
      } catch {
        files = [];
      }
    }
    const additions = files.reduce((n, f) => n + Number(f.additions ?? 0), 0);
    const deletions = files.reduce((n, f) => n + Number(f.deletions ?? 0), 0);
    return {
      status: 200,
      body: {
        ...commitJson(req, repo, sha, info),
        stats: { total: additions + deletions, additions, deletions },
        files,
      },
    };
  },

  "repos/compare-commits-with-basehead": async (req) => {
    const repo = repoOf(req);
    const basehead = req.params.basehead ?? "";
    const dots = basehead.indexOf("...");
    if (dots < 0) fail(404, "Not Found");
    const base = basehead.slice(0, dots);
    const head = basehead.slice(dots + 3);
    const baseSha = await req.store.resolveRef(repo.fullName, base);
    const headSha = await req.store.resolveRef(repo.fullName, head);
    if (!baseSha || !headSha) fail(404, "Not Found");
    const diff = await req.store.compare(repo.fullName, base, head);
    const api = req.shapes.repoApi(repo);
    const baseInfo = await req.store.getCommit(repo.fullName, baseSha);
    const behind = diff.behind_by ?? 0;
    return {
      status: 200,
      body: {
        url: `${api}/compare/${basehead}`,
        html_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}`,
        permalink_url: `${req.shapes.repoHtml(repo)}/compare/${baseSha}...${headSha}`,
        diff_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}.diff`,
        patch_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}.patch`,
        base_commit: commitJson(req, repo, baseSha, baseInfo),
        merge_base_commit: commitJson(req, repo, diff.merge_base_sha ?? baseSha, baseInfo),
        status:
          diff.ahead_by === 0 && behind === 0
            ? "identical"
            : diff.ahead_by > 0 && behind > 0
              ? "diverged"
              : diff.ahead_by > 0
                ? "ahead"
                : "behind",
        ahead_by: diff.ahead_by,
        behind_by: behind,
        total_commits: diff.ahead_by,
        commits: (diff.commits ?? []).map((c) => commitJson(req, repo, c.sha, c)),
        files: servedDiffFiles(diff.files, COMPARE_MAX_FILES).map((f) => diffEntry(req, repo, headSha, f)),
      },
    };
  },

  // A tree by SHA or ref, with each entry's git mode (`120000` symlink, `160000` submodule); `recursive` lists
  // every level. A recursive listing is cut at 100,000 entries and says `truncated: true`.
  // https://docs.github.com/en/rest/git/trees#get-a-tree
  "git/get-tree": async (req) => {
    const repo = repoOf(req);
    const ref = req.params.tree_sha ?? "";
    const entries = await req.store.treeEntries(repo.fullName, ref);
    if (!entries) fail(404, "Not Found");
    const sha = (await req.store.resolveRef(repo.fullName, ref)) ?? ref;
    const recursive = req.query.recursive !== undefined;
    const listed = recursive ? entries : entries.filter((e) => !e.path.includes("/"));
    const api = req.shapes.repoApi(repo);
    return {
      status: 200,
      body: {
        sha,
        url: `${api}/git/trees/${sha}`,
        truncated: listed.length > TREE_MAX_ENTRIES,
        tree: listed.slice(0, TREE_MAX_ENTRIES).map((e) => ({
          path: e.path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          ...(e.type === "blob" ? { size: e.size ?? 0, url: `${api}/git/blobs/${e.sha}` } : {}),
          ...(e.type === "tree" ? { url: `${api}/git/trees/${e.sha}` } : {}),
        })),
      },
    };
  },

  "git/get-ref": async (req) => {
    const repo = repoOf(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const found = (await req.store.listRefs(repo.fullName)).find((r) => r.ref === name);
    if (!found) fail(404, "Not Found");
    return { status: 200, body: refJson(req, repo, found.ref, found.sha) };
  },

  "git/list-matching-refs": async (req) => {
    const repo = repoOf(req);
    const prefix = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const refs = (await req.store.listRefs(repo.fullName)).filter((r) => r.ref.startsWith(prefix));
    return list(req, refs, (r) => refJson(req, repo, r.ref, r.sha));
  },

  "git/create-ref": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const ref = str(b, "ref") ?? "";
    const sha = str(b, "sha") ?? "";
    if (!ref.startsWith("refs/") || ref.split("/").length < 3)
      fail(422, "Reference name must start with 'refs/' and have at least two slashes.");
    if (!/^[0-9a-f]{40}$/.test(sha)) fail(422, "Object does not exist");
    await req.store.createRef(repo.fullName, ref, sha, req.identity.login);
    return {
      status: 201,
      body: refJson(req, repo, ref, sha),
      headers: { location: `${req.shapes.repoApi(repo)}/git/${ref}` },
    };
  },

  "git/update-ref": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const sha = str(b, "sha") ?? "";
    await req.store.updateRef(repo.fullName, name, sha, b.force === true, req.identity.login);
    return { status: 200, body: refJson(req, repo, name, sha) };
  },

  "git/delete-ref": async (req) => {
    const repo = repoOf(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    await req.store.deleteRef(repo.fullName, name, req.identity.login);
    return { status: 204 };
  },

  // ----- pull requests ----------------------------------------------------------------------------------
  "pulls/list": async (req) => {
    const repo = repoOf(req);
    const q = req.query;
    const state = q.state ?? "open";
    const head = q.head ? (q.head.includes(":") ? q.head.slice(q.head.indexOf(":") + 1) : q.head) : null;
    const headOwner = q.head?.includes(":") ? q.head.slice(0, q.head.indexOf(":")) : null;
    let pulls = req.store
      .listPulls(repo.fullName)
      .filter((p) => state === "all" || p.state === state)
      .filter(
        (p) =>
          !head ||
          // `head=user:ref-name` matches the owner of the head's repository (a fork's owner for fork PRs):
          // https://docs.github.com/en/rest/pulls/pulls#list-pull-requests
          (p.pull.head.ref === head &&
            (!headOwner ||
              headOwner.toLowerCase() === (p.pull.headRepo?.split("/")[0] ?? repo.owner).toLowerCase())),
      )
      .filter((p) => !q.base || p.pull.base.ref === q.base);
    const dir = (q.direction ?? (q.sort && q.sort !== "created" ? "desc" : "desc")) === "asc" ? 1 : -1;
    const key =
      q.sort === "updated" ? (p: Issue) => p.updatedAt.getTime() : (p: Issue) => p.createdAt.getTime();
    pulls = [...pulls].sort((a, b) => dir * (key(a) - key(b)) || dir * (a.number - b.number));
    return list(req, pulls, (p) => req.shapes.pullSimple(repo, p));
  },

  "pulls/create": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const pull = await req.store.createPull(repo.fullName, {
      title: str(b, "title") ?? "",
      body: strOrNull(b, "body") ?? null,
      head: str(b, "head") ?? "",
      base: str(b, "base") ?? "",
      draft: b.draft === true,
      author: req.identity.login,
      ...(typeof b.maintainer_can_modify === "boolean"
        ? { maintainerCanModify: b.maintainer_can_modify }
        : {}),
    });
    return {
      status: 201,
      body: req.shapes.pull(repo, pull as Issue & { pull: PullFields }),
      headers: { location: `${req.shapes.repoApi(repo)}/pulls/${pull.number}` },
    };
  },

  "pulls/get": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    await req.store.refreshPull(repo.fullName, pull.number);
    return { status: 200, body: req.shapes.pull(repo, pull) };
  },

  "pulls/update": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    if (!isAuthorOrTriage(req, repo, pull.user, "write"))
      fail(403, "Resource not accessible by personal access token");
    req.store.updatePull(
      repo.fullName,
      pull.number,
      {
        ...(str(b, "title") !== undefined ? { title: str(b, "title")! } : {}),
        ...("body" in b ? { body: strOrNull(b, "body") ?? null } : {}),
        ...(str(b, "state") ? { state: str(b, "state") as IssueState } : {}),
        ...(str(b, "base") ? { base: str(b, "base")! } : {}),
      },
      req.identity.login,
    );
    await req.store.refreshPull(repo.fullName, pull.number);
    return { status: 200, body: req.shapes.pull(repo, pull) };
  },

  "pulls/merge": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const result = await req.store.mergePull(
      repo.fullName,
      pull.number,
      {
        ...(str(b, "merge_method") ? { method: str(b, "merge_method") as MergeMethod } : {}),
        ...(str(b, "commit_title") ? { commitTitle: str(b, "commit_title")! } : {}),
        ...(str(b, "commit_message") ? { commitMessage: str(b, "commit_message")! } : {}),
        ...(str(b, "sha") ? { sha: str(b, "sha")! } : {}),
      },
      req.identity.login,
    );
    return { status: 200, body: { sha: result.sha, merged: true, message: result.message } };
  },

  "pulls/check-if-merged": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    return { status: pull.pull.merged ? 204 : 404 };
  },

  "pulls/list-requested-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    return {
      status: 200,
      body: { users: pull.pull.requestedReviewers.map((r) => req.shapes.user(r)), teams: [] },
    };
  },

  "pulls/request-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const reviewers = Array.isArray(b.reviewers) ? b.reviewers.map(String) : [];
    if (reviewers.some((r) => r.toLowerCase() === pull.user.toLowerCase())) {
      fail(422, "Review cannot be requested from pull request author.");
    }
    req.store.requestReviewers(repo.fullName, pull.number, reviewers, req.identity.login);
    return { status: 201, body: req.shapes.pullSimple(repo, pull) };
  },

  "pulls/remove-requested-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    req.store.removeRequestedReviewers(
      repo.fullName,
      pull.number,
      Array.isArray(b.reviewers) ? b.reviewers.map(String) : [],
      req.identity.login,
    );
    return { status: 200, body: req.shapes.pullSimple(repo, pull) };
  },

  "pulls/list-files": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const diff = await req.store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    const files = servedDiffFiles(diff.files, PULL_FILES_MAX);
    return list(req, files, (f) => diffEntry(req, repo, pull.pull.head.sha, f));
  },

  "pulls/list-commits": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const diff = await req.store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    const commits = diff.commits ?? [];
    return list(req, commits, (c) => commitJson(req, repo, c.sha, c));
  },

  "pulls/list-reviews": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const viewer = req.identity.login.toLowerCase();
    const reviews = pull.pull.reviews.filter((r) => r.state !== "PENDING" || r.user.toLowerCase() === viewer);
    return list(req, reviews, (r) => req.shapes.review(repo, pull, r));
  },

  "pulls/list-review-comments": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const comments = pull.pull.reviews.filter((r) => r.state !== "PENDING").flatMap((r) => r.comments);
    return list(req, comments, (c) => req.shapes.reviewComment(repo, pull, c));
  },

  "pulls/get-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const review = pull.pull.reviews.find((r) => r.id === num(req.params.review_id));
    if (!review) fail(404, "Not Found");
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  "pulls/create-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const event = str(b, "event") as "APPROVE" | "REQUEST_CHANGES" | "COMMENT" | undefined;
    const review = req.store.createReview(repo.fullName, pull.number, {
      author: req.identity.login,
      ...(str(b, "body") !== undefined ? { body: str(b, "body")! } : {}),
      ...(event ? { event } : {}),
      ...(str(b, "commit_id") ? { commitId: str(b, "commit_id")! } : {}),
      ...(Array.isArray(b.comments) ? { comments: reviewCommentsInput(b.comments) } : {}),
    });
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  "pulls/submit-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const review = pull.pull.reviews.find((r) => r.id === num(req.params.review_id));
    if (!review) fail(404, "Not Found");
    if (review.user.toLowerCase() !== req.identity.login.toLowerCase()) fail(404, "Not Found");
    req.store.submitReview(
      repo.fullName,
      pull.number,
      review.id,
      str(b, "event") as "APPROVE" | "REQUEST_CHANGES" | "COMMENT",
      str(b, "body"),
      req.identity.login,
    );
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  "pulls/dismiss-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const review = req.store.dismissReview(
      repo.fullName,
      pull.number,
      num(req.params.review_id),
      req.identity.login,
    );
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  // ----- checks and statuses ----------------------------------------------------------------------------
  "checks/create": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const b = bodyObject(req);
    const output = (b.output ?? {}) as Record<string, unknown>;
    const conclusion = str(b, "conclusion") as CheckConclusion | undefined;
    const run = req.store.createCheckRun(repo.fullName, {
      name: str(b, "name") ?? "",
      headSha: str(b, "head_sha") ?? "",
      appSlug: req.identity.kind === "worker" ? "github-actions" : req.app.slug,
      ...(str(b, "status") ? { status: str(b, "status") as CheckStatus } : {}),
      ...(conclusion ? { conclusion } : {}),
      ...(str(b, "started_at") ? { startedAt: new Date(str(b, "started_at")!) } : {}),
      ...(str(b, "completed_at") ? { completedAt: new Date(str(b, "completed_at")!) } : {}),
      output: {
        title: str(output, "title") ?? null,
        summary: str(output, "summary") ?? null,
        text: str(output, "text") ?? null,
      },
      ...(str(b, "details_url") ? { detailsUrl: str(b, "details_url")! } : {}),
      ...(str(b, "external_id") ? { externalId: str(b, "external_id")! } : {}),
      actor: req.identity.login,
    });
    return { status: 201, body: req.shapes.checkRun(repo, run) };
  },

  "checks/update": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const b = bodyObject(req);
    const output = b.output as Record<string, unknown> | undefined;
    const conclusion = str(b, "conclusion") as CheckConclusion | undefined;
    const run = req.store.updateCheckRun(repo.fullName, num(req.params.check_run_id), {
      ...(str(b, "name") ? { name: str(b, "name")! } : {}),
      ...(str(b, "status") ? { status: str(b, "status") as CheckStatus } : {}),
      ...(conclusion ? { conclusion } : {}),
      ...(str(b, "completed_at") ? { completedAt: new Date(str(b, "completed_at")!) } : {}),
      ...(str(b, "started_at") ? { startedAt: new Date(str(b, "started_at")!) } : {}),
      ...(output
        ? {
            output: {
              ...(str(output, "title") !== undefined ? { title: str(output, "title")! } : {}),
              ...(str(output, "summary") !== undefined ? { summary: str(output, "summary")! } : {}),
              ...(str(output, "text") !== undefined ? { text: str(output, "text")! } : {}),
            },
          }
        : {}),
      ...(str(b, "details_url") ? { detailsUrl: str(b, "details_url")! } : {}),
      ...(str(b, "external_id") ? { externalId: str(b, "external_id")! } : {}),
      actor: req.identity.login,
    });
    return { status: 200, body: req.shapes.checkRun(repo, run) };
  },

  "checks/get": (req) => {
    const repo = repoOf(req);
    const run = req.store.getCheckRun(repo.fullName, num(req.params.check_run_id));
    if (!run) fail(404, "Not Found");
    return { status: 200, body: req.shapes.checkRun(repo, run) };
  },

  "checks/list-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
    if (!sha) fail(422, `No commit found for SHA: ${req.params.ref}`);
    let runs = req.store.listCheckRuns(repo.fullName, sha, {
      ...(req.query.check_name ? { checkName: req.query.check_name } : {}),
      ...(req.query.status ? { status: req.query.status as CheckStatus } : {}),
    });
    if ((req.query.filter ?? "latest") === "latest") {
      const seen = new Set<string>();
      runs = runs.filter((r) => {
        const key = `${r.appSlug}|${r.name}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    if (req.query.app_id)
      runs = runs.filter((r) => String(req.shapes.appObject(r.appSlug).id) === req.query.app_id);
    const { items, headers } = paginate(req, runs);
    return {
      status: 200,
      body: { total_count: runs.length, check_runs: items.map((r) => req.shapes.checkRun(repo, r)) },
      headers,
    };
  },

  "checks/list-for-suite": (req) => {
    const repo = repoOf(req);
    const suite = req.store.getCheckSuite(repo.fullName, num(req.params.check_suite_id));
    if (!suite) fail(404, "Not Found");
    const runs = req.store.listCheckRuns(repo.fullName, suite.headSha, { suiteId: suite.id });
    const { items, headers } = paginate(req, runs);
    return {
      status: 200,
      body: { total_count: runs.length, check_runs: items.map((r) => req.shapes.checkRun(repo, r)) },
      headers,
    };
  },

  "checks/get-suite": (req) => {
    const repo = repoOf(req);
    const suite = req.store.getCheckSuite(repo.fullName, num(req.params.check_suite_id));
    if (!suite) fail(404, "Not Found");
    return { status: 200, body: req.shapes.checkSuite(repo, suite) };
  },

  "checks/list-suites-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
    if (!sha) fail(422, `No commit found for SHA: ${req.params.ref}`);
    const suites = req.store.listCheckSuites(repo.fullName, sha);
    const { items, headers } = paginate(req, suites);
    return {
      status: 200,
      body: { total_count: suites.length, check_suites: items.map((s) => req.shapes.checkSuite(repo, s)) },
      headers,
    };
  },

  "checks/create-suite": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const sha = str(bodyObject(req), "head_sha") ?? "";
    const existing = req.store.listCheckSuites(repo.fullName, sha).find((s) => s.appSlug === req.app.slug);
    const suite = existing ?? req.store.ensureCheckSuite(repo.fullName, sha, req.app.slug);
    return { status: existing ? 200 : 201, body: req.shapes.checkSuite(repo, suite) };
  },

  "repos/create-commit-status": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const status = req.store.createStatus(repo.fullName, req.params.sha ?? "", {
      state: str(b, "state") as StatusState,
      ...(str(b, "context") ? { context: str(b, "context")! } : {}),
      ...("description" in b ? { description: strOrNull(b, "description") ?? null } : {}),
      ...("target_url" in b ? { targetUrl: strOrNull(b, "target_url") ?? null } : {}),
      creator: req.identity.login,
    });
    return { status: 201, body: req.shapes.status(repo, status) };
  },

  "repos/list-commit-statuses-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = (await req.store.resolveRef(repo.fullName, req.params.ref ?? "")) ?? req.params.ref ?? "";
    return list(req, req.store.listStatuses(repo.fullName, sha), (s) => req.shapes.status(repo, s));
  },

  "repos/get-combined-status-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
    if (!sha) fail(404, "Not Found");
    const combined = req.store.combinedStatus(repo.fullName, sha);
    const { items, headers } = paginate(req, combined.statuses);
    return {
      status: 200,
      body: {
        state: combined.state,
        statuses: items.map((s) => {
          const { creator: _c, ...rest } = req.shapes.status(repo, s);
          return rest;
        }),
        sha,
        total_count: combined.statuses.length,
        repository: req.shapes.repository(repo),
        commit_url: `${req.shapes.repoApi(repo)}/commits/${sha}`,
        url: `${req.shapes.repoApi(repo)}/commits/${sha}/status`,
      },
      headers,
    };
  },

  // ----- actions ----------------------------------------------------------------------------------------
  "actions/list-repo-workflows": async (req) => {
    const repo = repoOf(req);
    await discoverWorkflows(req, repo);
    const workflows = req.store.listWorkflows(repo.fullName);
    const { items, headers } = paginate(req, workflows);
    return {
      status: 200,
      body: { total_count: workflows.length, workflows: items.map((w) => req.shapes.workflow(repo, w)) },
      headers,
    };
  },

  "actions/get-workflow": async (req) => {
    const repo = repoOf(req);
    return { status: 200, body: req.shapes.workflow(repo, await requireWorkflow(req, repo)) };
  },

  "actions/create-workflow-dispatch": async (req) => {
    const repo = repoOf(req);
    const workflow = await requireWorkflow(req, repo);
    const b = bodyObject(req);
    const ref = str(b, "ref") ?? "";
    const rawInputs = (b.inputs ?? {}) as Record<string, unknown>;
    const inputs: Record<string, string> = {};
    for (const [k, v] of Object.entries(rawInputs)) inputs[k] = typeof v === "string" ? v : JSON.stringify(v);
    // At most 25 inputs and 65,535 characters of them:
    // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs
    if (Object.keys(inputs).length > 25)
      fail(422, "you may only define up to 25 `inputs` for a `workflow_dispatch` event");
    if (JSON.stringify(inputs).length > 65_535)
      fail(422, "inputs are too large: the payload for inputs may be at most 65,535 characters");
    await checkDispatchInputs(req, repo, workflow.path, ref, inputs);
    const run = await req.store.dispatchWorkflow(repo.fullName, workflow.id, {
      ref,
      inputs,
      actor: req.identity.login,
    });
    if (b.return_run_details === true) {
      return {
        status: 200,
        body: {
          workflow_run_id: run.id,
          run_url: `${req.shapes.repoApi(repo)}/actions/runs/${run.id}`,
          html_url: `${req.shapes.repoHtml(repo)}/actions/runs/${run.id}`,
        },
      };
    }
    return { status: 204 };
  },

  "actions/list-workflow-runs": async (req) => {
    const repo = repoOf(req);
    const workflow = await requireWorkflow(req, repo);
    return runsReply(req, repo, filterRuns(req, repo, workflow.id));
  },

  "actions/list-workflow-runs-for-repo": (req) => {
    const repo = repoOf(req);
    return runsReply(req, repo, filterRuns(req, repo));
  },

  "actions/get-workflow-run": (req) => {
    const repo = repoOf(req);
    const run = req.store.getWorkflowRun(repo.fullName, num(req.params.run_id));
    if (!run) fail(404, "Not Found");
    return { status: 200, body: req.shapes.workflowRun(repo, run) };
  },

  "actions/cancel-workflow-run": (req) => {
    const repo = repoOf(req);
    req.store.cancelWorkflowRun(repo.fullName, num(req.params.run_id), req.identity.login);
    return { status: 202, body: {} };
  },

  "actions/force-cancel-workflow-run": (req) => {
    const repo = repoOf(req);
    req.store.cancelWorkflowRun(repo.fullName, num(req.params.run_id), req.identity.login);
    return { status: 202, body: {} };
  },

  "actions/re-run-workflow": (req) => {
    const repo = repoOf(req);
    req.store.rerunWorkflowRun(repo.fullName, num(req.params.run_id), req.identity.login);
    return { status: 201, body: {} };
  },

  "actions/list-jobs-for-workflow-run": (req) => {
    const repo = repoOf(req);
    const run = req.store.getWorkflowRun(repo.fullName, num(req.params.run_id));
    if (!run) fail(404, "Not Found");
    const { items, headers } = paginate(req, run.jobs);
    return {
      status: 200,
      body: { total_count: run.jobs.length, jobs: items.map((j) => req.shapes.job(repo, run, j)) },
      headers,
    };
  },

  "actions/get-job-for-workflow-run": (req) => {
    const repo = repoOf(req);
    const found = req.store.getWorkflowJob(repo.fullName, num(req.params.job_id));
    if (!found) fail(404, "Not Found");
    return { status: 200, body: req.shapes.job(repo, found.run, found.job) };
  },
};

/**
 * The compare endpoint lists at most 300 changed files (its file list is not paginated):
 * https://docs.github.com/en/rest/commits/commits#compare-two-commits
 * The pull request files endpoint pages up to 3,000 files:
 * https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files
 * Both leave `patch` out for binary files (git's "Binary files differ", already absent here) and, once the
 * patches in one response add up to about 20,000 lines, for every later file, whose line counts then read 0
 * (reported at https://github.com/orgs/community/discussions/213491; the sandbox applies it strictly).
 */
const COMPARE_MAX_FILES = 300;
const PULL_FILES_MAX = 3000;
const DIFF_MAX_PATCH_LINES = 20_000;
/** A recursive tree listing is cut here (https://docs.github.com/en/rest/git/trees#get-a-tree). */
const TREE_MAX_ENTRIES = 100_000;

function servedDiffFiles<T extends { patch?: string; additions: number; deletions: number; changes: number }>(
  files: readonly T[],
  maxFiles: number,
): T[] {
  let lines = 0;
  return files.slice(0, maxFiles).map((f) => {
    if (f.patch === undefined) return f;
    const count = f.patch.split("\n").length;
    if (lines + count > DIFF_MAX_PATCH_LINES) {
      lines = DIFF_MAX_PATCH_LINES;
      const { patch: _omitted, ...rest } = f;
      return { ...rest, additions: 0, deletions: 0, changes: 0 } as T;
    }
    lines += count;
    return f;
  });
}

function diffEntry(
  req: RestRequest,
  repo: Repo,
  sha: string,
  f: {
    filename: string;
    status: string;
    additions: number;
    deletions: number;
    changes: number;
    patch?: string;
    previous_filename?: string;
  },
): JsonObject {
  const html = req.shapes.repoHtml(repo);
  return {
    sha: gitBlobSha(Buffer.from(`${sha}:${f.filename}`)),
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.changes,
    blob_url: `${html}/blob/${sha}/${f.filename}`,
    raw_url: `${html}/raw/${sha}/${f.filename}`,
    contents_url: `${req.shapes.repoApi(repo)}/contents/${f.filename}?ref=${sha}`,
    ...(f.patch !== undefined ? { patch: f.patch } : {}),
    ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
  };
}

/** git's blob SHA of some content. */
function gitBlobSha(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

export { ZERO };

/** The `comments` of POST …/reviews (already shape-checked against GitHub's description by the validator). */
function reviewCommentsInput(raw: unknown[]): { path: string; body: string; line?: number }[] {
  return raw.flatMap((entry) => {
    if (typeof entry !== "object" || entry === null) return [];
    const { path, body, line } = entry as { path?: unknown; body?: unknown; line?: unknown };
    if (typeof path !== "string" || typeof body !== "string") return [];
    return [{ path, body, ...(typeof line === "number" ? { line } : {}) }];
  });
}

/** Lists the issues a relation of the path's issue names (sub-issues, blocked-by), paginated like GitHub. */
function listRelatedIssues(req: RestRequest, related: (issue: Issue) => number[]) {
  const repo = repoOf(req);
  const issues = related(issueOf(req, repo))
    .map((n) => req.store.getIssue(repo.fullName, n))
    .filter((i): i is Issue => !!i);
  return list(req, issues, (i) => req.shapes.issue(repo, i));
}
