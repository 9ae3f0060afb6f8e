/**
 * Whether a repository needs the controller's periodic tick, judged from one reconcile's world and decision.
 *
 * A repository is active while something in it moves with time and no webhook may come to say so: ready work
 * that Autopilot starts by itself (`Decision.readyWaitsOnAutopilot`: `mode: auto`, a running session, and a
 * task labeled ready, whether the pool can start it now or only after a slot, a backoff, an agent's limit or a
 * dead controller's dispatch lock), a task in progress (runs that stall,
 * time out or never appear; also one still labeled in progress beside another state label, a label move half
 * done that a later reconcile repairs) or in review (checks that never report, merge retries, the review reminder); a
 * session pausing or stopping (it waits for its workers' checkpoints); a worker run not completed; or a
 * reconcile that acted (its effects' own results are read by the next one). Everything else waits on people,
 * whose labels, commands and answers arrive as webhooks: such a repository is idle, and ticks leave it to the
 * bounded safety sweep (tick-choice.ts). A ready task is such a wait when nothing starts it but a person: a
 * paused or stopped session (`/autopilot resume`, `/autopilot start`), `session.autoStart: false`,
 * `mode: semi-auto` (`/autopilot run #N`). A tracking issue alone is no activity: it stays
 * after every session has ended.
 */
import type { Decision } from "../reconcile/context.js";
import type { SessionStatus } from "../session/session.js";
import { type TaskLabelNames, type TaskStatus, taskStatusFromLabels } from "../tasks/task.js";
import type { WorldSnapshot } from "../world.js";

export type RepoActivity =
  | { kind: "active"; reason: string }
  /** `wakeAtMs`: when a step only time brings falls due (`Decision.wakeAtMs`): the tick takes it up then. */
  | { kind: "idle"; wakeAtMs?: number };

/** The statuses whose next step comes with time, not with a person's event, whatever the session does. */
const MOVING: ReadonlySet<TaskStatus> = new Set(["in-progress", "review"]);

/** Session statuses that wait for workers to reach a checkpoint: the controller moves them on. */
const SETTLING: ReadonlySet<SessionStatus> = new Set(["pausing", "stopping"]);

export function repoActivity(input: {
  snapshot: WorldSnapshot;
  decision: Pick<Decision, "effects" | "wakeAtMs" | "readyWaitsOnAutopilot">;
  labels: TaskLabelNames;
  /** The session as this reconcile leaves it. */
  session: SessionStatus;
}): RepoActivity {
  const { snapshot, decision, labels, session } = input;
  if (decision.effects.length > 0)
    return { kind: "active", reason: `acted (${decision.effects.length} effect(s))` };
  if (SETTLING.has(session)) return { kind: "active", reason: `the session is ${session}` };
  if (decision.readyWaitsOnAutopilot)
    return { kind: "active", reason: "ready work waits for a slot or a time, then starts by itself" };
  for (const issue of snapshot.issues) {
    if (issue.isPullRequest || issue.state !== "open") continue;
    const status = taskStatusFromLabels(issue, labels);
    if (status && MOVING.has(status)) return { kind: "active", reason: `task #${issue.number} is ${status}` };
    // In progress beside another state label (a label move of Autopilot's half done, src/core/reconcile/runs/
    // workers.ts): its repair comes with time (the settle window, the dispatch's grace), not with a person.
    if (status && status !== "skipped" && hasInProgressLabel(issue.labels, labels))
      return { kind: "active", reason: `task #${issue.number} is still labeled in progress` };
  }
  const live = snapshot.runs.find((run) => run.status !== "completed");
  if (live) return { kind: "active", reason: `worker run ${live.id} is ${live.status}` };
  return decision.wakeAtMs === undefined ? { kind: "idle" } : { kind: "idle", wakeAtMs: decision.wakeAtMs };
}

function hasInProgressLabel(issueLabels: readonly string[], labels: TaskLabelNames): boolean {
  const name = labels.inProgress.toLowerCase();
  return !!name && issueLabels.some((l) => l.toLowerCase() === name);
}
