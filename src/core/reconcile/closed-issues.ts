/** The phase for tasks whose issue was closed (by a merged PR's "Closes #N" or by a person): they leave the state. */
import type { IssueNode } from "../world.js";
import { note, type Reconciling } from "./context.js";
import { SETTLE_MINUTES } from "./timing.js";
import { retire, taskDone } from "./runs/task-exit.js";
import { clearStateLabels } from "./task-labels.js";
import { pullsFor } from "./pulls/task-pulls.js";
import { cancelRun, isLive, liveRunsOf } from "./runs/worker-runs.js";

export function processClosedIssues(ctx: Reconciling): void {
  for (const key of Object.keys(ctx.state.tasks)) {
    const n = Number(key);
    const issue = ctx.issues.get(n);
    if (reopening(ctx, n, issue)) continue;
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

/**
 * A merged task `/autopilot rollback` or `follow-up` just sent back (src/core/reconcile/commands/rollback.ts,
 * fix-follow-up.ts): its issue is being opened again, so a snapshot that still shows it closed (or not at all) is
 * stale, not a person's close. The reopen is asked again while it shows closed.
 */
function reopening(ctx: Reconciling, n: number, issue: IssueNode | undefined): boolean {
  const record = ctx.state.tasks[n];
  const asked = record?.rollback?.at ?? record?.followUp?.at;
  if (!asked || (issue && issue.state === "open")) return false;
  if (ctx.nowMs - Date.parse(asked) >= SETTLE_MINUTES * 60_000) return false;
  // A worker dispatched since proves the issue was opened again: a close now is a merge's or a person's.
  if (record?.dispatchedAt && Date.parse(record.dispatchedAt) > Date.parse(asked)) return false;
  // Asked again each time (a deferred or failed request is not lost); a no-op on an issue already open.
  if (issue && !ctx.effects.some((e) => e.type === "reopenIssue" && e.issue === n))
    ctx.effects.push({ type: "reopenIssue", issue: n });
  return true;
}
