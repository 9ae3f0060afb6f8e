/**
 * A writer's words for another round of a task:
 *
 * - `/autopilot fix [#N] what to change` — the task's open pull request goes back to a worker with those
 *   instructions (a feedback round a person asked for). While a worker is still on the task, the request waits
 *   and is carried out when the PR is free (`startAskedFix`, from reviews.ts). A task that ended without a merge
 *   (failed, blocked, needs-human, timed out) goes back to the queue as after `retry`, with the instructions.
 * - `/autopilot follow-up [#N] what to add` — a merged task: its issue is opened again and a new attempt starts
 *   on a fresh task branch from the default branch (the merged branch is deleted first: after a squash merge its
 *   commits are not the default branch's), and its PR is a new one.
 *
 * Either way Autopilot posts one comment on the task issue that quotes the instructions, fenced, and carries a
 * marker naming the command's comment (src/core/contract.ts `instructionsMarker`). The worker reads that comment
 * itself, checks its author's write access and that it is a command for this task, and hands its text to the
 * agent fenced as all quoted text (src/worker/job/task-instructions.ts): the quote is for people only.
 *
 * A round a person asked for does not count against `merge.maxFeedbackRounds`, which bounds the rounds Autopilot
 * starts by itself: every one of these is somebody's deliberate act.
 */
import { epicRefusal } from "../epic-pooling.js";
import { instructionsMarker } from "../../contract.js";
import { MAX_INSTRUCTIONS } from "../../tasks/commands.js";
import { quietLogin, truncate } from "../../text/markdown.js";
import { fenceUntrusted, sanitizeUntrustedText } from "../../text/sanitize.js";
import type { PullNode } from "../../world.js";
import { note, type Reconciling, taskBranch, taskRecord } from "../context.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { setStatus, statusOf } from "../task-labels.js";
import { liveState, outcomePending } from "../runs/worker-runs.js";
import { freshStart, type TaskCommandOutcome } from "./retry-skip.js";

interface InstructionsAsked {
  n: number;
  actor: string;
  /** The comment that gave the command (its id goes in the marker). */
  commentId: number;
  instructions: string;
}

export function fixTask(ctx: Reconciling, asked: InstructionsAsked): TaskCommandOutcome {
  const { n, actor } = asked;
  const issue = ctx.issues.get(n);
  const status = statusOf(ctx, n);
  if (!issue || issue.state === "closed" || status === null) {
    const merged = pullsFor(ctx, n).some((p) => p.state === "merged");
    return {
      ok: false,
      message: merged
        ? `#${n}'s pull request has merged: to change more, use \`/autopilot follow-up #${n} what to change\`.`
        : (epicRefusal(ctx, n)?.concat(".") ?? `#${n} is not an open Autopilot task.`),
    };
  }
  const record = taskRecord(ctx, n);
  switch (status) {
    case "skipped":
      return { ok: false, message: `#${n} was skipped; \`/autopilot retry #${n}\` brings it back first.` };
    case "review": {
      if (record.rollback)
        return {
          ok: false,
          message: `#${n} is being rolled back: its pull request is the revert, which has no worker to instruct.`,
        };
      const pr = pullsFor(ctx, n).find((p) => p.state === "open");
      if (!pr)
        return { ok: false, message: `#${n} has no open pull request on \`${taskBranch(ctx, n)}\` to fix.` };
      record.fixAsked = { at: ctx.now.toISOString(), by: actor.slice(0, 40), comment: asked.commentId };
      acknowledge(ctx, asked, "fix");
      if (workerOnTask(ctx, n))
        return {
          ok: true,
          message: `A worker is still updating PR #${pr.number}; once it has finished, the PR goes back to a worker with these instructions.`,
        };
      sendBack(ctx, n, pr);
      return { ok: true };
    }
    case "in-progress":
      // The running worker read the task's comments when it started: the next one gets these.
      record.fixAsked = { at: ctx.now.toISOString(), by: actor.slice(0, 40), comment: asked.commentId };
      acknowledge(ctx, asked, "fix");
      return {
        ok: true,
        message: `A worker is on #${n} now; when its pull request is ready it goes back to a worker with these instructions.`,
      };
    case "ready":
      acknowledge(ctx, asked, "fix");
      return { ok: true, message: `#${n} is waiting for a worker; that worker gets these instructions.` };
    case "done":
      return { ok: false, message: `#${n} is done: use \`/autopilot follow-up #${n} what to change\`.` };
    default: {
      // Ended without a merge (blocked, needs-human, timeout, failed): back in the queue, from its branch.
      freshStart(ctx, n, 1, `fix asked by @${actor}`);
      acknowledge(ctx, asked, "fix");
      note(ctx, `#${n}: fix by ${actor} (was ${status}) → ready`);
      return { ok: true, message: `#${n} is back in the queue; its next worker gets these instructions.` };
    }
  }
}

/**
 * The writer's fix waiting on this task, carried out now that its PR is free of workers: back to a worker.
 * Returns whether it went back.
 */
export function startAskedFix(ctx: Reconciling, n: number, pr: PullNode): boolean {
  const record = ctx.state.tasks[n];
  if (!record?.fixAsked || outcomePending(ctx, n)) return false;
  sendBack(ctx, n, pr);
  return true;
}

/**
 * A worker is still on the task: its run is live, or its outcome is not handled yet. Sent back before that
 * outcome is handled, the task would be moved to review again when it is, and the fix lost.
 */
function workerOnTask(ctx: Reconciling, n: number): boolean {
  return liveState(ctx, n).live || outcomePending(ctx, n);
}

function sendBack(ctx: Reconciling, n: number, pr: PullNode): void {
  const record = taskRecord(ctx, n);
  const by = record.fixAsked?.by ?? "a writer";
  record.fixAsked = undefined;
  // This head had its round: the gates wait for the worker's new commit rather than send it back again.
  record.feedbackSha = pr.headSha;
  record.result = "feedback";
  record.reason = truncate(`PR #${pr.number}: fix asked by @${by}`, 300);
  record.merge = undefined;
  setStatus(ctx, n, "ready");
  note(ctx, `#${n}: PR #${pr.number} → back to a worker with ${by}'s instructions`);
}

export function followUpTask(ctx: Reconciling, asked: InstructionsAsked): TaskCommandOutcome {
  const { n, actor } = asked;
  const issue = ctx.issues.get(n);
  const status = issue && issue.state === "open" ? statusOf(ctx, n) : null;
  if (status !== null)
    return {
      ok: false,
      message: `#${n} is still an open task (${status}): to change its pull request, use \`/autopilot fix #${n} what to change\`.`,
    };
  if (ctx.state.tasks[n]?.rollback)
    return { ok: false, message: `#${n} is being rolled back; a follow-up can start once that is done.` };
  // The task's PRs (merged ones already followed up or reverted are dropped from them): the newest merged one.
  const merged = pullsFor(ctx, n).find((p) => p.state === "merged");
  if (!merged)
    return {
      ok: false,
      message: `Autopilot sees no merged pull request of #${n} on \`${taskBranch(ctx, n)}\` among the recently closed ones: a follow-up continues a merged task.`,
    };
  if (issue?.state !== "open") ctx.effects.push({ type: "reopenIssue", issue: n });
  const record = taskRecord(ctx, n);
  const dropped = record.dropped ?? [];
  if (!dropped.includes(merged.number)) record.dropped = [...dropped, merged.number].slice(-20);
  const r = freshStart(ctx, n, 0, `follow-up of PR #${merged.number} asked by @${actor}`);
  r.pr = undefined;
  r.gate = undefined;
  r.text = undefined;
  r.followUp = {
    merged: merged.number,
    since: merged.createdAt,
    by: actor.slice(0, 40),
    at: ctx.now.toISOString(),
  };
  if (merged.headBranchExists !== false) {
    // The worker resumes a task branch that exists; this one's work is merged (squashed, perhaps): it goes first,
    // and no worker starts until it is seen gone (rollback.ts processDiscards).
    ctx.effects.push({ type: "deleteBranch", branch: taskBranch(ctx, n) });
    r.discard = ctx.now.toISOString();
  }
  acknowledge(ctx, asked, "follow-up");
  note(ctx, `#${n}: follow-up of PR #${merged.number} by ${actor} → ready`);
  return {
    ok: true,
    message: `#${n} is open again for a follow-up of PR #${merged.number}: a worker starts on a fresh \`${taskBranch(ctx, n)}\` from the default branch with these instructions.`,
  };
}

/** The comment on the task issue that carries the instructions' marker (once per command comment). */
function acknowledge(ctx: Reconciling, asked: InstructionsAsked, kind: "fix" | "follow-up"): void {
  const text = asked.instructions.trim();
  const quoted = text
    ? fenceUntrusted(`Instructions from ${asked.actor}`, sanitizeUntrustedText(text, MAX_INSTRUCTIONS))
    : "(no instructions: the worker goes by the task and the pull request's feedback)";
  ctx.effects.push({
    type: "comment",
    issue: asked.n,
    body: [
      instructionsMarker(asked.commentId),
      `${quietLogin(asked.actor)} asked for a ${kind === "fix" ? "fix" : "follow-up"} of #${asked.n}. The next worker gets these instructions with the task:`,
      "",
      quoted,
    ].join("\n"),
    key: `instructions-${asked.commentId}`,
  });
}
