/** Issues (and the issue half of pull requests), their events, comments and reactions. */
import type { PullFields } from "./pull-records.js";
import type { Reaction } from "./reaction-records.js";

export type IssueState = "open" | "closed";
export type StateReason = "completed" | "not_planned" | "reopened" | "duplicate" | null;
export type LockReason = "off-topic" | "too heated" | "resolved" | "spam" | null;

/** One entry of `GET /repos/{o}/{r}/issues/{n}/events` (and GraphQL `timelineItems`). */
export interface IssueEvent {
  id: number;
  nodeId: string;
  event:
    | "labeled"
    | "unlabeled"
    | "closed"
    | "reopened"
    | "locked"
    | "unlocked"
    | "renamed"
    | "pinned"
    | "unpinned"
    | "merged"
    | "head_ref_force_pushed"
    | "review_requested"
    | "assigned"
    | "unassigned"
    | "sub_issue_added"
    | "sub_issue_removed"
    | "blocked_by_added"
    | "blocked_by_removed";
  actor: string;
  createdAt: Date;
  /** For labeled/unlabeled: the label's name and color at that time. */
  label?: { name: string; color: string };
  /** For closed/merged: the commit that closed it, if any. */
  commitId?: string | null;
  stateReason?: StateReason;
  lockReason?: LockReason;
  rename?: { from: string; to: string };
  requestedReviewer?: string;
  assignee?: string;
  /**
   * For sub_issue_added/sub_issue_removed (on the parent): the sub-issue's number, GraphQL
   * `SubIssueAddedEvent.subIssue` (https://docs.github.com/en/graphql/reference/objects#subissueaddedevent).
   */
  subIssue?: number;
}

export type { Reaction, ReactionContent } from "./reaction-records.js";

export interface Comment {
  id: number;
  nodeId: string;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: Date;
  updatedAt: Date;
  /** The last edit of the body and who made it (GraphQL `lastEditedAt` / `editor`); null until edited. */
  lastEdit: { at: Date; editor: string } | null;
  reactions: Reaction[];
}

/** An issue or — when `pull` is set — a pull request (they share numbers, as on GitHub). */
export interface Issue {
  id: number;
  nodeId: string;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: IssueState;
  stateReason: StateReason;
  labels: string[];
  assignees: string[];
  locked: boolean;
  activeLockReason: LockReason;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  events: IssueEvent[];
  reactions: Reaction[];
  /** Issue number of the parent (sub-issues). */
  parent: number | null;
  subIssues: number[];
  /** Numbers of the issues this one is blocked by. */
  blockedBy: number[];
  pinned: boolean;
  /**
   * Body edit history (GraphQL `userContentEdits`, newest last). Once a body is edited, GitHub's history also
   * lists the original text, by its author at creation; every edit names who made it, through the web or
   * REST `PATCH /repos/{owner}/{repo}/issues/{issue_number}` alike:
   * https://docs.github.com/en/communities/moderating-comments-and-conversations/tracking-changes-in-a-comment
   * https://docs.github.com/en/graphql/reference/objects#usercontentedit
   */
  contentEdits?: { at: Date; editor: string }[];
  pull?: PullFields;
}
