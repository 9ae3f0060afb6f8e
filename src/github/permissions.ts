/** Whose repository permission a reconcile needs, and looking it up (cached per repository for a while). */
import { linkedBeforeLabel } from "../core/tasks/sub-issue-links.js";
import type { CommentNode, Permission, WorldSnapshot } from "../core/world.js";
import { isNotCollaborator } from "./transport/errors.js";
import { PERMISSION_CACHE_MS, type SnapshotContext } from "./snapshot/snapshot-context.js";

/**
 * Logins whose permission a decision may need: authors of command comments, whoever applied the ready label,
 * whoever linked an epic's sub-issue after that label, approvers of Autopilot's pull requests, and the last editor
 * of the tracking issue (ticked checkboxes).
 * Bots are left out (their comments are never commands).
 */
export function relevantLogins(
  world: WorldSnapshot,
  options: {
    readyLabel: string;
    /** Comments already processed (a command cursor): their authors need no lookup. */
    processed?: (comment: CommentNode) => boolean;
    /** Comments on issues with this label are looked up even when processed: they may answer the question. */
    needsHumanLabel?: string;
  },
): string[] {
  const { readyLabel, needsHumanLabel } = options;
  const waiting = new Set(
    world.issues
      .filter((i) => i.state === "open" && !!needsHumanLabel && i.labels.includes(needsHumanLabel))
      .map((i) => i.number),
  );
  const logins = new Set<string>();
  const add = (login: string | null | undefined) => {
    if (!login || /\[bot\]$/i.test(login) || login.toLowerCase() === world.botLogin.toLowerCase()) return;
    logins.add(login);
  };
  // Every new comment may matter: commands, and answers to a needs-human question.
  for (const c of world.comments) {
    if (options.processed?.(c) && !waiting.has(c.issue)) continue;
    add(c.author);
  }
  for (const i of world.issues)
    if (i.state === "open" && i.labels.includes(readyLabel)) {
      add(i.readyLabeledBy);
      add(i.bestOfLabeledBy);
    }
  // A sub-issue linked after an epic's label is pooled only when a writer linked it (src/core/tasks/sub-issue-links.ts);
  // one linked before needs no lookup. The links are read only for an epic about to pool.
  for (const i of world.issues)
    if (i.state === "open" && i.labels.includes(readyLabel))
      for (const link of i.subIssueLinks ?? [])
        if (!linkedBeforeLabel(link, i.readyLabeledAt ?? null)) add(link.by);
  // Edits of a task's text count only from writers (see src/core/tasks/task-text.ts).
  for (const i of world.issues) {
    if (i.state !== "open") continue;
    for (const e of i.edits ?? []) if (!i.readyLabeledAt || e.at > i.readyLabeledAt) add(e.by);
  }
  // Approvals satisfy the human gate and requested changes send a task back: both count only from writers.
  for (const p of world.pulls)
    for (const r of p.reviews) if (r.state === "APPROVED" || r.state === "CHANGES_REQUESTED") add(r.author);
  // An open review conversation counts by its writers' words only (src/core/gates/gates.ts).
  for (const p of world.pulls) for (const t of p.openThreads ?? []) for (const c of t.comments) add(c.author);
  add(world.trackingIssue?.lastEditedBy);
  return [...logins].sort();
}

const PERMISSIONS = new Set<Permission>(["admin", "maintain", "write", "triage", "read", "none"]);

/** The permission of each login: the personal repository's owner is admin, recent lookups are reused. */
export async function lookupPermissions(
  ctx: SnapshotContext,
  logins: string[],
  owner: { __typename: string; login: string } | null,
): Promise<Record<string, Permission>> {
  const out: Record<string, Permission> = {};
  for (const login of logins) {
    if (owner?.__typename === "User" && owner.login.toLowerCase() === login.toLowerCase()) {
      out[login] = "admin"; // the owner of a personal repository
      continue;
    }
    const key = login.toLowerCase();
    const cached = ctx.memory.permissions.get(key);
    if (cached && ctx.now() - cached.at < PERMISSION_CACHE_MS) {
      out[login] = cached.permission;
      continue;
    }
    out[login] = await permissionOf(ctx, login);
    ctx.memory.permissions.set(key, { permission: out[login], at: ctx.now() });
  }
  return out;
}

async function permissionOf(
  ctx: Pick<SnapshotContext, "client" | "read" | "repo">,
  login: string,
): Promise<Permission> {
  try {
    const response = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        username: login,
      }),
    );
    const data = response.data as { permission?: string; role_name?: string };
    const role = (data.role_name ?? "").toLowerCase() as Permission;
    if (PERMISSIONS.has(role)) return role;
    const permission = (data.permission ?? "none").toLowerCase() as Permission;
    return PERMISSIONS.has(permission) ? permission : "none";
  } catch (error) {
    if (isNotCollaborator(error)) return "none";
    throw error;
  }
}
