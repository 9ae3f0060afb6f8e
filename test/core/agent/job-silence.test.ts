import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { jobSilenceLimitMs } from "../../../src/core/agent/job-silence.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { input, issue, minutes, only, result, run, step, world } from "../world.js";

const MINUTE = 60_000;

describe("jobSilenceLimitMs", () => {
  it("with the defaults, outlasts one whole iteration (agent and quality commands) and a limit wait", () => {
    // 30-minute jobs, 20-minute agent runs: an iteration can be silent for 40 minutes plus a 5-minute wait.
    const iteration =
      2 * DEFAULT_CONFIG.iterationTimeoutMinutes * MINUTE + DEFAULT_CONFIG.rateLimit.maxWaitMs;
    expect(jobSilenceLimitMs(DEFAULT_CONFIG)).toBeGreaterThan(iteration);
    expect(jobSilenceLimitMs(DEFAULT_CONFIG)).toBe(50 * MINUTE);
  });

  it("grows with the job's wall clock and the pause between iterations", () => {
    const long = { ...DEFAULT_CONFIG, timeoutMinutes: 120 };
    expect(jobSilenceLimitMs(long)).toBe(120 * MINUTE + 5 * MINUTE + DEFAULT_CONFIG.rateLimit.maxWaitMs);
    const paused = { ...DEFAULT_CONFIG, iterationDelayMs: 10 * MINUTE };
    expect(jobSilenceLimitMs(paused)).toBe(jobSilenceLimitMs(DEFAULT_CONFIG) + 10 * MINUTE);
  });
});

describe("the controller's cancel of a stalled run uses the bound", () => {
  function silentSince(silentMinutes: number) {
    const first = step(world({ issues: [issue(7)] }), null);
    const w = first.world;
    w.runs = [run(90, 7, { status: "in_progress", dispatchId: "7-1-seed" })];
    w.workerResults = [
      result(7, { status: "running", result: undefined, updatedAt: minutes(5).toISOString() }),
    ];
    return decide({ ...input(w), state: first.state, now: minutes(5 + silentMinutes) });
  }

  it("a job silent through one long iteration (40 min, longer than timeoutMinutes 30) is left alone", () => {
    expect(only(silentSince(40).effects, "cancelRun")).toEqual([]);
  });

  it("a job silent for longer than any iteration can take is cancelled", () => {
    expect(only(silentSince(55).effects, "cancelRun")).toEqual([{ type: "cancelRun", runId: 90, issue: 7 }]);
  });
});
