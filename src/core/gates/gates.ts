/**
 * The merge gates of a task's pull request, pure:
 *
 * - the checks on the head SHA are all completed and successful (`merge.requiredChecks`, or all of them);
 *   Autopilot's own checks never count, so the controller does not wait on its own run;
 * - no write-access reviewer's latest review requests changes;
 * - no unresolved review conversation a write-access reviewer spoke in (only writers' comments count);
 * - GitHub can merge it (a conflict sends the task back);
 * - when the human gate fired: an approval of the current head by someone with write access.
 *
 * Failing checks, changes requested on the head, conversations a writer spoke in since the last push and
 * conflicts become feedback for a worker, once per head SHA; a conversation older than the last push waits for
 * its reviewer to resolve it (or to say more). Also the texts of the comments the gates lead to.
 */
import { hasWriteAccess, parseCommand, sameLogin } from "../tasks/commands.js";
import { reviewerApprovedHead } from "./reviewer-gate.js";
import { code, escapeInline, quietLogin } from "../text/markdown.js";
import { fenceUntrusted, sanitizeUntrustedText } from "../text/sanitize.js";
import type { CheckNode, PullNode, ReviewNode, WorldSnapshot } from "../world.js";
import { counted } from "../text/plural.js";

export type FeedbackKind = "checks" | "changes" | "threads" | "conflicts";

export type Verdict =
  | { action: "merge"; sha: string }
  | { action: "feedback"; kinds: FeedbackKind[]; summary: string }
  /** `kind` names the wait for an approval the human gate asks for. */
  /** `kind` names a wait on people: an approval the human gate asks for, or a reviewer or person to act. */
  | { action: "wait"; reason: string; kind?: "human-gate" | "people" }
  | { action: "fail"; reason: string };

export interface GateOptions {
  /** `merge.requiredChecks`; empty means every check. */
  requiredChecks: readonly string[];
  botLogin: string;
  permissions: WorldSnapshot["permissions"];
  /** Human-gate rules that fired; empty means the gate did not fire. */
  humanGateRules: readonly string[];
  /** Head SHA the last feedback was about. */
  feedbackSha: string | null;
  autoMerge: boolean;
  now: Date;
  checksTimeoutMinutes: number;
  /** `review.required`: the head needs Autopilot's reviewer's approval, or a writer's (reviewer-gate.ts). */
  reviewerRequired?: boolean;
}

interface GateEvaluation {
  checks: {
    state: "passing" | "pending" | "failing" | "none";
    failing: CheckNode[];
    pending: string[];
    /** Required checks that have not appeared. */
    missing: string[];
    /** No check (or a required one is missing) longer than `checksTimeoutMinutes` after the last push. */
    overdue: boolean;
  };
  reviews: {
    /** Write-access reviewers whose latest review requests changes on the current head. */
    changesRequested: ReviewNode[];
    /** Write-access reviewers whose latest review requests changes on an earlier commit (waiting for a re-review). */
    staleChangesRequested: ReviewNode[];
    /** Write-access reviewers whose latest review approves the current head. */
    approvers: string[];
  };
  humanGate: { required: boolean; approved: boolean };
  verdict: Verdict;
}

const PASSING = new Set(["success", "neutral", "skipped"]);

/**
 * The merge gates of one PR:
 * - checks on the head SHA, all completed and successful (the required ones, or all); Autopilot's own never count;
 * - no write-access reviewer's latest review requests changes;
 * - mergeable (a conflict sends the task back);
 * - when the human gate fired: an approval of the current head by someone with write access;
 * - with `review.required`: Autopilot's reviewer's approval of the current head, or a writer's (reviewer-gate.ts).
 * Failing checks, changes requested on the head and conflicts become feedback for a worker — once per head SHA.
 */
export function evaluatePullRequest(pr: PullNode, options: GateOptions): GateEvaluation {
  // Checks: latest per name, Autopilot's own left out.
  const botApp = options.botLogin.toLowerCase().replace(/\[bot\]$/, "");
  const byName = new Map<string, CheckNode>();
  for (const check of pr.checks) {
    if (check.isAutopilot || (check.app && check.app.toLowerCase() === botApp)) continue;
    byName.set(check.name.toLowerCase(), check);
  }
  const required = options.requiredChecks.map((n) => n.toLowerCase());
  const relevant =
    required.length > 0
      ? required.map((n) => byName.get(n)).filter((c): c is CheckNode => !!c)
      : [...byName.values()];
  const missing = required
    .filter((n) => !byName.has(n))
    .map((n) => options.requiredChecks.find((r) => r.toLowerCase() === n) ?? n);
  const failing = relevant.filter(
    (c) => c.status === "completed" && !PASSING.has((c.conclusion ?? "").toLowerCase()),
  );
  const pending = relevant.filter((c) => c.status !== "completed").map((c) => c.name);
  const since = Date.parse(pr.lastPushAt ?? pr.createdAt);
  const overdue =
    !Number.isNaN(since) && options.now.getTime() - since > options.checksTimeoutMinutes * 60_000;
  const checkState: GateEvaluation["checks"]["state"] =
    failing.length > 0
      ? "failing"
      : relevant.length === 0 || missing.length > 0
        ? "none"
        : pending.length > 0
          ? "pending"
          : "passing";

  // Reviews: the latest decisive review per write-access author.
  const latest = new Map<string, ReviewNode>();
  const ordered = [...pr.reviews].sort(
    (a, b) => (Date.parse(a.submittedAt ?? "") || 0) - (Date.parse(b.submittedAt ?? "") || 0),
  );
  for (const review of ordered) {
    if (!review.author || sameLogin(review.author, options.botLogin)) continue;
    if (!hasWriteAccess(options.permissions, review.author)) continue;
    if (review.state !== "APPROVED" && review.state !== "CHANGES_REQUESTED" && review.state !== "DISMISSED")
      continue;
    latest.set(review.author.toLowerCase(), review);
  }
  const lastPush = Date.parse(pr.lastPushAt ?? "");
  const onHead = (r: ReviewNode) =>
    r.commitSha
      ? r.commitSha === pr.headSha
      : Number.isNaN(lastPush) || (Date.parse(r.submittedAt ?? "") || 0) >= lastPush;
  const changes = [...latest.values()].filter((r) => r.state === "CHANGES_REQUESTED");
  const changesRequested = changes.filter(onHead);
  const staleChangesRequested = changes.filter((r) => !onHead(r));
  // An approval counts only for the current head: by its commit, or (commit unknown) given after the last push.
  const approvesHead = (r: ReviewNode) =>
    r.commitSha
      ? r.commitSha === pr.headSha
      : !Number.isNaN(lastPush) && (Date.parse(r.submittedAt ?? "") || 0) > lastPush;
  const approvers = [...latest.values()]
    .filter((r) => r.state === "APPROVED" && approvesHead(r))
    .map((r) => r.author!);

  // Unresolved review conversations a writer spoke in: feedback when their last word came after the last push
  // (the worker has not answered it yet), otherwise the reviewer's to resolve. Only writers' words count, so a
  // reply by anyone else neither ends a writer's conversation nor starts one; nor does a comment that is only an
  // `/autopilot` command for the controller (`status`, `retry`, …: comment-commands.ts answers it).
  const isWriter = (author: string | null) =>
    !!author && !sameLogin(author, options.botLogin) && hasWriteAccess(options.permissions, author);
  const writerThreads = (pr.openThreads ?? [])
    .map((t) => ({ ...t, comments: t.comments.filter((c) => isWriter(c.author) && !onlyCommand(c.body)) }))
    .filter((t) => t.comments.length > 0);
  const spokeAfterPush = (t: (typeof writerThreads)[number]) =>
    Number.isNaN(lastPush) || (Date.parse(t.comments.at(-1)!.createdAt) || 0) > lastPush;
  const freshThreads = writerThreads.filter(spokeAfterPush);
  const waitingThreads = writerThreads.filter((t) => !spokeAfterPush(t));

  const humanRequired = options.humanGateRules.length > 0;
  const humanApproved = approvers.length > 0;
  const conflicts = pr.mergeable === "CONFLICTING";

  const kinds: FeedbackKind[] = [];
  if (changesRequested.length > 0) kinds.push("changes");
  if (freshThreads.length > 0) kinds.push("threads");
  if (failing.length > 0) kinds.push("checks");
  if (conflicts) kinds.push("conflicts");

  let verdict: Verdict;
  if (kinds.length > 0) {
    verdict =
      options.feedbackSha === pr.headSha
        ? { action: "fail", reason: `${describeKinds(kinds)} again after feedback, with no new commit` }
        : {
            action: "feedback",
            kinds,
            summary: feedbackSummary(
              kinds,
              failing,
              changesRequested,
              // Only writers' words are quoted: a reply by anyone else in the conversation is left out.
              freshThreads,
              pr,
            ),
          };
  } else if (checkState === "none") {
    verdict = {
      action: "wait",
      reason:
        missing.length > 0
          ? `waiting for required check${missing.length > 1 ? "s" : ""} ${missing.map((m) => `\`${m}\``).join(", ")} to appear`
          : "waiting for checks to appear",
    };
  } else if (checkState === "pending") {
    verdict = {
      action: "wait",
      reason: `waiting for ${pending.length} check${pending.length > 1 ? "s" : ""}: ${pending.slice(0, 5).join(", ")}`,
    };
  } else if (pr.mergeable === "UNKNOWN") {
    verdict = { action: "wait", reason: "GitHub is still computing whether it can merge" };
  } else if (staleChangesRequested.length > 0) {
    verdict = {
      action: "wait",
      kind: "people",
      reason: `waiting for ${staleChangesRequested.map((r) => quietLogin(r.author!)).join(", ")} to review again (changes were requested on an earlier commit)`,
    };
  } else if (waitingThreads.length > 0) {
    const who = [...new Set(waitingThreads.map((t) => t.comments.at(-1)!.author!))];
    verdict = {
      action: "wait",
      kind: "people",
      reason: `waiting for ${who.map(quietLogin).join(", ")} to resolve ${waitingThreads.length} review conversation${waitingThreads.length > 1 ? "s" : ""} (a commit answered ${waitingThreads.length > 1 ? "them" : "it"})`,
    };
  } else if (options.reviewerRequired && !humanApproved && !reviewerApprovedHead(pr, options.botLogin)) {
    verdict = {
      action: "wait",
      reason:
        "`review.required`: waiting for Autopilot's reviewer to approve the latest commit (or for someone with write access to approve it)",
    };
  } else if (humanRequired && !humanApproved) {
    verdict = {
      action: "wait",
      kind: "human-gate",
      reason: `human gate (${options.humanGateRules.slice(0, 3).join(", ")}): needs an approval of the latest commit by someone with write access`,
    };
  } else if (!options.autoMerge) {
    verdict = {
      action: "wait",
      kind: "people",
      reason: "every gate passed; `merge.auto` is off, so a person merges it",
    };
  } else {
    verdict = { action: "merge", sha: pr.headSha };
  }
  return {
    checks: { state: checkState, failing, pending, missing, overdue: checkState === "none" && overdue },
    reviews: { changesRequested, staleChangesRequested, approvers },
    humanGate: { required: humanRequired, approved: humanApproved },
    verdict,
  };
}

export function describeKinds(kinds: readonly FeedbackKind[]): string {
  return kinds
    .map((k) =>
      k === "checks"
        ? "failing checks"
        : k === "changes"
          ? "changes requested"
          : k === "threads"
            ? "unresolved review conversations"
            : "merge conflicts",
    )
    .join(", ");
}

function feedbackSummary(
  kinds: FeedbackKind[],
  failing: CheckNode[],
  changes: ReviewNode[],
  threads: NonNullable<PullNode["openThreads"]>,
  pr: PullNode,
): string {
  // Quoted text goes through the same cleaning as prompt text: the next worker reads this comment, and no
  // hidden marker or signal tag may travel in a comment Autopilot itself wrote.
  const quote = (label: string, text: string, max: number) =>
    fenceUntrusted(label, sanitizeUntrustedText(text, max));
  const parts: string[] = [];
  if (kinds.includes("checks")) {
    parts.push("**Failing checks**", "");
    for (const c of failing.slice(0, 10)) {
      const link = c.url && /^https:\/\/[^\s()<>]+$/.test(c.url) ? ` ([details](${c.url}))` : "";
      parts.push(`- ${code(c.name, 80)}: ${escapeInline(c.conclusion ?? "failed", 40)}${link}`);
      if (c.summary) parts.push("", quote(`Output of ${c.name}`, c.summary, 1500), "");
    }
  }
  if (kinds.includes("changes")) {
    parts.push("", "**Changes requested**", "");
    for (const r of changes.slice(0, 5)) {
      const who = r.author ?? "someone";
      parts.push(`- by ${quietLogin(who)}:`, "", quote(`Review by ${who}`, r.body || "(no text)", 1500), "");
      const comments = (pr.reviewComments ?? []).filter((c) => sameLogin(c.author, r.author)).slice(-10);
      for (const c of comments) {
        const where = c.path ? ` on ${c.path}` : "";
        parts.push(quote(`Comment by ${who}${where}`, c.body, 800), "");
      }
    }
  }
  if (kinds.includes("threads")) {
    parts.push("", "**Unresolved review conversations**", "");
    for (const t of threads.slice(0, 10)) {
      parts.push(`- ${t.path ? `on ${code(t.path, 120)}` : "on the pull request"}:`, "");
      for (const c of t.comments.slice(-5)) {
        const who = c.author ?? "someone";
        parts.push(quote(`Comment by ${who}`, c.body, 800), "");
      }
    }
  }
  if (kinds.includes("conflicts")) {
    parts.push(
      "",
      `**Merge conflicts** with ${code(pr.baseRef, 80)}: the branch must be brought up to date.`,
    );
  }
  return parts.join("\n");
}

export function feedbackComment(
  pr: PullNode,
  kinds: FeedbackKind[],
  summary: string,
  round: number,
  max: number,
): string {
  return [
    `Autopilot is sending this task back to a worker (feedback round ${round} of ${max}): PR #${pr.number} has ${describeKinds(kinds)}.`,
    "",
    summary,
  ].join("\n");
}

export function humanGateComment(pr: PullNode, rules: readonly string[]): string {
  return [
    `PR #${pr.number} touches something that needs a person's approval before Autopilot merges it:`,
    "",
    ...rules.slice(0, 10).map((r) => `- ${escapeInline(r, 120)}`),
    "",
    "Someone with write access: please review the PR and **approve its latest commit**; Autopilot merges once the checks pass. A later push needs a new approval.",
  ].join("\n");
}

export function noChecksComment(pr: PullNode, minutes: number, missing: readonly string[]): string {
  const what =
    missing.length > 0
      ? `the required check${missing.length > 1 ? "s" : ""} ${missing.map((m) => `\`${escapeInline(m, 80).replace(/`/g, "")}\``).join(", ")}`
      : "no check";
  return [
    `No checks: ${what} appeared on PR #${pr.number} within ${counted(minutes, "minute")}, so Autopilot cannot tell whether the change is good and will not merge it.`,
    "",
    "The usual cause: pushes made with the default `GITHUB_TOKEN` do not start workflows (GitHub prevents recursive runs). Give the worker a GitHub App token or a fine-grained token with `contents: write` and `pull-requests: write` (the `github-token` input), or make sure your CI runs on `pull_request` for this branch. If a check is named in `merge.requiredChecks`, check its spelling.",
    "",
    "A person can also merge the PR; Autopilot then counts the task as done.",
  ].join("\n");
}

/** The rules in a PR body's `<!-- autopilot:human-gate {...} -->` marker when it says the gate fired. */
export function parseHumanGateMarker(body: string): string[] | null {
  const m = /<!-- autopilot:human-gate (\{[\s\S]*?\}) -->/.exec(body);
  if (!m) return null;
  try {
    const value = JSON.parse(m[1]!) as { fired?: unknown; rules?: unknown };
    if (value.fired !== true) return null;
    const rules = Array.isArray(value.rules)
      ? value.rules
          .map((r) =>
            typeof r === "string"
              ? r
              : typeof r === "object" && r && "rule" in r
                ? String((r as { rule: unknown }).rule)
                : "",
          )
          .filter(Boolean)
      : [];
    return rules.length > 0 ? rules : ["human gate"];
  } catch {
    return ["human gate"];
  }
}

/**
 * A comment that is one `/autopilot` command line and nothing else, other than `fix` or `follow-up` (whose words
 * are for the agent): the controller's, not review feedback.
 */
function onlyCommand(body: string): boolean {
  const lines = body.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (lines.length !== 1) return false;
  const parsed = parseCommand(lines[0]!, { issue: 0, trackingIssue: null });
  if (!parsed) return false;
  return parsed.kind === "invalid" || (parsed.command.name !== "fix" && parsed.command.name !== "follow-up");
}
