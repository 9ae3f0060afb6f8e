/**
 * Which pool issues are ready, from the task graph (graph.ts): open, labeled ready, not excluded, in no other
 * state, in no cycle, every dependency closed; the others wait, each with its reason for people.
 */
import { type CrossRepoRef, formatRef } from "./dependency-references.js";
import type { TaskGraph, TaskNode } from "./graph.js";

interface ReadyOptions {
  /** Label that puts an issue in the pool (`labels.ready`). */
  readyLabel: string;
  /** Label that keeps an issue out whatever else it has (`labels.exclude`); omit for none. */
  excludeLabel?: string | null;
  /** The other state labels (in-progress, review, blocked, needs-human, timeout, failed). */
  stateLabels?: readonly string[];
}

export type WaitingCode = "excluded" | "other_state" | "cycle" | "dependencies";

interface WaitingTask {
  number: number;
  code: WaitingCode;
  /** For people: "waiting on #3, #5", "in cycle #2 → #4 → #2", "excluded (autopilot:exclude)". */
  reason: string;
  /** For `dependencies`: what it waits on (same repository, then other repositories). */
  waitingOn?: (number | CrossRepoRef)[];
}

interface ReadyResult {
  /** Ready tasks, ascending by number. */
  ready: TaskNode[];
  /** Pool issues (open, labeled ready) that are not ready, with the reason, ascending by number. */
  waiting: WaitingTask[];
}

/** A waiting reason names at most this many dependencies ("waiting on #1, …, #9 and 41 more"). */
const WAITING_SHOWN = 10;

/** Splits the pool (open issues with the ready label) into ready tasks and waiting ones with reasons. */
export function readyTasks(graph: TaskGraph, options: ReadyOptions): ReadyResult {
  const ready: TaskNode[] = [];
  const waiting: WaitingTask[] = [];
  // Names lowered once, not once per issue and label.
  const readyLabel = options.readyLabel.toLowerCase();
  const excludeLabel = options.excludeLabel ? options.excludeLabel.toLowerCase() : null;
  const others = (options.stateLabels ?? []).filter((l) => l.toLowerCase() !== readyLabel);
  const othersLowered = new Set(others.map((l) => l.toLowerCase()));
  for (const node of graph.nodes.values()) {
    if (node.issue.state !== "open") continue;
    // One pass over the labels, without a lowered copy of them (this runs for every open issue).
    let isReady = false;
    let excluded = false;
    let otherState = false;
    for (const label of node.issue.labels) {
      const l = label.toLowerCase();
      if (l === readyLabel) isReady = true;
      if (l === excludeLabel) excluded = true;
      if (othersLowered.has(l)) otherState = true;
    }
    if (!isReady) continue;
    const n = node.number;
    if (excluded) {
      waiting.push({ number: n, code: "excluded", reason: `excluded (${options.excludeLabel})` });
      continue;
    }
    const other = otherState
      ? others.filter((l) => node.issue.labels.some((x) => x.toLowerCase() === l.toLowerCase()))
      : [];
    if (other.length > 0) {
      waiting.push({ number: n, code: "other_state", reason: `also labeled ${other.join(", ")}` });
      continue;
    }
    if (node.cycle) {
      waiting.push({
        number: n,
        code: "cycle",
        reason: `in cycle ${formatCycle(node.cycle)}`,
      });
      continue;
    }
    const on: (number | CrossRepoRef)[] = [...node.unresolved, ...node.unresolvedCrossRepo];
    if (on.length > 0) {
      const shown = on.length > WAITING_SHOWN ? on.slice(0, WAITING_SHOWN - 1) : on;
      const more = on.length > shown.length ? ` and ${on.length - shown.length} more` : "";
      const note = node.referenceNote ? ` (${node.referenceNote})` : "";
      waiting.push({
        number: n,
        code: "dependencies",
        reason: `waiting on ${shown.map(formatRef).join(", ")}${more}${note}`,
        waitingOn: on,
      });
      continue;
    }
    ready.push(node);
  }
  return { ready, waiting };
}

/** "#2 → #4 → #2"; long cycles are shortened: "#1 → #2 → #3 → … → #40 → #1 (40 issues)". */
export function formatCycle(cycle: readonly number[], max = 8): string {
  const ref = (n: number) => `#${n}`;
  if (cycle.length <= max) return cycle.map(ref).join(" → ");
  // A cycle path is simple and closed: its members are all entries but the repeated last one.
  return (
    [...cycle.slice(0, 3).map(ref), "…", ...cycle.slice(-2).map(ref)].join(" → ") +
    ` (${cycle.length - 1} issues)`
  );
}
