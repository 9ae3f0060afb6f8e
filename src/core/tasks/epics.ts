/**
 * Epics, the pure part: an open issue with native sub-issues that carries the ready label is an epic, not a task
 * (no worker is dispatched for it). A writer's label on it pools its open sub-issues (src/core/reconcile/epic-pooling.ts
 * gives each the ready label as if that writer had); this module says which sub-issues are pooled, renders the
 * checklist of their progress kept in one comment on the parent, and says when the epic is done.
 */
import type { IssueNode } from "../world.js";
import { escapeInline, quietLogin } from "../text/markdown.js";
import type { TaskStatus } from "./task.js";

/** The hidden marker of an epic's progress comment: the comment is found again by it and edited in place. */
export const EPIC_PROGRESS_MARKER = "<!-- autopilot:epic-progress -->";

/** Whether an issue, whose labels give `status`, is an epic: open, with sub-issues, labeled ready. */
export function isEpicParent(
  issue: Pick<IssueNode, "state" | "subIssues">,
  status: TaskStatus | null,
): boolean {
  return issue.state === "open" && status === "ready" && (issue.subIssues?.length ?? 0) > 0;
}

/**
 * The sub-issues a writer's ready label on the parent pools now: the open ones that are not tasks yet (no state
 * label, not excluded), in the parent's order. A sub-issue already a task keeps its own state.
 */
export function subIssuesToPool(
  subIssues: readonly number[],
  child: (n: number) => { open: boolean; status: TaskStatus | null; epic: boolean } | null,
): number[] {
  return subIssues.filter((n) => {
    const c = child(n);
    return !!c && c.open && c.status === null && !c.epic;
  });
}

/** Where one sub-issue stands, as its checklist line says it. */
export type EpicItemState =
  | "done"
  | "closed"
  | "queued"
  | "waiting"
  | "in progress"
  | "in review"
  | "blocked"
  | "needs a human"
  | "timed out"
  | "failed"
  | "skipped"
  | "not in the pool"
  | "taken out"
  | "epic"
  | "not pooled";

export interface EpicItem {
  issue: number;
  title: string;
  state: EpicItemState;
  /** Why, for the states that have a reason (waiting, blocked, taken out, …). */
  detail?: string | null;
  /** The task's pull request, when it has one. */
  pr?: number | null;
}

/** The state of an open sub-issue from its task status, other than ready (queued, waiting: the pool says which). */
export function itemStateOf(status: Exclude<TaskStatus, "ready">): EpicItemState {
  switch (status) {
    case "in-progress":
      return "in progress";
    case "review":
      return "in review";
    case "needs-human":
      return "needs a human";
    case "timeout":
      return "timed out";
    default:
      return status;
  }
}

/** The epic is done: every one of its sub-issues is closed. */
export function epicDone(items: readonly EpicItem[]): boolean {
  return items.length > 0 && items.every((i) => i.state === "done" || i.state === "closed");
}

const ICON: Partial<Record<EpicItemState, string>> = {
  done: "✅",
  closed: "⚪",
  "in progress": "🔄",
  "in review": "👀",
  blocked: "⛔",
  "needs a human": "🙋",
  "timed out": "⏱️",
  failed: "❌",
};

/** The progress comment on the parent: a checklist of its sub-issues, then what happens when all are done. */
export function renderEpicProgress(input: {
  items: readonly EpicItem[];
  /** Who approved the epic with the ready label. */
  by: string;
  readyLabel: string;
  closeParent: boolean;
  done: boolean;
}): string {
  const { items } = input;
  const finished = items.filter((i) => i.state === "done" || i.state === "closed").length;
  const lines = [
    `### Epic progress: ${finished} of ${items.length} sub-issues done`,
    "",
    ...items.map((i) => {
      const tick = i.state === "done" || i.state === "closed" ? "x" : " ";
      const icon = ICON[i.state] ? `${ICON[i.state]} ` : "";
      const pr = i.pr ? ` (PR #${i.pr})` : "";
      const detail = i.detail ? `: ${escapeInline(i.detail, 160)}` : "";
      return `- [${tick}] #${i.issue} ${escapeInline(i.title, 100)} — ${icon}${i.state}${pr}${detail}`;
    }),
    "",
  ];
  if (input.done) {
    lines.push(
      input.closeParent
        ? "Every sub-issue is done, so Autopilot closes this epic."
        : "Every sub-issue is done (`epics.closeParent` is off, so this epic stays open).",
    );
  } else {
    lines.push(
      `${quietLogin(input.by)}'s \`${input.readyLabel}\` label on this issue pooled its open sub-issues; this ` +
        "issue itself is not worked on. A sub-issue added later is pooled when a person with write access labels " +
        `it \`${input.readyLabel}\`, or adds the label to this issue again.` +
        (input.closeParent ? " Autopilot closes this issue when every sub-issue is done." : ""),
    );
  }
  lines.push("", EPIC_PROGRESS_MARKER);
  return lines.join("\n");
}

/** The epic's line on the dashboard: how many sub-issues are done, and where the others stand. */
export function epicSummary(items: readonly EpicItem[]): string {
  const finished = items.filter((i) => i.state === "done" || i.state === "closed").length;
  const open = items
    .filter((i) => i.state !== "done" && i.state !== "closed")
    .slice(0, 10)
    .map((i) => `#${i.issue} ${i.state}`);
  return `epic: ${finished} of ${items.length} sub-issues done${open.length ? ` (${open.join(", ")})` : ""}`;
}
