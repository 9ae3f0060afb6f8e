/**
 * REST handlers of a repository itself: the repository, its collaborators and their permissions, contents.
 */
import type { JsonObject } from "../shapes.js";
import { type Permission, permissionAtLeast, type PushRecord, type Repo } from "../store.js";
import { gitBlobSha } from "./git-shapes.js";
import { fail, list, permissionFlags, repoOf, type RestHandler, type RestRequest } from "./rest-helpers.js";

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

/**
 * What a push was, in the words of "List repository activities"
 * (https://docs.github.com/rest/repos/repos#list-repository-activities): `activity_type` is one of `push`,
 * `force_push`, `branch_creation`, `branch_deletion`, `pr_merge` (a pull request merged by its merge button or
 * the API) and `merge_queue_merge` (merged by a merge queue).
 */
const ACTIVITY_TYPES = [
  "push",
  "force_push",
  "branch_creation",
  "branch_deletion",
  "pr_merge",
  "merge_queue_merge",
] as const;

function activityType(push: PushRecord): (typeof ACTIVITY_TYPES)[number] {
  if (push.created) return "branch_creation";
  if (push.deleted) return "branch_deletion";
  if (push.merge) return push.merge;
  return push.forced ? "force_push" : "push";
}

/** The opaque cursor of one activity (its stable id), as the `before`/`after` parameters take it. */
const cursorOf = (p: PushRecord) => Buffer.from(`activity:${p.id}`).toString("base64url");

/**
 * One page of the activities by cursor, as GitHub pages this list: `after` (the items following that one in
 * the listing's order), `before` (the items preceding it) and `per_page` (at most 100); the Link header names
 * the next (`after`) and previous (`before`) pages by cursor. There is no `page` parameter (the request
 * validator refuses one, as it refuses every parameter GitHub's description lacks).
 */
function activityPage(
  req: RestRequest,
  ordered: PushRecord[],
): { items: PushRecord[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number.parseInt(req.query.per_page ?? "30", 10) || 30));
  const at = (cursor: string) => {
    const i = ordered.findIndex((p) => cursorOf(p) === cursor);
    if (i < 0) fail(422, "Validation Failed", [{ resource: "Activity", code: "invalid", field: "cursor" }]);
    return i;
  };
  let from = 0;
  let to = ordered.length;
  if (req.query.after) from = at(req.query.after) + 1;
  if (req.query.before) {
    to = at(req.query.before);
    from = Math.max(from, to - perPage);
  }
  const items = ordered.slice(from, Math.min(to, from + perPage));
  const link = (rel: string, key: "after" | "before", p: PushRecord) => {
    const u = new URL(req.url.toString());
    u.searchParams.delete("after");
    u.searchParams.delete("before");
    u.searchParams.set(key, cursorOf(p));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  const first = items[0];
  const last = items[items.length - 1];
  if (last && from + items.length < ordered.length) links.push(link("next", "after", last));
  if (first && from > 0) links.push(link("prev", "before", first));
  return { items, headers: links.length ? { link: links.join(", ") } : {} };
}

export const repoEndpoints: Record<string, RestHandler> = {
  // https://docs.github.com/rest/repos/repos#list-repository-activities: who moved which ref, newest first
  // (`direction`), filtered by `ref` (`refs/heads/x` or `x`), `actor` and `activity_type` (one of the documented
  // types, else 422), paged by cursor. The actor is the account whose token pushed: the store records it from
  // the token, never from the commits' author fields. An activity's `id` is its place in the repository's
  // record, the same in every listing.
  "repos/list-activities": (req) => {
    const repo = repoOf(req);
    const type = req.query.activity_type;
    if (type && !(ACTIVITY_TYPES as readonly string[]).includes(type))
      fail(422, "Validation Failed", [{ resource: "Activity", code: "invalid", field: "activity_type" }]);
    const wanted = req.query.ref
      ? req.query.ref.startsWith("refs/")
        ? req.query.ref
        : `refs/heads/${req.query.ref}`
      : null;
    const pushes = req.store
      .listPushes(repo.fullName)
      .filter(
        (p) =>
          (wanted === null || p.ref === wanted) &&
          (!req.query.actor || p.pusher.toLowerCase() === req.query.actor.toLowerCase()) &&
          (!type || activityType(p) === type),
      );
    // Newest first unless `direction=asc`; pushes in the same millisecond in the order they were recorded.
    const dir = req.query.direction === "asc" ? 1 : -1;
    const ordered = pushes.sort((a, b) => dir * (a.at.getTime() - b.at.getTime() || a.id - b.id));
    const { items, headers } = activityPage(req, ordered);
    const body = items.map((p) => ({
      id: p.id,
      node_id: `RA_${repo.id}_${p.id}`,
      before: p.before,
      after: p.after,
      ref: p.ref,
      timestamp: p.at.toISOString(),
      activity_type: activityType(p),
      actor: req.shapes.user(p.pusher),
    }));
    return { status: 200, body, headers };
  },

  "repos/get": (req) => {
    const repo = repoOf(req);
    const viewer = req.identity.kind === "user" ? req.identity.login : undefined;
    // The full repository (https://docs.github.com/rest/repos/repos#get-a-repository) also counts the fork
    // network and the watchers; the sandbox has neither.
    const body: JsonObject = {
      ...req.shapes.repository(repo, viewer),
      network_count: 0,
      subscribers_count: 0,
    };
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
          permissions: permissionFlags(permission),
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
        permissions: permissionFlags(permission),
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
};
