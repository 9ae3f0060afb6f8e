/**
 * A merge GitHub refused (branch protection, rulesets, a required merge queue, a head that moved): what the
 * refusal means for the person reading the pull request, the one comment that says so (edited in place on
 * each later refusal, found again by its hidden marker), and the "basis" of an attempt — what a new attempt
 * could change. Autopilot asks again only when the basis changed, at most MERGE_REFUSAL_CAP times, and
 * otherwise waits for `/autopilot retry #N`.
 *
 * Where the branch's own rules decide (required reviews, required checks still to come, an up-to-date branch,
 * a merge queue), Autopilot hands the head its gates approved to GitHub's own mechanism instead of asking
 * again and again (`mergeMechanismFor`): the same comment then says so, and its marker names the mechanism.
 */
import { changeHash } from "../text/change-hash.js";
import { escapeInline } from "../text/markdown.js";
import type { MergeMechanism, PullNode } from "../world.js";
import { counted } from "../text/plural.js";

/** Refused attempts at one task's merge before Autopilot waits for a person whatever changes. */
export const MERGE_REFUSAL_CAP = 3;

type MergeRefusalKind = "queue" | "reviews" | "checks" | "head-moved" | "other";

/** The refusal's kind, from GitHub's message. */
export function mergeRefusalKind(message: string): MergeRefusalKind {
  if (/merge queue/i.test(message)) return "queue";
  if (/approving review|review is required|reviews are required/i.test(message)) return "reviews";
  if (/status check/i.test(message)) return "checks";
  if (/head branch was modified|head branch is out of date/i.test(message)) return "head-moved";
  return "other";
}

/** What a person can do about it. */
function mergeRefusalAdvice(kind: MergeRefusalKind): string {
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

const MARKER =
  /<!-- autopilot:merge-refusal sha=(\w{1,64}) attempt=(\d+)(?: via=(auto-merge|queue|update-branch))? -->/;

/**
 * The hidden marker of the refusal comment: the head it refused, the attempt number, and the GitHub mechanism
 * the merge was handed to when GitHub accepted one.
 */
function mergeRefusalMarker(sha: string, attempt: number, via?: MergeMechanism | null): string {
  return `<!-- autopilot:merge-refusal sha=${sha} attempt=${attempt}${via ? ` via=${via}` : ""} -->`;
}

/** The refusal a comment of Autopilot's records, or null. */
export function parseMergeRefusal(
  body: string,
): { sha: string; attempt: number; reason: string; via: MergeMechanism | null } | null {
  const match = MARKER.exec(body);
  if (!match) return null;
  const reason = /^> (.*)$/m.exec(body)?.[1] ?? "refused";
  return {
    sha: match[1]!,
    attempt: Number(match[2]),
    reason: reason.slice(0, 200),
    via: (match[3] as MergeMechanism | undefined) ?? null,
  };
}

/**
 * GitHub's own mechanism that can merge the approved head where the immediate merge was refused, or null when
 * none helps (a failing required check, a head that moved, an unknown rule): a required merge queue → enqueue;
 * a branch behind its base under "require branches to be up to date" (GitHub then calls its required checks
 * "expected", so only `mergeStateStatus` tells) → update the branch; required reviews, or required checks
 * still to come → auto-merge, which merges exactly that head once the branch's requirements are met.
 */
export function mergeMechanismFor(
  message: string,
  mergeState: string | null | undefined,
): MergeMechanism | null {
  const kind = mergeRefusalKind(message);
  if (kind === "queue") return "queue";
  if (kind === "head-moved") return null;
  if ((mergeState ?? "").toUpperCase() === "BEHIND") return "update-branch";
  if (kind === "reviews") return "auto-merge";
  if (kind === "checks" && !/is failing|have not succeeded|failed/i.test(message)) return "auto-merge";
  return null;
}

/** What GitHub still waits for before its auto-merge merges, from the refusal. */
function autoMergeWaitsFor(reason: string): string {
  return mergeRefusalKind(reason) === "reviews"
    ? "an approving review by someone with write access is in (the branch requires it)"
    : "the branch's required checks have passed";
}

/** The dashboard line while GitHub's mechanism has the merge. */
export function mergeHandedLine(input: {
  via: MergeMechanism;
  sha: string;
  reason: string;
  base: string;
  queuePosition?: number | null;
}): string {
  switch (input.via) {
    case "auto-merge":
      return `auto-merge is on: GitHub merges ${input.sha.slice(0, 7)} once ${autoMergeWaitsFor(input.reason)}`;
    case "queue":
      return input.queuePosition
        ? `in the merge queue, position ${input.queuePosition}`
        : "in the merge queue (the branch requires it)";
    case "update-branch":
      return `updating the branch with \`${input.base}\` (GitHub requires it up to date); its checks run again after`;
  }
}

/** The dashboard line after GitHub updated the branch, while the new head's checks and gates run. */
export function branchUpdatedLine(base: string, waiting: string): string {
  return `branch updated with \`${base}\`; waiting for its checks (${waiting})`;
}

/** What a person can do when GitHub also refused its own mechanism. */
function mechanismAdvice(via: MergeMechanism, message: string, issue: number): string {
  const retry = `\`/autopilot retry #${issue}\``;
  if (via === "auto-merge") {
    if (/clean status/i.test(message))
      return `GitHub says the pull request can be merged as it is now, so auto-merge does not apply: Autopilot asks again on the next change, or comment ${retry}.`;
    if (/not allowed|not enabled|disabled|allow auto-merge/i.test(message))
      return `Turn on **Allow auto-merge** in the repository's Settings → General → Pull Requests: GitHub then merges the commit Autopilot approved once the branch's requirements are met. Then comment ${retry}.`;
    return `Turn on **Allow auto-merge** in the repository's Settings → General → Pull Requests, or meet the requirement by hand, then comment ${retry}.`;
  }
  if (via === "queue")
    return `Check the base branch's merge queue (its ruleset), or add the pull request to the queue by hand; then comment ${retry} if it does not merge.`;
  return `Bring the branch up to date with its base by hand ("Update branch" on the pull request), or turn off "Require branches to be up to date before merging"; then comment ${retry}.`;
}

const MECHANISM_NAME: Record<MergeMechanism, string> = {
  "auto-merge": "turn on auto-merge",
  queue: "add the pull request to the merge queue",
  "update-branch": "update the branch with its base",
};

/**
 * The PR comment once GitHub accepted its own mechanism (the same comment as a refusal's, edited in place): what
 * GitHub does next, and that Autopilot takes it back if the head changes.
 */
export function mergeHandedComment(input: {
  pr: number;
  issue: number;
  sha: string;
  attempt: number;
  message: string;
  via: MergeMechanism;
  base: string;
}): string {
  const short = input.sha.slice(0, 7);
  const refusal = `> ${escapeInline(shortRefusal(input.message), 200)}`;
  const lead: Record<MergeMechanism, string[]> = {
    "auto-merge": [
      `**Auto-merge is on for this pull request.** Every Autopilot gate passed on ${short}, but GitHub refused to merge it yet (attempt ${input.attempt}):`,
      "",
      refusal,
      "",
      `So Autopilot turned on GitHub's auto-merge for exactly ${short}: GitHub merges it once ${autoMergeWaitsFor(input.message)}. Autopilot does not ask again meanwhile. If the branch gets a new commit, Autopilot turns auto-merge off and checks the new commit first.`,
    ],
    queue: [
      `**This pull request is in the merge queue.** Every Autopilot gate passed on ${short}; the base branch merges only through its merge queue (attempt ${input.attempt}):`,
      "",
      refusal,
      "",
      `So Autopilot added ${short} to the queue: GitHub merges it when its turn comes and the queue's checks pass.`,
    ],
    "update-branch": [
      `**Autopilot updated this branch with \`${input.base}\`.** Every Autopilot gate passed on ${short}, but the base branch requires branches to be up to date before merging (attempt ${input.attempt}):`,
      "",
      refusal,
      "",
      "GitHub merges the base into the branch; the checks and Autopilot's gates then run again on the new commit, and Autopilot merges it when they pass.",
    ],
  };
  return [...lead[input.via], "", mergeRefusalMarker(input.sha, input.attempt, input.via)].join("\n");
}

/** The PR comment explaining a refusal (one per PR, edited on every later refusal). */
export function mergeRefusalComment(input: {
  pr: number;
  issue: number;
  sha: string;
  attempt: number;
  message: string;
  /** GitHub's own mechanism Autopilot tried after the refusal, and GitHub's answer refusing that too. */
  tried?: { via: MergeMechanism; message: string };
}): string {
  const kind = mergeRefusalKind(input.message);
  const cap = MERGE_REFUSAL_CAP;
  const tried = input.tried
    ? [
        mergeRefusalAdvice(kind),
        "",
        `Autopilot then tried to ${MECHANISM_NAME[input.tried.via]}, and GitHub refused that too:`,
        "",
        `> ${escapeInline(shortRefusal(input.tried.message), 200)}`,
        "",
        mechanismAdvice(input.tried.via, input.tried.message, input.issue),
      ]
    : [mergeRefusalAdvice(kind)];
  return [
    `**Autopilot could not merge this pull request.** GitHub refused the merge of ${input.sha.slice(0, 7)} (attempt ${input.attempt}):`,
    "",
    `> ${escapeInline(shortRefusal(input.message), 200)}`,
    "",
    ...tried,
    "",
    `Autopilot tries again by itself only when something that could change the answer changes (a new commit, a review, a check result, the base branch or the merge settings), ${counted(cap, "attempt")} in all; otherwise it waits. After fixing the cause, a person can comment \`/autopilot retry #${input.issue}\` on the tracking issue.`,
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
