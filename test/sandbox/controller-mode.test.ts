/** The Actions-only controller in scenarios: how its runs are counted for the report and the benchmark. */
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../sandbox/emulator/actions/actions.js";
import {
  CONTROLLER_WORKFLOW_PATH,
  controllerRunCounts,
  controllerWorkflowYaml,
  scheduleMinuteMs,
  timeLimitSeconds,
  withControllerMode,
  workerRuns,
} from "../../sandbox/scenario/controllers/controller-mode.js";
import { parseScenario } from "../../sandbox/scenario/scenario-file.js";

function run(fields: Partial<RunRecord>): RunRecord {
  return {
    workflowPath: CONTROLLER_WORKFLOW_PATH,
    event: "schedule",
    status: "completed",
    conclusion: "success",
    startedAt: new Date(0),
    ...fields,
  } as RunRecord;
}

describe("controller runs in Actions mode", () => {
  it("counts a run whose job ran apart from a skipped one and one replaced while pending", () => {
    const counts = controllerRunCounts([
      run({ event: "schedule" }),
      run({ event: "workflow_run" }),
      run({ event: "issue_comment", conclusion: "skipped" }),
      run({ event: "issues", conclusion: "cancelled", startedAt: null }),
      run({ event: "schedule", conclusion: "failure" }),
      run({ workflowPath: ".github/workflows/autopilot-worker.yml", event: "workflow_dispatch" }),
    ]);
    expect(counts).toMatchObject({ total: 5, started: 3, skipped: 1, cancelledPending: 1, failed: 1 });
    expect(counts.startedByEvent).toEqual({ schedule: 2, workflow_run: 1 });
    expect(counts.byEvent).toEqual({ schedule: 2, workflow_run: 1, issue_comment: 1, issues: 1 });
  });

  it("bills each job that ran by the minute, rounded up, and nothing for skipped or replaced runs", () => {
    const at = (s: number) => new Date(s * 1000);
    const counts = controllerRunCounts([
      run({ startedAt: at(0), completedAt: at(4) }),
      run({ startedAt: at(0), completedAt: at(60) }),
      run({ startedAt: at(0), completedAt: at(61) }),
      run({ conclusion: "skipped", startedAt: null, completedAt: at(1) }),
      run({ conclusion: "cancelled", startedAt: null, completedAt: at(1) }),
    ]);
    expect(counts.started).toBe(3);
    expect(counts.billedMinutes).toBe(1 + 1 + 2);
  });

  it("leaves the controller's runs out of the worker runs", () => {
    const worker = run({ workflowPath: ".github/workflows/autopilot-worker.yml" });
    expect(workerRuns([run({}), worker])).toEqual([worker]);
  });

  it("installs the template unchanged, and scales its schedule and the time limit", () => {
    expect(controllerWorkflowYaml()).toContain("uses: OWNER/autopilot/controller@v1");
    const scenario = parseScenario(
      "name: t\nissues: [{ title: x }]\nlimits: { tickMs: 1000, maxDurationSeconds: 100 }\n",
    );
    const actions = withControllerMode(scenario, "actions");
    expect(scheduleMinuteMs(actions)).toBe(1000);
    expect(timeLimitSeconds(scenario)).toBe(100);
    expect(timeLimitSeconds(actions)).toBe(150);
  });
});
