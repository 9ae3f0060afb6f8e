/**
 * The schedule of the controller workflow in Actions mode, kept in a repository variable so that an idle
 * repository bills no scheduled job.
 *
 * GitHub's expressions have no clock (https://docs.github.com/en/actions/reference/workflows-and-actions/contexts
 * lists every context a job's `if:` may read: none holds the time), so the variable cannot hold a time for
 * the `if:` to compare with the run's. It holds a cadence instead, which the workflow's two crons read
 * (templates/workflows/autopilot-controller.yml):
 * - `soon`: something moves with time now (a task in progress or in review, or ready for a running
 *   `mode: auto` session, a live worker run, a reconcile that acted: repo-activity.ts) or a step only time brings falls due within the hour: the 10-minute cron runs;
 * - `later <time>`: nothing moves, and the next step time brings falls due later: the hourly cron runs, and
 *   the first run within the hour of it turns the variable to `soon`;
 * - `idle`: nothing waits on time (a paused session and `mode: semi-auto` wait on people's commands); every
 *   scheduled run is skipped (free) and events alone start runs.
 * An unset variable (an installation that never wrote it) runs the 10-minute cron, as before the variable.
 */
import type { RepoActivity } from "./repo-activity.js";

/** The repository variable's name (`vars.AUTOPILOT_WAKE` in the workflow). */
export const WAKE_VARIABLE = "AUTOPILOT_WAKE";

/** How far ahead a step time brings makes the cadence `soon`: the hourly cron's period. */
export const SOON_WITHIN_MS = 60 * 60_000;

/** The variable's value after a reconcile that found `activity` at `nowMs`: the cadence, then the time it is for. */
export function wakeVariableValue(activity: RepoActivity, nowMs: number): string {
  if (activity.kind === "active") return "soon";
  if (activity.wakeAtMs === undefined) return "idle";
  const at = new Date(activity.wakeAtMs).toISOString();
  return activity.wakeAtMs - nowMs <= SOON_WITHIN_MS ? `soon ${at}` : `later ${at}`;
}

/** The value a run that could not reconcile leaves: the 10-minute cron, so the schedule tries again. */
export const WAKE_AFTER_FAILURE = "soon";
