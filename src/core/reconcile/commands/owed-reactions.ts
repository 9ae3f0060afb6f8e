/**
 * Every command is acknowledged, even when the reaction's write is lost. The tracking issue's state, written
 * first among a reconcile's effects, marks a comment processed; a reaction that fails after it (the process
 * killed, a write held by GitHub's secondary limit when the Actions job ends) would never be given again, as the
 * comment is never read as new again. So the state keeps the reactions it gave (`reactions`) until a snapshot
 * shows Autopilot's reaction on the comment, and each reconcile gives again those it does not show: GitHub keeps
 * one reaction of a kind per user and answers a repeat with the existing one
 * (https://docs.github.com/en/rest/reactions/reactions#create-reaction-for-an-issue-comment), so a repeat after
 * a stale read costs one request and changes nothing. It is given again a few times at most: a comment whose
 * reactions keep reading as not Autopilot's (a reaction GitHub refuses, a read that does not show it) must not
 * cost a request on every reconcile for a day.
 */
import type { DashboardState } from "../../dashboard/index.js";
import type { Reaction } from "../../effects.js";
import type { CommentNode } from "../../world.js";
import type { Reconciling } from "../context.js";

/** How long a reaction is owed: a comment gone from the snapshot for a day is not answered any more. */
const OWED_HOURS = 24;
/** How many reactions the state keeps (the oldest go first). */
const KEPT = 30;
/** How many times a reaction is given again before Autopilot stops trying. */
export const AGAIN_AT_MOST = 3;

type Owed = DashboardState["reactions"][number];

function commentOf(ctx: Reconciling, owed: Owed): CommentNode | undefined {
  return ctx.snapshot.comments.find((c) => c.id === owed.id && Boolean(c.review) === Boolean(owed.review));
}

function expired(ctx: Reconciling, owed: Owed): boolean {
  return ctx.nowMs - Date.parse(owed.at) > OWED_HOURS * 3_600_000;
}

/** The reactions owed from earlier reconciles that the snapshot shows the comment without: given again. */
export function giveOwedReactions(ctx: Reconciling): void {
  for (const owed of ctx.state.reactions) {
    if (expired(ctx, owed) || (owed.again ?? 0) >= AGAIN_AT_MOST) continue;
    if (commentOf(ctx, owed)?.acknowledged !== false) continue;
    owed.again = (owed.again ?? 0) + 1;
    ctx.effects.push({
      type: "react",
      commentId: owed.id,
      content: owed.content,
      ...(owed.review ? { review: true as const } : {}),
    });
  }
}

/** Records a reaction given now as owed until seen; drops those the snapshot shows, and expired ones. */
export function oweReaction(ctx: Reconciling, id: number, content: Reaction, review: boolean): void {
  const kept = ctx.state.reactions.filter(
    (owed) => !expired(ctx, owed) && commentOf(ctx, owed)?.acknowledged !== true && owed.id !== id,
  );
  kept.push({ id, content, ...(review ? { review: true } : {}), at: ctx.now.toISOString() });
  ctx.state.reactions = kept.slice(-KEPT);
}
