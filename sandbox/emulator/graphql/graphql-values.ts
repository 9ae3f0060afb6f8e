/** How the sandbox writes store values as GitHub's GraphQL values: dates, enums, type names. */
import type { Issue, IssueEvent, Reaction } from "../store.js";

export type Obj = Record<string, unknown>;

export function isoDate(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

export function upper(value: string | null | undefined): string | null {
  return value ? value.toUpperCase() : null;
}

export function typeNameToItemType(typename: string): string {
  return typename.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

export const REACTION_CONTENT: Array<[Reaction["content"], string]> = [
  ["+1", "THUMBS_UP"],
  ["-1", "THUMBS_DOWN"],
  ["laugh", "LAUGH"],
  ["hooray", "HOORAY"],
  ["confused", "CONFUSED"],
  ["heart", "HEART"],
  ["rocket", "ROCKET"],
  ["eyes", "EYES"],
];

export const EVENT_TYPENAMES: Record<IssueEvent["event"], string> = {
  labeled: "LabeledEvent",
  unlabeled: "UnlabeledEvent",
  closed: "ClosedEvent",
  reopened: "ReopenedEvent",
  locked: "LockedEvent",
  unlocked: "UnlockedEvent",
  renamed: "RenamedTitleEvent",
  pinned: "PinnedEvent",
  unpinned: "UnpinnedEvent",
  merged: "MergedEvent",
  head_ref_force_pushed: "HeadRefForcePushedEvent",
  review_requested: "ReviewRequestedEvent",
  assigned: "AssignedEvent",
  unassigned: "UnassignedEvent",
  sub_issue_added: "SubIssueAddedEvent",
  sub_issue_removed: "SubIssueRemovedEvent",
  blocked_by_added: "BlockedByAddedEvent",
  blocked_by_removed: "BlockedByRemovedEvent",
};

export function pullState(issue: Issue): string {
  if (issue.pull?.merged) return "MERGED";
  return issue.state === "open" ? "OPEN" : "CLOSED";
}
