import { describe, expect, it } from "vitest";
import { primaryLimitLiftsAt, shouldRecoverPrimary } from "../../../src/core/agent/primary-recovery.js";

const now = Date.parse("2026-11-22T01:00:00Z");

describe("primaryLimitLiftsAt", () => {
  it("is the printed reset time, or maxWaitMs after the switch when none was printed", () => {
    expect(primaryLimitLiftsAt(new Date(now + 600_000), now, 300_000)).toBe(now + 600_000);
    expect(primaryLimitLiftsAt(undefined, now, 300_000)).toBe(now + 300_000);
  });

  it("a reset already past lifts now", () => {
    expect(primaryLimitLiftsAt(new Date(now - 1_000), now, 300_000)).toBe(now);
  });
});

describe("shouldRecoverPrimary", () => {
  const on = { recoverPrimary: true, agentIndex: 1, primaryLimitedUntil: now, now };

  it("goes back once the limit has lifted, on a fallback, with the setting on", () => {
    expect(shouldRecoverPrimary(on)).toBe(true);
    expect(shouldRecoverPrimary({ ...on, agentIndex: 2 })).toBe(true);
  });

  it("stays before the limit lifts, on the primary, without a recorded limit, or with the setting off", () => {
    expect(shouldRecoverPrimary({ ...on, now: now - 1 })).toBe(false);
    expect(shouldRecoverPrimary({ ...on, agentIndex: 0 })).toBe(false);
    expect(shouldRecoverPrimary({ ...on, primaryLimitedUntil: null })).toBe(false);
    expect(shouldRecoverPrimary({ ...on, recoverPrimary: false })).toBe(false);
  });
});
