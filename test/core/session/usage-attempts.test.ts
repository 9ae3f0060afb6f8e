/**
 * A task's usage across attempts adds up exactly. Each worker reports the task's totals (it starts from what the
 * previous attempt's result said, src/worker/job/claim.ts), so the controller must count only what is new in each.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import type { DashboardState } from "../../../src/core/dashboard/index.js";
import type { WorkerResult } from "../../../src/core/tasks/worker-result.js";
import { applyEffects, input, issue, minutes, only, readBack, result, world } from "../world.js";

/** What each attempt itself used. */
const attempts = [
  { tokens: { input: 1000, output: 500 }, costUsd: 0.05, iterations: 2 },
  { tokens: { input: 300, output: 100 }, costUsd: 0.02, iterations: 1 },
  { tokens: { input: 200, output: 50 }, costUsd: 0.01, iterations: 3 },
];

describe("usage of a task over three attempts", () => {
  it("is the sum of what each attempt used, not the sum of the workers' running totals", () => {
    let w = world({ issues: [issue(1, { labels: ["autopilot:in-progress"] })] });
    let state: DashboardState | null = null;
    let dispatch = { attempt: 1, dispatchId: "1-1-seed" };
    const carried = { input: 0, output: 0, costUsd: 0 };
    for (const [i, used] of attempts.entries()) {
      carried.input += used.tokens.input;
      carried.output += used.tokens.output;
      carried.costUsd = Math.round((carried.costUsd + used.costUsd) * 1e6) / 1e6;
      const last = i === attempts.length - 1;
      // The worker's result: this job's iterations, the task's totals so far.
      const reported: WorkerResult = result(1, {
        ...dispatch,
        result: last ? "blocked" : "paused",
        reason: last ? "needs a decision" : "session paused",
        prNumber: undefined,
        iterations: used.iterations,
        tokens: { input: carried.input, output: carried.output },
        costUsd: carried.costUsd,
      });
      // The attempt's run has ended.
      const runs = w.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" }));
      w = { ...w, runs, workerResults: [reported] };
      const now = minutes(30 * (i + 1));
      const d = decide({ ...input(w), state, now });
      w = applyEffects(w, d.effects, now);
      state = readBack(d, w);
      if (!last) {
        const next = only(d.effects, "dispatchWorker")[0];
        expect(next, `attempt ${i + 2} dispatched`).toBeDefined();
        dispatch = { attempt: next!.attempt, dispatchId: next!.dispatchId };
      }
    }
    const record = state!.tasks["1"]!;
    expect(record).toMatchObject({
      tokensIn: 1500,
      tokensOut: 650,
      costUsd: 0.08,
      iterations: 6,
    });
  });
});
