import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { input, issue, minutes, readBack, result, step, world } from "../world.js";

describe("the comment a task's worker result lives in", () => {
  it("is remembered in the dashboard state, so the snapshot can fetch it once later comments bury it", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    const running = {
      ...first.world,
      runs: first.world.runs.map((r) => ({ ...r, status: "in_progress" as const })),
      workerResults: [result(1, { status: "running", result: undefined, dispatchId: "1-1-seed" })],
      resultComments: { 1: "IC_result1" },
    };
    const d = decide({ ...input(running), state: first.state, now: minutes(3) });
    expect(d.state.tasks["1"]?.resultComment).toBe("IC_result1");
    expect(readBack(d, running)?.tasks["1"]?.resultComment).toBe("IC_result1");
  });
});
