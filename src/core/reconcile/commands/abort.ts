/**
 * `/autopilot abort` (design document 000 §4.2): stop now. `stop` lets running workers reach their next iteration
 * boundary; abort cancels every live worker run at once (GitHub's cancel), ends the session (idle, as after a
 * stop), and puts each task a worker was starting or working on back to ready. Nothing is deleted: what a worker
 * pushed stays on its task branch, and the next worker resumes from that branch (src/worker/checkout/private-git.ts)
 * once a person starts a session again. A task in review keeps its pull request.
 *
 * The cancelled dispatch is marked handled, so its run's end counts as neither a crash nor a result; the session
 * being idle, nothing is dispatched again until `/autopilot start`, and a task whose run is still being cancelled
 * is live, so no second worker starts beside it.
 */
import type { Reconciling } from "../context.js";
import { note } from "../context.js";
import { sessionEvent } from "../session-events.js";
import { setStatus, statusOf } from "../task-labels.js";
import { cancelRun, liveIssues, liveRunsOf } from "../runs/worker-runs.js";
import type { TaskCommandOutcome } from "./retry-skip.js";

export function abortSession(ctx: Reconciling, actor: string): TaskCommandOutcome {
  const status = ctx.state.session.status;
  const live = [...liveIssues(ctx)].sort((a, b) => a - b);
  if (live.length === 0 && (status === "idle" || status === "completed"))
    return { ok: false, message: "Nothing to abort: no session is running and no worker runs." };
  let cancelled = 0;
  for (const n of live) {
    for (const run of liveRunsOf(ctx, n)) {
      cancelRun(ctx, run, n, `aborted by ${actor}`);
      cancelled++;
    }
    const record = ctx.state.tasks[n];
    if (record?.dispatchId) record.handled = record.dispatchId;
    if (statusOf(ctx, n) === "in-progress") {
      setStatus(ctx, n, "ready");
      if (record) record.reason = `aborted by @${actor.slice(0, 40)}; its branch is kept`;
    }
  }
  if (status === "running" || status === "pausing" || status === "paused")
    sessionEvent(ctx, { type: "stop", actor, activeWorkers: 0 }, true);
  else if (status === "stopping") sessionEvent(ctx, { type: "workersCheckpointed" }, true);
  note(
    ctx,
    `abort by ${actor}: ${cancelled} run(s) cancelled (${live.map((n) => `#${n}`).join(", ") || "none"})`,
  );
  const tasks = live.length > 0 ? ` of ${live.map((n) => `#${n}`).join(", ")}` : "";
  return {
    ok: true,
    message: `Aborted: ${cancelled === 1 ? "1 worker run" : `${cancelled} worker runs`}${tasks} cancelled now, and the session is stopped. What the workers pushed stays on their branches; \`/autopilot start\` goes on from there.`,
  };
}
