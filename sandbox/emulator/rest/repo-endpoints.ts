/**
 * REST handlers of a repository itself: the repository, its collaborators and their permissions, contents.
 */
import type { JsonObject } from "../shapes.js";
import { type Permission, permissionAtLeast, type PushRecord, type Repo } from "../store.js";
import { gitBlobSha } from "./git-shapes.js";
import {
  fail,
  list,
  permissionFlags,
  repoOf,
  type RestHandler,
  type RestRequest,
  sortByDate,
} from "./rest-helpers.js";

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
 * (https://docs.github.com/rest/repos/repos#list-repository-activities): `branch_creation`, `branch_deletion`,
 * `force_push` or `push` (the sandbox records a merge's move of the base branch as the merger's push).
 */
function activityType(push: PushRecord): string {
  if (push.created) return "branch_creation";
  if (push.deleted) return "branch_deletion";
  return push.forced ? "force_push" : "push";
}

export const repoEndpoints: Record<string, RestHandler> = {
  // https://docs.github.com/rest/repos/repos#list-repository-activities: who moved which ref, newest first
  // (`direction`), filtered by `ref` (`refs/heads/x` or `x`), `actor` and `activity_type`. The actor is the
  // account whose token pushed: the store records it from the token, never from the commits' author fields.
  "repos/list-activities": (req) => {
    const repo = repoOf(req);
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
          (!req.query.activity_type || activityType(p) === req.query.activity_type),
      );
    const ordered = sortByDate(pushes, (p) => p.at, req.query.direction, "desc");
    return list(req, ordered, (p) => ({
      id: pushes.indexOf(p) + 1,
      node_id: `RA_${repo.id}_${pushes.indexOf(p) + 1}`,
      before: p.before,
      after: p.after,
      ref: p.ref,
      timestamp: p.at.toISOString(),
      activity_type: activityType(p),
      actor: req.shapes.user(p.pusher),
    }));
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
