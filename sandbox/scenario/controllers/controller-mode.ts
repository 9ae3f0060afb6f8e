/**
 * The controller's two modes in a scenario (`controllers.mode`): `hosted`, the controller app receiving
 * webhooks and ticking; `actions`, the product's controller workflow (templates/workflows/autopilot-controller.yml,
 * verbatim) installed in the scenario repository and run by the Actions stand-in on the events it lists, on
 * its schedule and under its concurrency group, each run executing the controller action's bundle
 * (controller/action.yml → dist/controller/index.js) once.
 *
 * Time: one minute of the workflow's cron lasts one controller tick (`limits.tickMs`) unless
 * `limits.scheduleMinuteMs` says otherwise, so the template's `*\/10` runs every ten ticks. (Scaled as
 * strictly as the hosted tick — 300 s in `tickMs` — it would run every two ticks, each run a node process,
 * while a sandbox worker run takes far longer than its scaled share: more runs per task than GitHub bills.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunRecord } from "../../emulator/actions/actions.js";
import { PACKAGE_ROOT } from "../../../src/cli/package-root.js";
import type { Scenario } from "../scenario-file.js";

type ControllerMode = "hosted" | "actions";

/** Where the controller workflow lives in the scenario repository (the name INSTALL.md tells users to use). */
export const CONTROLLER_WORKFLOW_PATH = ".github/workflows/autopilot-controller.yml";

const CONTROLLER_TEMPLATE = join(PACKAGE_ROOT, "templates", "workflows", "autopilot-controller.yml");

export function controllerMode(scenario: Scenario): ControllerMode {
  return scenario.controllers?.mode ?? "hosted";
}

/** The scenario with its controller mode replaced (the `--controller` option of `autopilot sandbox`). */
export function withControllerMode(scenario: Scenario, mode: ControllerMode): Scenario {
  return {
    ...scenario,
    controllers: { instances: 1, process: false, sharedWork: false, ...scenario.controllers, mode },
  };
}

/** How long one minute of a `schedule` cron lasts in this scenario. */
export function scheduleMinuteMs(scenario: Scenario): number {
  return scenario.limits.scheduleMinuteMs ?? scenario.limits.tickMs;
}

/**
 * A scenario's time limit: `limits.maxDurationSeconds`, half as long again in Actions mode, where each
 * controller run is a job of its own (a process, a token) and what no event announces waits for the schedule.
 */
export function timeLimitSeconds(scenario: Scenario): number {
  const limit = scenario.limits.maxDurationSeconds;
  return controllerMode(scenario) === "actions" ? Math.round(limit * 1.5) : limit;
}

/** The controller workflow as a user installs it: the template, unchanged. */
export function controllerWorkflowYaml(): string {
  return readFileSync(CONTROLLER_TEMPLATE, "utf8");
}

/** Whether a run is one of the controller workflow's (not a worker run). */
export function isControllerRun(run: Pick<RunRecord, "workflowPath">): boolean {
  return run.workflowPath === CONTROLLER_WORKFLOW_PATH;
}

/** The runs that are not the controller workflow's: worker runs (and any other workflow of the repository). */
export function workerRuns<T extends Pick<RunRecord, "workflowPath">>(runs: readonly T[]): T[] {
  return runs.filter((r) => !isControllerRun(r));
}

/** What the controller workflow's runs came to, for the report. */
export interface ControllerRunCounts {
  /** Every run GitHub would list (a skipped or cancelled run is listed too). */
  total: number;
  /** Runs whose reconcile job ran (billed): success, failure, or killed/cancelled while running. */
  started: number;
  /** Runs whose job its `if:` skipped (free). */
  skipped: number;
  /** Runs cancelled while pending (a newer run took their place in the concurrency group). */
  cancelledPending: number;
  failed: number;
  /**
   * Minutes GitHub bills for the jobs that ran: each job's time rounded up to a whole minute ("GitHub rounds the
   * minutes and partial minutes each job uses up to the nearest whole minute",
   * https://docs.github.com/en/billing/concepts/product-billing/github-actions). Measured on the sandbox's own
   * clock: a controller job here takes about as long as on a hosted runner (seconds), so each bills a minute.
   */
  billedMinutes: number;
  /** Runs by the event that started them (`schedule`, `issues`, `workflow_run`, …). */
  byEvent: Record<string, number>;
  /** Runs whose job ran, by event. */
  startedByEvent: Record<string, number>;
}

export function controllerRunCounts(runs: readonly RunRecord[]): ControllerRunCounts {
  const counts: ControllerRunCounts = {
    total: 0,
    started: 0,
    skipped: 0,
    cancelledPending: 0,
    failed: 0,
    billedMinutes: 0,
    byEvent: {},
    startedByEvent: {},
  };
  for (const run of runs.filter(isControllerRun)) {
    counts.total += 1;
    counts.byEvent[run.event] = (counts.byEvent[run.event] ?? 0) + 1;
    if (run.conclusion === "skipped") counts.skipped += 1;
    else if (run.startedAt === null && run.status === "completed") counts.cancelledPending += 1;
    else if (run.startedAt !== null) {
      counts.started += 1;
      counts.startedByEvent[run.event] = (counts.startedByEvent[run.event] ?? 0) + 1;
      if (run.conclusion === "failure" || run.conclusion === "timed_out") counts.failed += 1;
      const ranMs = (run.completedAt ?? new Date()).getTime() - run.startedAt.getTime();
      counts.billedMinutes += Math.max(1, Math.ceil(ranMs / 60_000));
    }
  }
  return counts;
}
