/** What a reconcile says: dashboard incidents, reactions and replies to comments, one-time notices on tasks. */
import type { TaskRecord } from "../dashboard/index.js";
import type { Reaction } from "../effects.js";
import { escapeInline, truncate } from "../text/markdown.js";
import { oweReaction } from "./commands/owed-reactions.js";
import { note, type Reconciling } from "./context.js";

export function incident(ctx: Reconciling, kind: string, message: string): void {
  ctx.state.incidents.push({ at: ctx.now.toISOString(), kind, message: truncate(message, 400) });
}

/** An incident, unless the same one is already on the dashboard. */
export function incidentOnce(ctx: Reconciling, kind: string, message: string): void {
  const text = truncate(message, 400);
  if (!ctx.state.incidents.some((i) => i.kind === kind && i.message === text)) incident(ctx, kind, message);
}

/**
 * The comment a reaction or reply is for: an issue comment's id, or a comment with its kind (a review's line
 * comment: GitHub numbers those apart, and reacting to one is another endpoint).
 */
type CommentRef = number | { id: number; review?: boolean | undefined };

/** A reaction to a comment, owed until a snapshot shows it (commands/owed-reactions.ts). */
export function react(ctx: Reconciling, comment: CommentRef, content: Reaction): void {
  const id = typeof comment === "number" ? comment : comment.id;
  const review = typeof comment !== "number" && Boolean(comment.review);
  if (!review) ctx.effects.push({ type: "react", commentId: id, content });
  else ctx.effects.push({ type: "react", commentId: id, content, review: true });
  oweReaction(ctx, id, content, review);
}

/** A reply quoting the command line it answers, once per comment (a line comment's: on its pull request). */
export function reply(
  ctx: Reconciling,
  issue: number,
  comment: CommentRef,
  line: string,
  text: string,
): void {
  const key =
    typeof comment === "number"
      ? `reply-${comment}`
      : `reply-${comment.review ? "review-" : ""}${comment.id}`;
  ctx.effects.push({ type: "comment", issue, body: `> ${escapeInline(line, 120)}\n\n${text}`, key });
}

/** A comment on the task, once per `key` (the record remembers the last keys). */
export function notice(ctx: Reconciling, n: number, record: TaskRecord, key: string, body: string): void {
  if (record.notices?.includes(key)) return;
  record.notices = [...(record.notices ?? []), key].slice(-12);
  ctx.effects.push({ type: "comment", issue: n, body, key });
  note(ctx, `#${n}: notice ${key}`);
}
