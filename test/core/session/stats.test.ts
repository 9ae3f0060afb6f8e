import { describe, expect, it } from "vitest";
import { computeStatistics, type TaskRecordLike } from "../../../src/core/session/stats.js";
import { formatDuration } from "../../../src/core/time/duration.js";

const now = new Date("2026-03-01T12:00:00Z");

const tasks: TaskRecordLike[] = [
  {
    issue: 1,
    status: "done",
    iterations: 4,
    merged: true,
    tokens: { input: 1000, output: 200 },
    costUsd: 0.5,
  },
  { issue: 2, status: "done", iterations: 2, merged: true, conflictsResolved: 1, costUsd: 0.25 },
  { issue: 3, status: "done", iterations: 9, merged: false, tokens: { input: 10, output: 5 } },
  { issue: 4, status: "failed", iterations: 25, costUsd: 1.125 },
  { issue: 5, status: "blocked", iterations: 1 },
  { issue: 6, status: "timeout", iterations: 25, startedAt: "2026-03-01T10:30:00Z" },
  { issue: 7, status: "needs-human", iterations: 3 },
  { issue: 8, status: "review", iterations: 5, startedAt: "2026-03-01T09:00:00Z" },
  { issue: 9, status: "in-progress", iterations: 2 },
  { issue: 10, status: "ready" },
  { issue: 11, status: "ready" },
  { issue: 12, status: "skipped" },
];

describe("computeStatistics", () => {
  it("counts tasks by outcome, iterations, merges, tokens and cost", () => {
    const stats = computeStatistics(tasks, now, { sessionStartedAt: "2026-03-01T08:00:00Z" });
    expect(stats.runtimeMs).toBe(4 * 3_600_000);
    expect(stats.tasks).toEqual({
      total: 12,
      completed: 3,
      failed: 1,
      blocked: 1,
      timeout: 1,
      needsHuman: 1,
      skipped: 1,
      remaining: 4,
      ready: 2,
      inProgress: 1,
      review: 1,
    });
    expect(stats.iterations).toEqual({
      total: 4 + 2 + 9 + 25 + 1 + 25 + 3 + 5 + 2,
      average: 5, // over completed tasks: (4 + 2 + 9) / 3
      fastest: { issue: 2, iterations: 2 },
      slowest: { issue: 3, iterations: 9 },
    });
    expect(stats.merges).toEqual({ successful: 2, pending: 1, conflictsResolved: 1 });
    expect(stats.tokens).toEqual({ input: 1010, output: 205, total: 1215 });
    expect(stats.costUsd).toBe(1.875);
  });

  it("measures the runtime from the earliest task start when the session start is unknown, minus pauses", () => {
    expect(computeStatistics(tasks, now).runtimeMs).toBe(3 * 3_600_000);
    expect(computeStatistics(tasks, now.getTime(), { pausedMs: 3_600_000 }).runtimeMs).toBe(2 * 3_600_000);
  });

  it("is all zeros for an empty session", () => {
    const stats = computeStatistics([], now);
    expect(stats.runtimeMs).toBe(0);
    expect(stats.tasks.total).toBe(0);
    expect(stats.iterations).toEqual({ total: 0, average: 0, fastest: null, slowest: null });
    expect(stats.costUsd).toBe(0);
  });

  it("breaks iteration ties by the lower issue number and rounds the average", () => {
    const stats = computeStatistics(
      [
        { issue: 5, status: "done", iterations: 3 },
        { issue: 2, status: "done", iterations: 3 },
        { issue: 9, status: "done", iterations: 4 },
        { issue: 7, status: "done" }, // unknown iterations: not an extreme, not in the average
      ],
      now,
    );
    expect(stats.iterations.fastest).toEqual({ issue: 2, iterations: 3 });
    expect(stats.iterations.slowest).toEqual({ issue: 9, iterations: 4 });
    expect(stats.iterations.average).toBe(3.33);
  });

  it("ignores non-finite numbers and never reports a negative runtime", () => {
    const stats = computeStatistics(
      [
        {
          issue: 1,
          status: "done",
          iterations: 1,
          costUsd: Number.NaN,
          tokens: { input: Number.POSITIVE_INFINITY, output: 1 },
        },
      ],
      now,
      { sessionStartedAt: "2026-03-02T00:00:00Z" },
    );
    expect(stats.costUsd).toBe(0);
    expect(stats.tokens).toEqual({ input: 0, output: 1, total: 1 });
    expect(stats.runtimeMs).toBe(0);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [42_000, "42s"],
    [423_000, "7m 03s"],
    [7_500_000, "2h 05m"],
    [-5, "0s"],
  ])("%i ms → %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
