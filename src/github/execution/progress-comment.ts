/**
 * The `progressComment` effect (an epic's checklist, src/core/reconcile/epic-pooling.ts): Autopilot's one comment on an
 * issue carrying a hidden marker, edited in place, never a second one. The comment is looked for among those the
 * snapshot read (the issue's last comments), then, when it is not there, in the issue's whole list before one is
 * created. Only a comment Autopilot's own account wrote counts (by account id): a marker copied into someone
 * else's comment is neither edited nor taken for Autopilot's.
 */
import type { Effect } from "../../core/effects.js";
import type { CommentNode } from "../../core/world.js";
import type { OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { statusOf } from "../transport/errors.js";

type ProgressEffect = Extract<Effect, { type: "progressComment" }>;

interface ProgressContext {
  client: OctokitSurface;
  repo: RepoRef;
  /** Comments the snapshot read. */
  comments: readonly CommentNode[];
  /** Account id of Autopilot's bot (REST `user.id`). */
  botId: number | null;
  write: <T>(call: () => Promise<T>) => Promise<T>;
  read: <T>(call: () => Promise<T>) => Promise<T>;
}

/** The most pages of 100 comments read back for the comment before creating one. */
const MAX_PAGES = 10;

/** Autopilot's own comment with the effect's marker among those the snapshot read, if any. */
function seenComment(comments: readonly CommentNode[], effect: ProgressEffect): CommentNode | undefined {
  return comments.find(
    (c) => c.issue === effect.issue && c.fromApp === true && c.body.includes(effect.marker),
  );
}

/** Nothing to write: the snapshot shows Autopilot's comment with this very text. */
export function progressUnchanged(comments: readonly CommentNode[], effect: ProgressEffect): string | null {
  return seenComment(comments, effect)?.body === effect.body ? "progress comment unchanged" : null;
}

/** Edits the comment in place, or creates it when the issue has none of Autopilot's with the marker. */
export async function writeProgressComment(
  ctx: ProgressContext,
  effect: ProgressEffect,
): Promise<{ status: "done" | "skipped"; detail?: string }> {
  const where = { owner: ctx.repo.owner, repo: ctx.repo.name };
  const id = seenComment(ctx.comments, effect)?.id ?? (await findOlder(ctx, effect));
  if (id !== null) {
    try {
      await ctx.write(() =>
        ctx.client.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", {
          ...where,
          comment_id: id,
          body: effect.body,
        }),
      );
      return { status: "done", detail: `edited comment ${id}` };
    } catch (error) {
      // Deleted since it was read: written again below.
      if (statusOf(error) !== 404) throw error;
    }
  }
  await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      ...where,
      issue_number: effect.issue,
      body: effect.body,
    }),
  );
  return { status: "done", detail: "created" };
}

/** The comment among the issue's older ones (REST, 100 a page, oldest first), by Autopilot's account. */
async function findOlder(ctx: ProgressContext, effect: ProgressEffect): Promise<number | null> {
  if (ctx.botId === null) return null;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        issue_number: effect.issue,
        per_page: 100,
        page,
      }),
    );
    const list = Array.isArray(data) ? (data as { id: number; body?: string; user?: { id?: number } }[]) : [];
    const own = list.find((c) => c.user?.id === ctx.botId && (c.body ?? "").includes(effect.marker));
    if (own) return own.id;
    if (list.length < 100) return null;
  }
  return null;
}
