/**
 * The `comment` effect (a keyed comment is written once: its hidden marker, `<!-- autopilot:key -->`, is found
 * in Autopilot's own comments) and `pinIssue` (the tracking issue pinned; a repository whose pins are full gets
 * one note instead).
 */
import type { Effect } from "../../core/effects.js";
import { ISSUE_NODE_ID_QUERY, PIN_ISSUE_MUTATION } from "../queries.js";
import { graphqlAllowingNotFound } from "../snapshot/snapshot.js";
import { describeError } from "../transport/errors.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { repoParams } from "./effect-context.js";

type CommentEffect = Extract<Effect, { type: "comment" }>;
type PinEffect = Extract<Effect, { type: "pinIssue" }>;

function commentMarker(key: string): string {
  return `<!-- autopilot:${key.replace(/-{2,}/g, "-").replace(/[<>]/g, "")} -->`;
}

export function commentTarget(effect: CommentEffect): string {
  return `comment#${effect.issue}:${effect.key ?? effect.body}`;
}

/** A keyed comment already written, in this run or before (no request). */
export function commentAlreadyWritten(ctx: ExecContext, effect: CommentEffect): string | null {
  if (!effect.key) return null;
  const marker = commentMarker(effect.key);
  if (ctx.run.commentKeys.has(`${effect.issue}:${marker}`)) return "comment already written in this run";
  // Only Autopilot's own comment counts: a key copied into someone else's comment must not silence it.
  const exists = ctx.facts?.allComments.some(
    (c) => c.issue === effect.issue && c.fromApp === true && c.body.includes(marker),
  );
  return exists ? "a comment with this key exists" : null;
}

export async function writeComment(ctx: ExecContext, effect: CommentEffect): Promise<EffectOutcome> {
  const marker = effect.key ? commentMarker(effect.key) : null;
  const body = marker ? `${effect.body}\n\n${marker}` : effect.body;
  await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      ...repoParams(ctx),
      issue_number: effect.issue,
      body,
    }),
  );
  if (marker) ctx.run.commentKeys.add(`${effect.issue}:${marker}`);
  return { effect, status: "done" };
}

export function pinAlreadyDone(ctx: ExecContext, effect: PinEffect): string | null {
  const tracking = ctx.world?.trackingIssue;
  const number = effect.issue > 0 ? effect.issue : ctx.run.trackingIssue;
  return tracking && tracking.number === number && tracking.pinned ? "already pinned" : null;
}

const PINS_FULL = /(maximum|limit|full|too many|more than|cannot pin more|already has \d)/i;

export async function pin(ctx: ExecContext, effect: PinEffect): Promise<EffectOutcome> {
  const number = effect.issue > 0 ? effect.issue : ctx.run.trackingIssue;
  if (number === null) return { effect, status: "skipped", detail: "no tracking issue yet" };
  let nodeId =
    ctx.facts?.issueNodeIds.get(number) ??
    (ctx.world?.trackingIssue?.number === number ? ctx.facts?.trackingNodeId : null) ??
    null;
  if (!nodeId) {
    const data = await graphqlAllowingNotFound<{
      repository: { issue: { id: string; isPinned: boolean | null } | null } | null;
    }>(ctx, ISSUE_NODE_ID_QUERY, { owner: ctx.repo.owner, name: ctx.repo.name, number });
    const issue = data.repository?.issue;
    if (!issue) return { effect, status: "failed", detail: `issue #${number} not found` };
    if (issue.isPinned) return { effect, status: "skipped", detail: "already pinned" };
    nodeId = issue.id;
  }
  try {
    await ctx.write(() => ctx.client.graphql(PIN_ISSUE_MUTATION, { issueId: nodeId }));
    return { effect, status: "done", issue: number };
  } catch (error) {
    const e = error as { name?: string; errors?: { message?: string }[] };
    if (e?.name !== "GraphqlResponseError") throw error;
    const message = (e.errors ?? []).map((x) => x.message ?? "").join("; ");
    if (/pin/i.test(message) && PINS_FULL.test(message)) {
      const note: CommentEffect = {
        type: "comment",
        issue: number,
        key: "pins-full",
        body:
          "Autopilot could not pin this dashboard: the repository already has the most pinned issues GitHub " +
          "allows. Unpin one (or pin this issue by hand) to keep the dashboard at the top of the issue list; " +
          "Autopilot works the same either way.",
      };
      if (!commentAlreadyWritten(ctx, note)) await writeComment(ctx, note);
      ctx.log.warn(`could not pin #${number}: ${message}`);
      return { effect, status: "skipped", issue: number, detail: "the repository's pins are full" };
    }
    return { effect, status: "failed", detail: message || describeError(error) };
  }
}
