/**
 * The plan gate's text (src/core/reconcile/commands/plan-approval.ts): the plan a planning run proposes, the comment
 * it is posted in, and reading it back. The comment carries the plan's digest in a hidden marker and the plan in
 * one fenced block; an approved plan reaches the agent only when the block still has that digest, so an edit of
 * the comment after the approval (by anyone who may edit it) is noticed, never handed on.
 */
import { fenceBlock, sanitizeUntrustedText } from "../text/sanitize.js";
import { sha256Hex } from "../text/sha256.js";

/** The longest plan kept (the rest is cut, and the comment says so). */
const MAX_PLAN = 20_000;

const MARKER = /<!-- autopilot:plan digest=([0-9a-f]{64}) -->/;

/**
 * The plan in a planning run's final message: the text between `<plan>` and `</plan>`, else the whole message;
 * cleaned as any agent text quoted in a comment (no hidden markers, no signal tags). Empty when there is none.
 */
export function planOfFinalMessage(message: string): string {
  const tagged = /<plan>([\s\S]*?)<\/plan>/i.exec(message);
  const text = (tagged ? tagged[1]! : message).trim();
  return sanitizeUntrustedText(text, MAX_PLAN).trim();
}

export function planDigest(plan: string): string {
  return sha256Hex(plan);
}

/** The comment a planning run posts on the task issue. */
export function planComment(issue: number, plan: string): string {
  const digest = planDigest(plan);
  return [
    `<!-- autopilot:plan digest=${digest} -->`,
    `### Autopilot's plan for #${issue}`,
    "",
    "No code is written until a person with write access approves this plan:",
    "",
    `- \`/autopilot approve #${issue}\` — a worker implements it;`,
    "- any other comment — a new plan that takes your words into account.",
    "",
    fenceBlock(plan),
  ].join("\n");
}

/** The plan in one of Autopilot's plan comments, whichever digest it names, while its text still has that digest. */
export function planInComment(body: string): string | null {
  const digest = MARKER.exec(body)?.[1];
  return digest ? planFromComment(body, digest) : null;
}

/** The plan in one of Autopilot's plan comments when it still has `digest`; null otherwise. */
export function planFromComment(body: string, digest: string): string | null {
  const marker = MARKER.exec(body);
  if (!marker || marker[1] !== digest) return null;
  const rest = body.slice(marker.index + marker[0].length);
  const block = /^(`{3,})text\n([\s\S]*?)\n\1$/m.exec(rest);
  if (!block) return null;
  const plan = block[2]!;
  return planDigest(plan) === digest ? plan : null;
}

/**
 * Whether a writer's `approve`, written at `writtenAt`, can be of the proposal the result names: not when it was
 * written before the proposal was posted. A writer who asked for changes and then approved while the new
 * planning run was still at work approved what they had read, not the revision they have not seen.
 */
export function postedBefore(
  plan: { postedAt?: string | undefined } | undefined,
  writtenAt: string,
): boolean {
  if (!plan?.postedAt) return true;
  return Date.parse(writtenAt) >= Date.parse(plan.postedAt);
}
