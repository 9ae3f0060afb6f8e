/**
 * The reconcile a worker run does as its own last step (the controller action with `ending-run`, in the worker
 * workflow): that run is still in progress while it decides, but its work is over (its result is written, its
 * agent stopped). Seen as ended, its task's outcome is handled and its slot goes to the next task at once,
 * instead of in the controller run its `workflow_run` event would start (a billed job of its own).
 *
 * Pure: the snapshot as the run's end will leave it.
 */
import type { WorldSnapshot } from "../../world.js";

export function withRunEnded(snapshot: WorldSnapshot, runId: number, now: Date): WorldSnapshot {
  if (!snapshot.runs.some((r) => r.id === runId && r.status !== "completed")) return snapshot;
  return {
    ...snapshot,
    runs: snapshot.runs.map((r) =>
      r.id === runId
        ? { ...r, status: "completed" as const, conclusion: "success", updatedAt: now.toISOString() }
        : r,
    ),
  };
}
