/**
 * The names and hidden markers the controller, the worker and GitHub agree on (docs/ARCHITECTURE.md,
 * "Worker ↔ controller"). Each is built and read here only, so the writer and every reader cannot drift apart.
 * The worker-result marker's schema and its render/parse live in src/core/tasks/worker-result.ts.
 */

import type { WorkerResult } from "./tasks/worker-result.js";

/** The task branch of an issue: `<branchPrefix>issue-N`. */
export function taskBranchName(branchPrefix: string, issue: number): string {
  return `${branchPrefix}issue-${issue}`;
}

/** The issue number of a task branch (`<branchPrefix>issue-N`); null for any other ref. */
export function issueOfTaskBranch(branchPrefix: string, ref: string): number | null {
  if (!ref.startsWith(branchPrefix)) return null;
  const m = /^issue-(\d+)$/.exec(ref.slice(branchPrefix.length));
  return m ? Number(m[1]) : null;
}

/**
 * The branch of candidate K of a best-of round (src/core/reconcile/runs/best-of.ts): `<branchPrefix>issue-N-candidate-K`.
 * Not under the task branch's name as a directory, which git could not hold beside the task branch itself.
 */
export function candidateBranchName(branchPrefix: string, issue: number, candidate: number): string {
  return `${taskBranchName(branchPrefix, issue)}-candidate-${candidate}`;
}

/** The task issue and candidate of a candidate branch; null for any other ref. */
export function candidateOfBranch(
  branchPrefix: string,
  ref: string,
): { issue: number; candidate: number } | null {
  if (!ref.startsWith(branchPrefix)) return null;
  const m = /^issue-(\d+)-candidate-(\d)$/.exec(ref.slice(branchPrefix.length));
  return m ? { issue: Number(m[1]), candidate: Number(m[2]) } : null;
}

/**
 * The branch GitHub's `revertPullRequest` opens its revert PR from: `revert-<PR>-<head branch>`, as the web's
 * Revert button names it (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/incorporating-changes-from-a-pull-request/reverting-a-pull-request).
 */
export function revertBranchName(branchPrefix: string, issue: number, pr: number): string {
  return `revert-${pr}-${taskBranchName(branchPrefix, issue)}`;
}

/** The task issue and reverted PR of a revert branch of a task branch; null for any other ref. */
export function issueOfRevertBranch(branchPrefix: string, ref: string): { issue: number; pr: number } | null {
  const m = /^revert-(\d{1,9})-(.+)$/.exec(ref);
  if (!m) return null;
  const issue = issueOfTaskBranch(branchPrefix, m[2]!);
  return issue === null ? null : { issue, pr: Number(m[1]) };
}

/**
 * The git ref that is the dispatch lock of one task attempt. Creating a ref is atomic, so exactly one
 * controller that tries to create it dispatches the attempt (src/github/execution/executor.ts).
 */
export function dispatchLockRef(issue: number, attempt: number): string {
  return `${DISPATCH_LOCK_PREFIX}issue-${issue}-attempt-${attempt}`;
}

/** Where the dispatch locks live (the snapshot lists the refs under it). */
export const DISPATCH_LOCK_PREFIX = "refs/autopilot/dispatch/";

/** The task attempt a dispatch lock's name (relative to DISPATCH_LOCK_PREFIX, or in full) is for; null for any other. */
export function parseDispatchLock(name: string): { issue: number; attempt: number } | null {
  const m = /^(?:refs\/autopilot\/dispatch\/)?issue-(\d+)-attempt-(\d+)$/.exec(name);
  return m ? { issue: Number(m[1]), attempt: Number(m[2]) } : null;
}

/**
 * The opaque id the controller gives one dispatch of a task attempt (`<issue>-<attempt>-<seed>`, the seed being
 * the reconcile's time in base 36). The worker's run title carries it, so the controller finds the run.
 */
export function dispatchId(issue: number, attempt: number, seed: string): string {
  return `${issue}-${attempt}-${seed}`;
}

/** `autopilot #<issue> attempt <n> [<dispatch-id>]`: the worker workflow's run-name (templates/workflows/autopilot-worker.yml). */
const RUN_TITLE = /#(\d+)\s+attempt\s+(\d+)\s*\[([^\]\s]+)\]/i;

/** The task attempt a worker run's title names; null for a run that is not a dispatched worker. */
export function parseRunTitle(title: string): { issue: number; attempt: number; dispatchId: string } | null {
  const m = RUN_TITLE.exec(title);
  if (!m) return null;
  return { issue: Number(m[1]), attempt: Number(m[2]), dispatchId: m[3]! };
}

/** How every hidden Autopilot marker starts; a comment carrying one was written by Autopilot, not a person. */
export const AUTOPILOT_MARKER_PREFIX = "<!-- autopilot:";

/** The PR body marker naming the task issue the worker opened the pull request for. */
export function prMarker(issue: number): string {
  return `<!-- autopilot:pr issue=${issue} -->`;
}

/** The task issue a PR body's marker names (the first marker); null when it has none. */
export function issueOfPrMarker(body: string): number | null {
  const m = /<!-- autopilot:pr issue=(\d+) -->/.exec(body);
  return m ? Number(m[1]) : null;
}

/**
 * The marker of Autopilot's comment on a task issue that takes a writer's `/autopilot fix` or `follow-up`: it
 * names the comment that gave the instructions, which the worker reads and checks itself (src/worker/job/
 * task-instructions.ts), never trusting the quote beside the marker.
 */
export function instructionsMarker(commentId: number): string {
  return `<!-- autopilot:instructions comment=${commentId} -->`;
}

/** The comment id an instructions marker names; null when the body has none. */
export function commentOfInstructionsMarker(body: string): number | null {
  const m = /<!-- autopilot:instructions comment=(\d{1,15}) -->/.exec(body);
  return m ? Number(m[1]) : null;
}

/**
 * The PR body marker with the human-gate rules that fired (src/core/gates/gates.ts reads it). Escaping `<` and `>`
 * keeps the JSON from closing the comment early.
 */
export function humanGateMarker(humanGate: WorkerResult["humanGate"]): string {
  const json = JSON.stringify(humanGate).replace(/>/g, "\\u003e").replace(/</g, "\\u003c");
  return `<!-- autopilot:human-gate ${json} -->`;
}

/** The text every worker-result marker carries (src/core/tasks/worker-result.ts renders and parses the marker). */
const WORKER_RESULT_MARKER_TAG = "autopilot:worker-result";

/** Whether a comment body carries a worker-result marker (a valid one or not). */
export function mentionsWorkerResult(body: string): boolean {
  return body.includes(WORKER_RESULT_MARKER_TAG);
}

/** What the controller remembers about the comments it has read (the dashboard's command cursor). */
interface CommentCursorState {
  /** Recently processed comment ids. */
  processed: readonly number[];
  /** The newest comment processed; every comment up to it is processed (ids grow with time). */
  cursor: { id: number } | null;
  /**
   * Line comments of pull-request reviews: read since this time, these processed. GitHub numbers them apart
   * from issue comments, and one written in a pending review is published later than a newer one, so neither
   * the issue comments' cursor nor one of their own would do. Null: not read yet, every one seen counts as old.
   */
  reviewComments?: { since: string; processed: readonly number[] } | null;
}

/**
 * Whether a comment was processed already: Autopilot reacted to it, or the cursor state names it or a newer
 * comment (a review's line comment: the state names it, or it is older than their reading). Such a comment is
 * never acted on again. Build once per reconcile, test each comment.
 */
export function commentProcessedRule(
  state: CommentCursorState | null,
): (comment: { id: number; acknowledged?: boolean; review?: boolean; createdAt?: string }) => boolean {
  const processed = new Set(state?.processed ?? []);
  const cursor = state?.cursor?.id ?? null;
  const review = state?.reviewComments ?? null;
  const reviewProcessed = new Set(review?.processed ?? []);
  return (comment) => {
    if (comment.acknowledged === true) return true;
    if (comment.review === true)
      return (
        review === null ||
        reviewProcessed.has(comment.id) ||
        Date.parse(comment.createdAt ?? "") < Date.parse(review.since)
      );
    return processed.has(comment.id) || (cursor !== null && comment.id <= cursor);
  };
}

/**
 * Where the reconcile locks live: in Actions mode a worker run's last step reconciles outside the controller
 * workflow's concurrency group, so every reconcile there first holds this lock (src/github/reconcile-lock.ts).
 */
export const RECONCILE_LOCK_PREFIX = "refs/autopilot/reconcile/";

/**
 * One holder's claim on the reconcile lock: `<expiry in ms since the epoch, 15 digits>-<holder>`. The expiry is
 * in the name so that every contender can tell a claim its holder died with from a live one without another read.
 */
export function reconcileLockRef(expiresAtMs: number, holder: string): string {
  return `${RECONCILE_LOCK_PREFIX}${String(Math.floor(expiresAtMs)).padStart(15, "0")}-${holder}`;
}

/** A reconcile lock claim's expiry and holder (the name relative to RECONCILE_LOCK_PREFIX, or in full); null for any other. */
export function parseReconcileLock(name: string): { expiresAtMs: number; holder: string } | null {
  const m = /^(?:refs\/autopilot\/reconcile\/)?(\d{15})-([A-Za-z0-9_-]{1,80})$/.exec(name);
  return m ? { expiresAtMs: Number(m[1]), holder: m[2]! } : null;
}

/**
 * The workflow run a reconcile lock holder named itself after (`run-<run id>-<attempt>-<random>`, as the
 * controller action names it); null for a holder named otherwise (then only its claim's expiry ends it).
 */
export function holderRun(holder: string): { runId: number; attempt: number } | null {
  const m = /^run-(\d{1,16})-(\d{1,4})-[0-9a-f]+$/.exec(holder);
  return m ? { runId: Number(m[1]), attempt: Number(m[2]) } : null;
}

/**
 * The hidden marker ending the reviewer's pull-request review (src/worker/job/review.ts): its verdict and the
 * head it was given on. The controller reads it only from a review Autopilot's own account wrote at that commit
 * (src/core/gates/reviewer-gate.ts); the reviewer's own words never carry one (they are quoted inert).
 */
export function reviewMarker(verdict: "approve" | "request_changes", head: string): string {
  return `${AUTOPILOT_MARKER_PREFIX}review ${JSON.stringify({ verdict, head })} -->`;
}

const REVIEW_MARKER =
  /<!-- autopilot:review (\{"verdict":"(approve|request_changes)","head":"([0-9a-f]{40})"\}) -->\s*$/;

/** The verdict and head of a review body's marker, which must end the body; null without one. */
export function parseReviewMarker(
  body: string,
): { verdict: "approve" | "request_changes"; head: string } | null {
  const match = REVIEW_MARKER.exec(body);
  return match ? { verdict: match[2] as "approve" | "request_changes", head: match[3]! } : null;
}
