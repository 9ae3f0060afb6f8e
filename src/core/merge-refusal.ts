/**
 * A merge GitHub refused (branch protection, rulesets, a required merge queue, a head that moved): what the
 * refusal means for the person reading the pull request, the one comment that says so (edited in place on
 * each later refusal, found again by its hidden marker), and the "basis" of an attempt — what a new attempt
 * could change. Autopilot asks again only when the basis changed, at most MERGE_REFUSAL_CAP times, and
 * otherwise waits for `/autopilot retry #N`.
 */
import { changeHash } from "./change-hash.js";
import { escapeInline } from "./markdown.js";
import type { PullNode } from "./world.js";

/** Refused attempts at one task's merge before Autopilot waits for a person whatever changes. */
export const MERGE_REFUSAL_CAP = 3;

export type MergeRefusalKind = "queue" | "reviews" | "checks" | "head-moved" | "other";

/** The refusal's kind, from GitHub's message. */
export function mergeRefusalKind(message: string): MergeRefusalKind {
  if (/merge queue/i.test(message)) return "queue";
  if (/approving review|review is required|reviews are required/i.test(message)) return "reviews";
  if (/status check/i.test(message)) return "checks";
  if (/head branch was modified|head branch is out of date/i.test(message)) return "head-moved";
  return "other";
}

/** What a person can do about it. */
export function mergeRefusalAdvice(kind: MergeRefusalKind): string {
  switch (kind) {
    case "queue":
      return "The base branch requires a merge queue, so only the queue may merge it: add the pull request to the merge queue.";
    case "reviews":
      return "The base branch requires approving reviews by people with write access: approve the pull request (GitHub merges it once the requirement is met if auto-merge is on).";
    case "checks":
      return "The base branch requires status checks that are missing, pending or failing on this commit (or the branch must be up to date with its base). Add the branch's required checks to `merge.requiredChecks` in `.github/autopilot.yml` so Autopilot waits for them.";
    case "head-moved":
      return "The branch changed after Autopilot read it; Autopilot will look again at the new commit.";
    case "other":
      return "Check the base branch's protection rules and rulesets.";
  }
}

/** The first line of GitHub's message, without the ruleset heading, for the dashboard. */
export function shortRefusal(message: string): string {
  const lines = message
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^repository rule violations found$/i.test(l));
  return (lines.join(" ") || "refused").slice(0, 200);
}

const MARKER = /<!-- autopilot:merge-refusal sha=(\w{1,64}) attempt=(\d+) -->/;

/** The hidden marker of the refusal comment: the head it refused and the attempt number. */
export function mergeRefusalMarker(sha: string, attempt: number): string {
  return `<!-- autopilot:merge-refusal sha=${sha} attempt=${attempt} -->`;
}

/** The refusal a comment of Autopilot's records, or null. */
export function parseMergeRefusal(body: string): { sha: string; attempt: number; reason: string } | null {
  const match = MARKER.exec(body);
  if (!match) return null;
  const reason = /^> (.*)$/m.exec(body)?.[1] ?? "refused";
  return { sha: match[1]!, attempt: Number(match[2]), reason: reason.slice(0, 200) };
}

/** The PR comment explaining a refusal (one per PR, edited on every later refusal). */
export function mergeRefusalComment(input: {
  pr: number;
  issue: number;
  sha: string;
  attempt: number;
  message: string;
}): string {
  const kind = mergeRefusalKind(input.message);
  const cap = MERGE_REFUSAL_CAP;
  return [
    `**Autopilot could not merge this pull request.** GitHub refused the merge of ${input.sha.slice(0, 7)} (attempt ${input.attempt}):`,
    "",
    `> ${escapeInline(shortRefusal(input.message), 200)}`,
    "",
    mergeRefusalAdvice(kind),
    "",
    `Autopilot tries again by itself only when something that could change the answer changes (a new commit, a review, a check result, the base branch or the merge settings), ${cap} attempts in all; otherwise it waits. After fixing the cause, a person can comment \`/autopilot retry #${input.issue}\` on the tracking issue.`,
    "",
    mergeRefusalMarker(input.sha, input.attempt),
  ].join("\n");
}

/** What a new merge attempt could change: head and base, reviews, check results, the merge settings. */
export function mergeBasis(
  pr: PullNode,
  settings: { method: string; requiredChecks: readonly string[] },
): string {
  const reviews = pr.reviews
    .map((r) => `${r.author ?? ""}:${r.state}:${r.commitSha ?? ""}`)
    .sort()
    .join(",");
  const checks = pr.checks
    .map((c) => `${c.name}:${c.status}:${c.conclusion ?? ""}`)
    .sort()
    .join(",");
  return changeHash(
    [pr.headSha, pr.baseSha ?? "", reviews, checks, settings.method, settings.requiredChecks.join(",")].join(
      "|",
    ),
  );
}
