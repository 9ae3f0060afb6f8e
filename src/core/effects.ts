/**
 * What a reconcile wants done, as data. The pure decisions in src/core return these; src/github executes them
 * in order. Each effect is safe to repeat: executing it twice leaves GitHub as executing it once would.
 */

export type Reaction = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

export type Effect =
  /** Replace the task's state label: add `add` (if any) and remove every label in `remove` that is present. */
  | { type: "setStateLabel"; issue: number; add: string | null; remove: string[] }
  | { type: "addLabels"; issue: number; labels: string[] }
  | { type: "removeLabels"; issue: number; labels: string[] }
  /**
   * `key` is a hidden marker (`<!-- autopilot:key -->`) appended to the body so a repeated effect is recognisable.
   * With `afterDeleting`, only once this batch deleted that branch (see `deleteBranch`).
   */
  | { type: "comment"; issue: number; body: string; key?: string; afterDeleting?: string }
  /** `review`: the comment is a line comment of a pull-request review (another endpoint, another id sequence). */
  | { type: "react"; commentId: number; content: Reaction; review?: true }
  /**
   * Autopilot's one comment on `issue` carrying the hidden `marker` (an epic's progress checklist; `body` includes
   * it): edited in place when it exists, created when it does not, never a second one. Only Autopilot's own
   * comment counts.
   */
  | { type: "progressComment"; issue: number; marker: string; body: string }
  | {
      type: "dispatchWorker";
      issue: number;
      attempt: number;
      dispatchId: string;
      /** Extra workflow inputs beyond issue/attempt/dispatch-id/tracking-issue. */
      inputs?: Record<string, string>;
      /**
       * A recorded dispatch sent again because its run never appeared. Its dispatch lock (see the executor) may
       * already be held by the controller that recorded it and died, so a re-send does not take the lock again.
       */
      resend?: boolean;
    }
  | { type: "cancelRun"; runId: number; issue?: number }
  /** Merges only if the PR head is still `expectedHeadSha` (GitHub's `sha` parameter), so a late push is never merged unreviewed. */
  | {
      type: "mergePr";
      pr: number;
      issue: number;
      method: "merge" | "squash" | "rebase";
      expectedHeadSha: string;
      /** Which attempt at this task's merge (a refusal is explained once per PR, marked with it). */
      attempt?: number;
    }
  /**
   * Take back a merge handed to GitHub (auto-merge turned off, the PR taken out of the merge queue): the head
   * changed or Autopilot's gates no longer pass, so GitHub must not merge it by itself.
   */
  | { type: "withdrawMerge"; pr: number; issue: number; what: "auto-merge" | "queue"; reason: string }
  | { type: "closeIssue"; issue: number; reason: "completed" | "not_planned" }
  /** `/autopilot rollback` (a merged task sent back to the queue): the issue is opened again. */
  | { type: "reopenIssue"; issue: number }
  /**
   * `/autopilot rollback` or `cleanup`: the task's open PR is closed unmerged (its branch goes separately). With
   * `afterDeleting`, only once this batch deleted that branch (see `deleteBranch`).
   */
  | { type: "closePull"; pr: number; issue: number; afterDeleting?: string }
  /**
   * `/autopilot rollback` of a merged task: GitHub opens a PR that reverts the merged PR `pr` (its GraphQL
   * `revertPullRequest`, on a branch `revert-<pr>-<head branch>` it names itself); the review phase gates it.
   */
  | { type: "revertPull"; pr: number; issue: number; title: string; body: string }
  /**
   * Best of N's winner (src/core/reconcile/runs/best-of.ts): the task branch `branch` is pointed at the chosen
   * candidate's head `sha` (created, or moved there with the commit it was at kept under
   * `refs/autopilot/replaced/`), and the task's pull request is opened from it onto `base`, unless Autopilot's
   * own is open there already.
   */
  | {
      type: "promoteCandidate";
      issue: number;
      branch: string;
      sha: string;
      base: string;
      title: string;
      body: string;
    }
  /**
   * Delete a branch. With `expectOid`, only while it is still at that commit (the one the decision was made
   * on): a branch someone pushed to since is kept, and the later effects of the batch naming it in
   * `afterDeleting` (the stale-branch sweep's PR closing and comment) are skipped.
   */
  | { type: "deleteBranch"; branch: string; expectOid?: string }
  /** The task ended: delete the dispatch lock refs of its attempts 1..`attempts` (src/core/contract.ts). */
  | { type: "releaseDispatchLocks"; issue: number; attempts: number }
  /** Create (when `issue` is null) or update the tracking issue, re-reading first and refusing on a revision mismatch. */
  | {
      type: "writeTrackingIssue";
      issue: number | null;
      title: string;
      body: string;
      expectedRevision: number | null;
      /**
       * The body this decision was made on. A person's edit since keeps the revision (a ticked box saves the
       * whole body with the state in it), so the re-read compares the text too and refuses when it changed.
       */
      readBody?: string;
    }
  | { type: "pinIssue"; issue: number }
  /**
   * `/autopilot split #N` approved (src/core/reconcile/commands/split-command.ts): the sub-issues of Autopilot's own
   * proposal comment on `parent` whose data has `digest` are created (each with the `ready` label, its body's
   * hidden marker finding it again, so none is created twice), linked as native sub-issues of `parent` in order,
   * and then `parent` is labeled `ready` with its `remove` labels taken off: an epic holding them.
   */
  | {
      type: "createSplitIssues";
      parent: number;
      digest: string;
      approvedBy: string;
      approvedAt: string;
      ready: string;
      remove: string[];
    };

/** Writes count against the per-run operation limit; reads do not appear here at all. */
export function describeEffect(effect: Effect): string {
  switch (effect.type) {
    case "setStateLabel":
      return `set #${effect.issue} to ${effect.add ?? "(no state label)"}`;
    case "addLabels":
      return `label #${effect.issue} ${effect.labels.join(", ")}`;
    case "removeLabels":
      return `unlabel #${effect.issue} ${effect.labels.join(", ")}`;
    case "comment":
      return `comment on #${effect.issue}`;
    case "react":
      return `react ${effect.content} to ${effect.review ? "review comment" : "comment"} ${effect.commentId}`;
    case "progressComment":
      return `write the progress comment on #${effect.issue}`;
    case "dispatchWorker":
      return `dispatch a worker for #${effect.issue} (attempt ${effect.attempt})`;
    case "cancelRun":
      return `cancel run ${effect.runId}`;
    case "mergePr":
      return `merge PR #${effect.pr} (${effect.method}) at ${effect.expectedHeadSha.slice(0, 7)}`;
    case "withdrawMerge":
      return `${effect.what === "queue" ? "take PR #" + effect.pr + " out of the merge queue" : "turn off auto-merge on PR #" + effect.pr} (${effect.reason})`;
    case "closeIssue":
      return `close #${effect.issue} as ${effect.reason}`;
    case "reopenIssue":
      return `reopen #${effect.issue}`;
    case "closePull":
      return `close PR #${effect.pr} unmerged`;
    case "revertPull":
      return `open a pull request reverting PR #${effect.pr}`;
    case "promoteCandidate":
      return `open the pull request of #${effect.issue} from ${effect.branch} at ${effect.sha.slice(0, 7)}`;
    case "deleteBranch":
      return `delete branch ${effect.branch}${effect.expectOid ? ` if still at ${effect.expectOid.slice(0, 7)}` : ""}`;
    case "releaseDispatchLocks":
      return `delete the dispatch locks of #${effect.issue}`;
    case "writeTrackingIssue":
      return effect.issue === null ? "create the tracking issue" : `update tracking issue #${effect.issue}`;
    case "pinIssue":
      return `pin #${effect.issue}`;
    case "createSplitIssues":
      return `create the approved sub-issues of #${effect.parent}`;
  }
}
