/**
 * The phase for tasks in review: their PR's gates decide — merge, feedback to a worker, fail, or wait (with
 * one-time explanations). Returns the line each task in review shows on the dashboard.
 */
import type { ReasonLine, TaskRecord } from "../../dashboard/index.js";
import {
  describeKinds,
  evaluatePullRequest,
  feedbackComment,
  humanGateComment,
  noChecksComment,
  parseHumanGateMarker,
  type Verdict,
} from "../../gates/gates.js";
import { issueOfRevertBranch, issueOfTaskBranch } from "../../contract.js";
import { truncate } from "../../text/markdown.js";
import { sameLogin } from "../../tasks/commands.js";
import {
  branchUpdatedLine,
  MERGE_REFUSAL_CAP,
  mergeBasis,
  mergeHandedLine,
} from "../../gates/merge-refusal.js";
import type { IssueNode, PullNode } from "../../world.js";
import { note, type Reconciling, taskBranch, taskRecord } from "../context.js";
import { notice } from "../messages.js";
import { verifiedGate } from "./pull-diff-verdicts.js";
import { remindReview } from "../task-alerts.js";
import { humanGateTimeout } from "../approval-timeouts.js";
import { askRevertAgain, rollbackAbandoned, rollbackMerged } from "../commands/rollback.js";
import { taskDone } from "../runs/task-exit.js";
import { startAskedFix } from "../commands/fix-follow-up.js";
import { setStatus, statusOf } from "../task-labels.js";
import { pullsFor } from "./task-pulls.js";
import { MERGE_RETRY_MINUTES, SETTLE_MINUTES } from "../timing.js";
import { finishedCurrent, liveState, outcomePending } from "../runs/worker-runs.js";
import { counted } from "../../text/plural.js";

/** The dashboard line of each task still in review, by issue. */
export type ReviewLines = Map<number, ReasonLine>;

export function processReviews(ctx: Reconciling): ReviewLines {
  const lines: ReviewLines = new Map();
  const handed = new Set<number>();
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open" || statusOf(ctx, n) !== "review") continue;
    if ((liveState(ctx, n).live && !finishedCurrent(ctx, n)) || outcomePending(ctx, n)) {
      // A worker is still pushing to the branch (a feedback round), or its run ended and its result is still to
      // be read: its commits are not final, so nothing is merged or sent back until its outcome is handled.
      lines.set(n, {
        issue: n,
        title: issue.title,
        reason: "a worker is updating the pull request",
        pr: ctx.state.tasks[n]?.pr ?? null,
      });
      continue;
    }
    const line = processReview(ctx, n, issue, handed);
    if (line) lines.set(n, line);
  }
  withdrawUnapprovedMerges(ctx, handed);
  return lines;
}

/**
 * GitHub merges by itself what auto-merge or the merge queue holds, so Autopilot takes back every such merge it
 * handed over whose head its gates do not approve now (a new commit, a gate that no longer passes, a task that
 * left review): GitHub must never merge what Autopilot has not approved. `handed` holds the PRs every gate
 * passes on at their current head. Only Autopilot's own auto-merge is turned off; a person's is theirs.
 */
function withdrawUnapprovedMerges(ctx: Reconciling, handed: ReadonlySet<number>): void {
  // Only issues with a PR on their task branch, or on a revert branch of it, can have anything to withdraw:
  // found from the PRs' branches rather than by looking up every open issue's branch name.
  const withPulls = new Set<number>();
  for (const ref of ctx.pullsByRef.keys()) {
    const n =
      issueOfTaskBranch(ctx.config.branchPrefix, ref) ??
      issueOfRevertBranch(ctx.config.branchPrefix, ref)?.issue ??
      null;
    if (n !== null) withPulls.add(n);
  }
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open" || !withPulls.has(n)) continue;
    const record = ctx.state.tasks[n];
    // The task's PRs as the gates pick them: the revert PR while a rollback is under way.
    for (const pr of pullsFor(ctx, n)) {
      if (pr.state !== "open" || handed.has(pr.number)) continue;
      const reason =
        record?.merge?.sha && record.merge.sha !== pr.headSha
          ? `the head changed to ${pr.headSha.slice(0, 7)} after Autopilot approved ${record.merge.sha.slice(0, 7)}`
          : "Autopilot's gates do not pass on this head";
      if (pr.autoMerge && sameLogin(pr.autoMerge.enabledBy, ctx.snapshot.botLogin)) {
        ctx.effects.push({ type: "withdrawMerge", pr: pr.number, issue: n, what: "auto-merge", reason });
        note(ctx, `#${n}: turn off auto-merge on PR #${pr.number}: ${reason}`);
      }
      if (pr.mergeQueue && record?.merge?.via === "queue") {
        ctx.effects.push({ type: "withdrawMerge", pr: pr.number, issue: n, what: "queue", reason });
        note(ctx, `#${n}: take PR #${pr.number} out of the merge queue: ${reason}`);
      }
    }
  }
}

/** Decides on the task's PR; the line to show when it stays in review without one of its own yet. */
function processReview(
  ctx: Reconciling,
  n: number,
  issue: IssueNode,
  handed: Set<number>,
): ReasonLine | null {
  const record = taskRecord(ctx, n);
  const prs = pullsFor(ctx, n);
  const pr = prs.find((p) => p.state === "open");
  const line = (reason: string, number: number | null): ReasonLine => ({
    issue: n,
    title: issue.title,
    reason,
    pr: number,
  });
  if (!pr) {
    const merged = prs.find((p) => p.state === "merged");
    if (merged) {
      if (record.rollback) rollbackMerged(ctx, n, merged);
      else taskDone(ctx, n, merged);
      return null;
    }
    const closed = prs.find((p) => p.state === "closed");
    if (closed && record.rollback) {
      rollbackAbandoned(ctx, n, closed);
      return null;
    }
    if (record.rollback) {
      if (ctx.nowMs - Date.parse(record.rollback.at) < SETTLE_MINUTES * 60_000) {
        askRevertAgain(ctx, n);
        return line(`waiting for GitHub's pull request reverting PR #${record.rollback.merged}`, null);
      }
      // GitHub refused the revert (a conflict with later changes, a PR it cannot revert): a person must do it.
      record.reason = `GitHub opened no pull request reverting PR #${record.rollback.merged}: revert it by hand, then \`/autopilot retry #${n}\``;
      record.since = ctx.now.toISOString();
      record.rollback = undefined;
      setStatus(ctx, n, "failed");
      note(ctx, `#${n}: no revert PR appeared → failed`);
      return null;
    }
    if (closed) {
      record.reason = `PR #${closed.number} was closed without merging`;
      record.since = ctx.now.toISOString();
      setStatus(ctx, n, "failed");
      note(ctx, `#${n}: PR #${closed.number} closed unmerged → failed`);
      return null;
    }
    return line(`no open pull request on \`${taskBranch(ctx, n)}\``, null);
  }
  record.pr = pr.number;
  if (ctx.input.configHeld) {
    // No valid configuration to judge the gates by (merge.auto, required checks, human-gate paths): nothing
    // merges and nothing goes back to a worker until the file is fixed.
    return line(`waiting for a valid \`.github/autopilot.yml\`: nothing merges until it is fixed`, pr.number);
  }
  // A writer's `/autopilot fix` given while a worker was on the task: the PR is free of workers now.
  if (startAskedFix(ctx, n, pr)) return null;
  readMergeAnswer(ctx, n, record, pr);
  const gateRules = gateRulesFor(ctx, n, record, pr);
  if ("waiting" in gateRules) return line(gateRules.waiting, pr.number);
  const { config } = ctx;
  const evaluation = evaluatePullRequest(pr, {
    requiredChecks: config.merge.requiredChecks,
    botLogin: ctx.snapshot.botLogin,
    permissions: ctx.snapshot.permissions,
    humanGateRules: gateRules.rules,
    feedbackSha: record.feedbackSha ?? null,
    autoMerge: config.merge.auto,
    now: ctx.now,
    checksTimeoutMinutes: config.merge.checksTimeoutMinutes,
    reviewerRequired: config.review.required && config.review.agent !== null,
  });
  const humanGateOpen = evaluation.humanGate.required && !evaluation.humanGate.approved;

  // One-time explanations.
  if (humanGateOpen) notice(ctx, n, record, `gate-${pr.number}`, humanGateComment(pr, gateRules.rules));
  if (evaluation.checks.state === "none" && evaluation.checks.overdue) {
    notice(
      ctx,
      n,
      record,
      `no-checks-${pr.number}`,
      noChecksComment(pr, config.merge.checksTimeoutMinutes, evaluation.checks.missing),
    );
  }

  let verdict: Verdict = evaluation.verdict;
  if (record.result === "feedback" && record.feedbackSha === pr.headSha) {
    // The feedback for this head went out; a worker has not come back with a new commit yet.
    verdict = { action: "wait", reason: "feedback sent; waiting for a worker" };
  }
  switch (verdict.action) {
    case "merge": {
      // Every gate passes on this very head: GitHub merging it by itself is what Autopilot wants too.
      handed.add(pr.number);
      return line(requestMerge(ctx, n, record, pr) ?? "every gate passed; merging", pr.number);
    }
    case "feedback":
      // A revert PR has no worker to send feedback to: a person fixes it, or closes it (the task then fails).
      if (record.rollback)
        return line(
          `${describeKinds(verdict.kinds)} on the revert PR: a person must fix or close it`,
          pr.number,
        );
      sendFeedback(ctx, n, record, pr, verdict);
      return null;
    case "fail":
      record.reason = truncate(verdict.reason, 300);
      record.since = ctx.now.toISOString();
      setStatus(ctx, n, "failed");
      note(ctx, `#${n}: ${verdict.reason} → failed`);
      return null;
    case "wait": {
      const gate =
        humanGateOpen && verdict.kind !== "human-gate"
          ? "; the human gate also needs an approval of the latest commit"
          : "";
      const waited = `${verdict.reason}${gate}`;
      // A wait on people gets one reminder after `alerts.reviewReminderHours` (task-alerts.ts).
      const reminded = verdict.kind ? remindReview(ctx, n, pr, waited) : waited;
      // The human gate's approval waits with a timeout (design document 003): approval-timeouts.ts.
      const reason = humanGateOpen ? humanGateTimeout(ctx, n, pr, reminded) : reminded;
      if (record.merge?.via === "update-branch" && record.merge.sha !== pr.headSha)
        return line(branchUpdatedLine(pr.baseRef, reason), pr.number);
      return line(reason, pr.number);
    }
  }
}

/**
 * The human-gate rules that fired for the PR: the worker's reading (its result, the PR body's marker) is an
 * early warning; the controller's own, from the API at this head, decides and can only add rules.
 */
function gateRulesFor(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  pr: PullNode,
): { rules: string[] } | { waiting: string } {
  const result = ctx.results.get(n);
  const gateRules = [...(record.gate ?? [])];
  const marker = parseHumanGateMarker(pr.body);
  if (marker) for (const rule of marker) if (!gateRules.includes(rule)) gateRules.push(rule);
  if (result?.humanGate.fired && result.prNumber === pr.number) {
    for (const r of result.humanGate.rules) if (!gateRules.includes(r.rule)) gateRules.push(r.rule);
  }
  const verified = verifiedGate(ctx, pr);
  if ("waiting" in verified) return verified;
  for (const r of verified.rules) if (!gateRules.includes(r)) gateRules.unshift(r);
  if (gateRules.length > 0) record.gate = gateRules.slice(0, 20).map((r) => truncate(r, 120));
  return { rules: gateRules };
}

/**
 * Reads GitHub's answer to the last merge request back from Autopilot's comment on the PR (its marker names the
 * head, the attempt and the mechanism GitHub accepted instead), whatever the gates say now: a branch update
 * changes the head at once, and the new head's wait must still know why it came.
 */
function readMergeAnswer(ctx: Reconciling, n: number, record: TaskRecord, pr: PullNode): void {
  const asked = record.merge;
  const seen = pr.mergeRefusal;
  if (!asked || asked.refused || !seen || seen.sha !== asked.sha || seen.attempt !== (asked.attempt ?? 1))
    return;
  asked.refused = truncate(seen.reason, 200);
  if (seen.via) {
    // GitHub took the head through its own mechanism: not a refusal, so it uses up none of the attempts.
    asked.via = seen.via;
    asked.allowed = (asked.allowed ?? MERGE_REFUSAL_CAP) + 1;
    note(ctx, `#${n}: GitHub refused merging PR #${pr.number} (${seen.reason}); handed to its ${seen.via}`);
  } else note(ctx, `#${n}: GitHub refused merging PR #${pr.number}: ${seen.reason}`);
}

/**
 * Asks for the merge at the head SHA. After GitHub refused (read back from Autopilot's explanation on the PR),
 * asks again only when the basis changed (head, base, reviews, checks, merge settings) and fewer than the
 * allowed attempts were made; otherwise waits for a change or `/autopilot retry #N`. A request with no answer
 * yet is repeated after MERGE_RETRY_MINUTES (a controller stopped before sending it), within the same limit.
 * Returns the dashboard line while it waits, null when a merge is on its way.
 */
function requestMerge(ctx: Reconciling, n: number, record: TaskRecord, pr: PullNode): string | null {
  const basis = mergeBasis(pr, ctx.config.merge);
  const asked = record.merge;
  if (asked?.via && asked.sha === pr.headSha) {
    const waiting = handedLine(ctx, asked, pr);
    if (waiting) return waiting;
  }
  const attempts = asked?.attempt ?? 0;
  const allowed = asked?.allowed ?? MERGE_REFUSAL_CAP;
  const retry = `\`/autopilot retry #${n}\``;
  if (asked?.refused) {
    if (attempts >= allowed)
      return `GitHub refused the merge ${counted(attempts, "time")} (${asked.refused}); waiting for a person to fix the cause and comment ${retry}`;
    if (asked.basis === basis)
      return `GitHub refused the merge: ${asked.refused} — waiting for a change (commit, review, check, base branch, merge settings) or ${retry}`;
  } else if (asked && asked.sha === pr.headSha) {
    if (ctx.nowMs - Date.parse(asked.at) < MERGE_RETRY_MINUTES * 60_000) return null;
    if (attempts >= allowed)
      return `the merge was asked ${counted(attempts, "time")} without a result; waiting for ${retry}`;
  }
  record.merge = { sha: pr.headSha, at: ctx.now.toISOString(), basis, attempt: attempts + 1, allowed };
  ctx.effects.push({
    type: "mergePr",
    pr: pr.number,
    issue: n,
    method: ctx.config.merge.method,
    expectedHeadSha: pr.headSha,
    attempt: attempts + 1,
  });
  note(ctx, `#${n}: merge PR #${pr.number} at ${pr.headSha.slice(0, 7)} (attempt ${attempts + 1})`);
  return null;
}

/**
 * The dashboard line while GitHub's own mechanism holds the approved head, or null when it no longer does
 * (auto-merge turned off, the PR left the queue, a branch update that never came): then the refusal stands and
 * Autopilot waits for a change as after any refusal. A field the server did not report counts as still on.
 */
function handedLine(ctx: Reconciling, asked: NonNullable<TaskRecord["merge"]>, pr: PullNode): string | null {
  const shown = { sha: pr.headSha, reason: asked.refused ?? "", base: pr.baseRef };
  switch (asked.via) {
    case "auto-merge":
    case "queue": {
      const holding = asked.via === "auto-merge" ? pr.autoMerge : pr.mergeQueue;
      if (holding !== null) {
        if (asked.goneAt) asked.goneAt = undefined;
        return asked.via === "auto-merge"
          ? mergeHandedLine({ via: "auto-merge", ...shown })
          : mergeHandedLine({ via: "queue", ...shown, queuePosition: pr.mergeQueue?.position ?? null });
      }
      // Gone while the PR is still open: GitHub may be merging it this very moment (it drops the request or
      // the entry first), or someone turned it off. A request now would race GitHub's own merge, so the refusal
      // stands again only after MERGE_RETRY_MINUTES without a merge.
      asked.goneAt ??= ctx.now.toISOString();
      if (ctx.nowMs - Date.parse(asked.goneAt) < MERGE_RETRY_MINUTES * 60_000)
        return `GitHub's ${asked.via === "auto-merge" ? "auto-merge is no longer on" : "merge queue no longer holds it"} (merging, or turned off): Autopilot looks again in ${MERGE_RETRY_MINUTES} minutes`;
      return null;
    }
    case "update-branch":
      // GitHub updates the branch in the background; a head that never moves means it could not.
      return ctx.nowMs - Date.parse(asked.at) < MERGE_RETRY_MINUTES * 60_000
        ? mergeHandedLine({ via: "update-branch", ...shown })
        : null;
    default:
      return null;
  }
}

/** Sends the PR back to a worker with the feedback, or fails the task when the rounds are used up. */
function sendFeedback(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  pr: PullNode,
  verdict: Extract<Verdict, { action: "feedback" }>,
): void {
  const maxRounds = ctx.config.merge.maxFeedbackRounds;
  if (record.feedbackRounds >= maxRounds) {
    record.reason = truncate(
      `${verdict.kinds.join(", ")} after ${record.feedbackRounds} feedback rounds (merge.maxFeedbackRounds)`,
      300,
    );
    record.since = ctx.now.toISOString();
    setStatus(ctx, n, "failed");
    note(ctx, `#${n}: feedback rounds exhausted → failed`);
    return;
  }
  record.feedbackRounds += 1;
  record.feedbackSha = pr.headSha;
  record.result = "feedback";
  record.reason = truncate(
    `PR #${pr.number}: ${describeKinds(verdict.kinds)} (feedback round ${record.feedbackRounds})`,
    300,
  );
  record.merge = undefined;
  ctx.effects.push({
    type: "comment",
    issue: n,
    body: feedbackComment(pr, verdict.kinds, verdict.summary, record.feedbackRounds, maxRounds),
    key: `feedback-${n}-${record.feedbackRounds}`,
  });
  setStatus(ctx, n, "ready");
  note(
    ctx,
    `#${n}: PR #${pr.number} ${describeKinds(verdict.kinds)} → back to a worker (round ${record.feedbackRounds})`,
  );
}
