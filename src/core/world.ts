/**
 * The world as one reconcile sees it: plain data gathered by src/github in as few requests as possible,
 * consumed by the pure decisions in src/core. Everything here is derived from GitHub; nothing is invented.
 */
import type { PullDiff } from "./gates/diff-gate.js";
import type { WorkerAgent, WorkerResult } from "./tasks/worker-result.js";
import type { TextEdit } from "./tasks/task-text.js";

export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface IssueNode {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  /** Whether a closed issue was closed as completed (vs not planned); null while open. */
  stateReason?: "completed" | "not_planned" | "reopened" | "duplicate" | null;
  labels: string[];
  createdAt: string;
  closedAt?: string | null;
  author: string | null;
  /** Login of whoever applied the ready label most recently, when known. */
  readyLabeledBy?: string | null;
  /** When the ready label was applied most recently (its labeled event), when known. */
  readyLabeledAt?: string | null;
  /**
   * Who applied best of N's label most recently (its labeled event among the last read), read while the issue
   * carries it and best of N is on; null when unknown. Only a writer's label asks for a round.
   */
  bestOfLabeledBy?: string | null;
  /** Recent edits of the title and body with who made them (see src/core/tasks/task-text.ts). */
  edits?: TextEdit[];
  /**
   * Status labels other than ready that Autopilot did not set itself (by the labeled event's actor id): they
   * do not count (see src/core/tasks/authorship.ts).
   */
  foreignLabels?: { label: string; by: string | null }[];
  /** Native sub-issue parent. */
  parent?: number | null;
  /** Native sub-issues of this issue. */
  subIssues?: number[];
  /**
   * When each sub-issue was linked to this issue and by whom: the newest `SubIssueAddedEvent` for it on this
   * issue's timeline. Read only for an epic about to pool (src/github/snapshot/sub-issue-links.ts); a sub-issue
   * missing here was linked at a time the snapshot did not read.
   */
  subIssueLinks?: SubIssueLink[];
  /** Native "blocked by" relations (issue numbers in the same repository). */
  blockedBy?: number[];
  isPullRequest?: boolean;
}

export interface SubIssueLink {
  issue: number;
  at: string;
  /** The event's actor; null for a deleted account. */
  by: string | null;
}

export interface CheckNode {
  name: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "pending" | "requested";
  conclusion: string | null;
  /** The GitHub App that created a check run, or "status" for a commit status context. */
  app?: string | null;
  summary?: string | null;
  url?: string | null;
  /**
   * The check belongs to Autopilot itself (its app, or a job of its controller/worker workflows): it never
   * gates a merge, so the controller does not wait on its own run.
   */
  isAutopilot?: boolean;
}

export interface ReviewNode {
  author: string | null;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  submittedAt: string | null;
  commitSha?: string | null;
  body: string;
}

export interface PullNode {
  number: number;
  title: string;
  body: string;
  headRef: string;
  headSha: string;
  /**
   * Whether the head branch still exists, where the snapshot asked (closed and merged pulls): GitHub deletes a
   * merged PR's branch itself when the repository says so, and then there is nothing left to delete.
   */
  headBranchExists?: boolean;
  baseRef: string;
  state: "open" | "closed" | "merged";
  mergeable: "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
  labels: string[];
  createdAt: string;
  /** Time of the most recent push to the head branch (committedDate of head commit when unknown). */
  lastPushAt?: string | null;
  checks: CheckNode[];
  reviews: ReviewNode[];
  /** Inline and general review comments, newest last, for the next worker's prompt. */
  reviewComments?: { author: string | null; body: string; path?: string | null; createdAt: string }[];
  /**
   * The review conversations not resolved yet (GraphQL `reviewThreads`, `isResolved: false`), each with its
   * comments oldest first: one a writer spoke in is feedback until the next push, then waits for them.
   */
  openThreads?: {
    path: string | null;
    comments: { author: string | null; body: string; createdAt: string }[];
  }[];
  /** Who opened it and from where (src/core/gates/pull-trust.ts): only Autopilot's own, from this repository, count. */
  isCrossRepository?: boolean;
  /** Base branch SHA when the snapshot was taken (the diff is read from it to the head SHA). */
  baseSha?: string | null;
  /** `owner/name` of the head repository; null when it was deleted. */
  headRepository?: string | null;
  author?: string | null;
  /** Account id (databaseId) of the author: compared with the bot's, never the login. */
  authorId?: number | null;
  /** Autopilot's comment explaining GitHub's last refusal to merge (src/core/gates/merge-refusal.ts), if any. */
  mergeRefusal?: {
    commentId: number;
    sha: string;
    attempt: number;
    reason: string;
    /** GitHub's own mechanism Autopilot handed the merge to after the refusal, when GitHub accepted it. */
    via?: MergeMechanism | null;
  } | null;
  /** The PR's GraphQL node id (GitHub's mutations name the pull request by it). */
  nodeId?: string | null;
  /** GitHub's `mergeStateStatus` (BEHIND: the branch must be brought up to date with its base first). */
  mergeState?: string | null;
  /** GitHub's auto-merge request on the PR, when one is on: who turned it on and with which method. */
  autoMerge?: { enabledBy: string | null; method: string | null } | null;
  /** The PR's entry in its base branch's merge queue, when it is queued. */
  mergeQueue?: { position: number | null; state: string | null } | null;
}

/**
 * GitHub's own ways to merge that Autopilot hands a gated head to when the immediate merge is refused
 * (src/core/gates/merge-refusal.ts): auto-merge, the merge queue, bringing the branch up to date.
 */
export type MergeMechanism = "auto-merge" | "queue" | "update-branch";

export interface RunNode {
  id: number;
  workflow: string;
  displayTitle: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "pending" | "requested";
  conclusion: string | null;
  createdAt: string;
  updatedAt: string;
  /** Parsed from the display title of worker runs. */
  dispatchId?: string | null;
  issue?: number | null;
  attempt?: number | null;
  /** html_url of the run, for the dashboard. */
  url?: string | null;
}

export interface CommentNode {
  id: number;
  /** GitHub's node id of the comment (GraphQL `id`), when the read gave it. */
  nodeId?: string;
  /** Issue (or PR) number the comment is on. */
  issue: number;
  author: string | null;
  authorIsBot?: boolean;
  /** Autopilot's own account wrote it (GitHub's account id, not a login): only then do its markers count. */
  fromApp?: boolean;
  body: string;
  createdAt: string;
  /** Whether Autopilot already acknowledged it (a reaction by Autopilot's bot). */
  acknowledged?: boolean;
  /**
   * A line comment of a pull-request review (`issue` is the pull request): GitHub numbers these apart from issue
   * comments, so they have a cursor of their own (src/core/contract.ts `commentProcessedRule`).
   */
  review?: boolean;
}

export interface TrackingIssueNode {
  number: number;
  body: string;
  updatedAt: string;
  pinned?: boolean;
  state: "open" | "closed";
  /** Login of whoever last edited the body (ticked checkboxes count only from people with write access). */
  lastEditedBy?: string | null;
}

export interface WorldSnapshot {
  repo: { owner: string; name: string; defaultBranch: string };
  /** Login of Autopilot's own bot account (events by it never start work by themselves). */
  botLogin: string;
  issues: IssueNode[];
  pulls: PullNode[];
  runs: RunNode[];
  /** Comments that may carry commands, newer than the state's command cursor. */
  comments: CommentNode[];
  /** Latest worker result per task issue, parsed from the progress comments. */
  workerResults: WorkerResult[];
  /**
   * Node id of the comment each task's latest worker result was read from, by issue number: kept in the
   * dashboard state so the comment is found again however many comments follow it.
   */
  resultComments?: Record<number, string>;
  /** The agent each task's latest worker reports in that comment, and why it fell back (its result marker's `agent`: tasks/worker-result.ts). */
  workerAgents?: Record<number, WorkerAgent>;
  /** Repository permission per login, for every login that appears as a command author, label actor or reviewer. */
  permissions: Record<string, Permission>;
  trackingIssue: TrackingIssueNode | null;
  /**
   * Younger open issues of Autopilot's carrying the tracking marker beside `trackingIssue` (src/github's
   * tracking-pick.ts): duplicates a failed check after a create left open, closed by the next reconcile.
   */
  duplicateTrackingIssues?: number[];
  /** Raw text of .github/autopilot.yml on the default branch; null when the file does not exist. */
  configText: string | null;
  /** Dispatch lock refs that exist (names under refs/autopilot/dispatch/, src/core/contract.ts). */
  dispatchLocks?: string[];
  /** Whether `dispatchLocks` lists every one (the first 100 are read): only then is a missing lock missing. */
  dispatchLocksComplete?: boolean;
  /**
   * The task branches (`<branchPrefix>issue-N`) that exist, by name, with the commit each is at (the first 100
   * in name order, read with the snapshot). Absent when not read: the stale-branch sweep then reads nothing.
   */
  taskBranches?: Record<string, string>;
  /** Account id of Autopilot's bot (src/github always sets it): the author its pull requests must have. */
  botId?: number | null;
  /** Diffs of the task PRs the controller read at their head SHA this reconcile (src/core/gates/diff-gate.ts). */
  pullDiffs?: PullDiff[];
  /**
   * Who moved each branch the stale-branch sweep looks at (src/core/reconcile/pulls/stale-branches.ts), by branch
   * name, from GitHub's own record of pushes (the actor whose token pushed, by account id).
   */
  branchActivity?: Record<string, BranchActivity>;
  /**
   * Whether each task branch `/autopilot rollback` of unmerged work is deleting still exists
   * (src/core/reconcile/commands/rollback.ts `discardedBranches`); a branch not listed is unknown.
   */
  branchExists?: Record<string, boolean>;
}

/** GitHub's record of the moves of one branch, newest first ("List repository activities"). */
export interface BranchActivity {
  entries: { actorId: number | null; at: string; type: string }[];
  /** Every move is listed (fewer than a page came back): only then can "nobody else pushed" be concluded. */
  complete: boolean;
}

export function canWrite(permission: Permission | undefined): boolean {
  return permission === "admin" || permission === "maintain" || permission === "write";
}
