/**
 * What each controller mode bills in GitHub Actions minutes a month, stated where the mode is chosen (`init`)
 * and in docs/INSTALL.md. GitHub bills each job that runs, rounded up to a whole minute, and nothing for a job
 * its `if:` skips (https://docs.github.com/en/billing/concepts/product-billing/github-actions,
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idif); a controller
 * job takes seconds, so each bills one minute.
 *
 * The controller workflow's schedule (templates/workflows/autopilot-controller.yml) runs its job every 10
 * minutes only while something moves with time, hourly while a step time brings is more than an hour away, and
 * never while the repository is idle or waits only on people, a paused session or `mode: semi-auto` included
 * (src/core/scheduling/wake-variable.ts, repo-activity.ts). Events start jobs too: about 1.2
 * per completed task on the sandbox's demo (README, Performance; bench/controller-runs.ts). Worker jobs bill
 * the agent's own minutes in either mode and are not counted here.
 */
import type { InstallMode } from "./setup-files.js";

/**
 * Billed controller jobs per hour while a task is in progress, in review, or ready for a running `mode: auto`
 * session (src/core/scheduling/repo-activity.ts): the 10-minute cron.
 */
const ACTIVE_JOBS_PER_HOUR = 6;
/** Billed controller jobs per completed task started by events (median of bench/controller-runs.ts). */
const EVENT_JOBS_PER_TASK = 1.2;
/** Days in the month these figures are for. */
const DAYS_PER_MONTH = 30;

interface MonthOfWork {
  /** Hours a day during which some task is in progress, in review, or ready for a running `mode: auto` session. */
  activeHoursPerDay: number;
  /** Days a month with such hours. */
  activeDays: number;
  /** Tasks completed in the month. */
  tasks: number;
}

/** Billed minutes a month of the controller in Actions mode for such a month (0 for an idle one). */
export function actionsControllerMinutes(month: MonthOfWork): number {
  return Math.round(
    ACTIVE_JOBS_PER_HOUR * month.activeHoursPerDay * month.activeDays + EVENT_JOBS_PER_TASK * month.tasks,
  );
}

/** What the schedule billed before it read the wake variable: every 10 minutes, idle or not. */
export const ALWAYS_ON_SCHEDULE_MINUTES = ACTIVE_JOBS_PER_HOUR * 24 * DAYS_PER_MONTH;

/** The example month init and docs/INSTALL.md quote: 4 busy hours on 20 days, 40 tasks done. */
export const EXAMPLE_MONTH: MonthOfWork = { activeHoursPerDay: 4, activeDays: 20, tasks: 40 };

/** The lines init prints about the chosen mode's cost. */
export function controllerCostLines(mode: InstallMode): string[] {
  if (mode === "app")
    return [
      "Controller: no GitHub Actions minutes (it runs on your server: `autopilot serve`).",
      "Workers: each worker job bills its agent's minutes, rounded up per job.",
    ];
  return [
    "Controller: 0 billed minutes a month while the repository is idle or waits on people (a paused session,",
    "`mode: semi-auto` waiting for `/autopilot run`); while a task is in progress, in review, or ready for a running",
    `\`mode: auto\` session, ${ACTIVE_JOBS_PER_HOUR} a busy hour, plus about ${EVENT_JOBS_PER_TASK} per completed task (e.g. ${EXAMPLE_MONTH.activeHoursPerDay} busy hours on ${EXAMPLE_MONTH.activeDays} days, ${EXAMPLE_MONTH.tasks} tasks: ${actionsControllerMinutes(EXAMPLE_MONTH)} minutes;`,
    `an always-on 10-minute schedule would bill ${ALWAYS_ON_SCHEDULE_MINUTES.toLocaleString("en-US")}). Needs the App's Variables: write permission.`,
    "Workers: each worker job bills its agent's minutes, rounded up per job.",
  ];
}
