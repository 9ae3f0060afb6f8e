/**
 * Whether a repository needs the controller's periodic tick, judged from one reconcile's world and decision.
 *
 * A repository is active while something in it moves with time and no webhook may come to say so: a task
 * ready (a dispatch waits for a free slot, a backoff or an agent's limit), in progress (runs that stall, time
 * out or never appear), or in review (checks that never report, merge retries, the review reminder); a worker
 * run not completed; or a reconcile that acted (its effects' own results are read by the next one). Everything
 * else waits on people, whose labels, commands and answers arrive as webhooks: such a repository is idle, and
 * ticks leave it to the bounded safety sweep (tick-choice.ts). A tracking issue alone is no activity: it stays
 * after every session has ended.
 */
import type { Decision } from "../reconcile/context.js";
import { type TaskLabelNames, type TaskStatus, taskStatusFromLabels } from "../tasks/task.js";
import type { WorldSnapshot } from "../world.js";

export type RepoActivity =
  | { kind: "active"; reason: string }
  /** `wakeAtMs`: when a step only time brings falls due (`Decision.wakeAtMs`): the tick takes it up then. */
  | { kind: "idle"; wakeAtMs?: number };

/** The statuses whose next step comes with time, not with a person's event. */
const MOVING: ReadonlySet<TaskStatus> = new Set(["ready", "in-progress", "review"]);

export function repoActivity(input: {
  snapshot: WorldSnapshot;
  decision: Pick<Decision, "effects" | "wakeAtMs">;
  labels: TaskLabelNames;
}): RepoActivity {
  const { snapshot, decision, labels } = input;
  if (decision.effects.length > 0)
    return { kind: "active", reason: `acted (${decision.effects.length} effect(s))` };
  for (const issue of snapshot.issues) {
    if (issue.isPullRequest || issue.state !== "open") continue;
    const status = taskStatusFromLabels(issue, labels);
    if (status && MOVING.has(status)) return { kind: "active", reason: `task #${issue.number} is ${status}` };
  }
  const live = snapshot.runs.find((run) => run.status !== "completed");
  if (live) return { kind: "active", reason: `worker run ${live.id} is ${live.status}` };
  return decision.wakeAtMs === undefined ? { kind: "idle" } : { kind: "idle", wakeAtMs: decision.wakeAtMs };
}
