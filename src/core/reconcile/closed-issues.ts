/** The phase for tasks whose issue was closed (by a merged PR's "Closes #N" or by a person): they leave the state. */
import { note, type Reconciling } from "./context.js";
import { retire, taskDone } from "./task-exit.js";
import { clearStateLabels } from "./task-labels.js";
import { pullsFor } from "./task-pulls.js";
import { cancelRun, isLive, liveRunsOf } from "./worker-runs.js";

export function processClosedIssues(ctx: Reconciling): void {
  for (const key of Object.keys(ctx.state.tasks)) {
    const n = Number(key);
    const issue = ctx.issues.get(n);
    if (!issue) {
      const merged = pullsFor(ctx, n).find((p) => p.state === "merged");
      if (merged) taskDone(ctx, n, merged);
      else if (!isLive(ctx, n)) {
        retire(ctx, n, "closed", null);
        // It left the pool (closed, or its labels removed) without a write of Autopilot's: there is no stale
        // read of ours to settle, so it is not held closed — a writer's new ready label counts at once.
        ctx.state.recent = ctx.state.recent.filter((r) => r.issue !== n);
        note(ctx, `#${n}: no longer among the open issues; counted as closed`);
      }
      continue;
    }
    if (issue.state !== "closed") continue;
    for (const run of liveRunsOf(ctx, n)) cancelRun(ctx, run, n, "issue closed");
    const merged = pullsFor(ctx, n).find((p) => p.state === "merged");
    if (merged) taskDone(ctx, n, merged);
    else {
      clearStateLabels(ctx, n);
      retire(ctx, n, issue.stateReason === "completed" ? "done" : "closed", null);
      note(ctx, `#${n}: closed on GitHub`);
    }
  }
}
