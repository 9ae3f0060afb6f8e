/**
 * The controller's own human-gate rules for a PR's head (src/core/gates/diff-gate.ts), read once per head SHA and
 * human-gate settings and kept in the state: src/github reads only heads without one.
 */
import { evaluateDiffGate, humanGateDigest } from "../../gates/diff-gate.js";
import { truncate } from "../../text/markdown.js";
import type { PullNode } from "../../world.js";
import type { Reconciling } from "../context.js";

/**
 * The phase that keeps the verdict of every diff read this reconcile (one head per PR), whether or not a review
 * looks at it now, so a PR whose worker is still pushing is not read again on every reconcile.
 */
export function recordDiffGates(ctx: Reconciling): void {
  const gate = humanGateDigest(ctx.config.humanGate);
  for (const diff of ctx.snapshot.pullDiffs ?? []) {
    if (diff.error) continue;
    const rules = evaluateDiffGate(diff, ctx.config.humanGate);
    const others = ctx.state.diffGates.filter((g) => g.pr !== diff.pr);
    const lines = diff.files.reduce((sum, f) => sum + f.changes, 0);
    ctx.state.diffGates = [...others, { pr: diff.pr, sha: diff.sha, rules, gate, lines }].slice(-30);
  }
}

/**
 * The rules at the PR's head, and the lines its diff adds and removes (null when not counted: a verdict kept from
 * before lines were); `waiting` while the diff at this head is unread or unreadable (nothing merges then).
 */
export function verifiedGate(
  ctx: Reconciling,
  pr: PullNode,
): { rules: string[]; lines: number | null } | { waiting: string } {
  // Snapshots without diff facts (built by hand, not by src/github) carry no verdict of their own.
  if (ctx.snapshot.pullDiffs === undefined) return { rules: [], lines: null };
  const gate = humanGateDigest(ctx.config.humanGate);
  const cached = ctx.state.diffGates.find(
    (g) => g.pr === pr.number && g.sha === pr.headSha && g.gate === gate,
  );
  if (cached) return { rules: cached.rules, lines: cached.lines ?? null };
  const diff = ctx.snapshot.pullDiffs.find((d) => d.pr === pr.number && d.sha === pr.headSha);
  if (diff?.error)
    return { waiting: truncate(`could not read the diff of PR #${pr.number}: ${diff.error}`, 200) };
  return { waiting: `reading the diff of PR #${pr.number} at ${pr.headSha.slice(0, 7)}` };
}
