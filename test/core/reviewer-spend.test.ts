/**
 * The reviewer's spend on the dashboard: it is in the task's cost (the worker counts it there), and the record
 * keeps its share across the task's jobs, which the finished task's line names.
 */
import { describe, expect, it } from "vitest";
import { newTaskRecord, renderHistoryComment } from "../../src/core/dashboard/index.js";
import { accountResult } from "../../src/core/reconcile/runs/worker-outcomes.js";
import { result, T0 } from "./world.js";

describe("the reviewer's share of a task's spend", () => {
  it("adds up over the task's jobs, inside its total", () => {
    const record = newTaskRecord();
    accountResult(record, result(7, { costUsd: 0.05, review: { runs: 2, tokens: 900, costUsd: 0.01 } }));
    accountResult(record, result(7, { costUsd: 0.08, review: { runs: 1, tokens: 400, costUsd: 0.005 } }));
    accountResult(record, result(7, { costUsd: 0.09 }));
    expect(record.costUsd).toBe(0.09);
    expect(record.reviewUsd).toBe(0.015);
  });

  it("is named on the finished task's line of the dashboard's history", () => {
    const entry = {
      issue: 7,
      title: "Split a bill",
      outcome: "done" as const,
      at: T0.toISOString(),
      iterations: 2,
      tokens: 5000,
      costUsd: 0.09,
      attempts: 1,
      pr: 12,
    };
    const body = renderHistoryComment([
      { ...entry, reviewUsd: 0.015 },
      { ...entry, issue: 8 },
    ]);
    expect(body).toMatch(/#7 Split a bill — merged PR #12 .*\$0\.09 \(the reviewer's share \$0\.0[12]\)/);
    expect(body).not.toMatch(/#8 .*the reviewer's share/);
  });
});
