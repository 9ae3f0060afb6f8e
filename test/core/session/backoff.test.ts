import { describe, expect, it } from "vitest";
import { backoffSchedule, exponentialBackoff } from "../../../src/core/time/backoff.js";

describe("exponentialBackoff", () => {
  it.each([
    // [base, factor, attempt, cap, expected]
    ["rate limits: 5s × 3^0", 5_000, 3, 0, 300_000, 5_000],
    ["rate limits: 5s × 3^1", 5_000, 3, 1, 300_000, 15_000],
    ["rate limits: 5s × 3^2", 5_000, 3, 2, 300_000, 45_000],
    ["rate limits: capped at maxWaitMs", 5_000, 3, 5, 300_000, 300_000],
    ["retries: 60s × 2^1", 60_000, 2, 1, 3_600_000, 120_000],
    ["retries: 60s × 2^5", 60_000, 2, 5, 3_600_000, 1_920_000],
    ["retries: capped at retryMaxMs", 60_000, 2, 6, 3_600_000, 3_600_000],
    ["exactly at the cap", 1_000, 2, 3, 8_000, 8_000],
    ["huge attempts do not overflow", 1_000, 2, 5_000, 60_000, 60_000],
    [
      "an infinite cap is clamped to a safe integer",
      1_000,
      10,
      400,
      Number.POSITIVE_INFINITY,
      Number.MAX_SAFE_INTEGER,
    ],
    ["negative attempts count as 0", 1_000, 2, -3, 60_000, 1_000],
    ["fractional attempts are floored", 1_000, 2, 2.7, 60_000, 4_000],
    ["NaN attempt counts as 0", 1_000, 2, Number.NaN, 60_000, 1_000],
    ["factor 1 is a constant delay", 2_000, 1, 9, 60_000, 2_000],
    ["a zero cap means no wait", 1_000, 2, 3, 0, 0],
    ["a negative base means no wait", -1_000, 2, 3, 60_000, 0],
    ["a negative cap means no wait", 1_000, 2, 3, -5, 0],
  ])("%s", (_name, base, factor, attempt, cap, expected) => {
    expect(exponentialBackoff(base, factor, attempt, cap)).toBe(expected);
  });

  it("lists a schedule", () => {
    expect(backoffSchedule(5_000, 3, 4, 100_000)).toEqual([5_000, 15_000, 45_000, 100_000]);
    expect(backoffSchedule(5_000, 3, 0, 100_000)).toEqual([]);
  });
});
