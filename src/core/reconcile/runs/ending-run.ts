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

/**
 * Whether the snapshot shows the ending run's finished result, the one thing that reconcile is there to act
 * on. The worker wrote it moments before, and a read right after a write may not show it yet: then the step
 * reconciles again shortly (src/app/actions/reconcile-rounds.ts), since the controller workflow skips this run's end.
 * A run without a dispatch id (started by hand without one) has nothing to wait for.
 */
export function endingResultShown(snapshot: WorldSnapshot, runId: number): boolean {
  const run = snapshot.runs.find((r) => r.id === runId);
  if (run && !run.dispatchId) return true;
  return (
    !!run && snapshot.workerResults.some((r) => r.dispatchId === run.dispatchId && r.status === "finished")
  );
}
