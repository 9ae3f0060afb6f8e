/** The controller workflow's cadence (src/core/scheduling/wake-variable.ts) from what a reconcile found. */
import { describe, expect, it } from "vitest";
import { SOON_WITHIN_MS, wakeVariableValue } from "../../../src/core/scheduling/wake-variable.js";

const now = Date.parse("2026-11-28T12:00:00.000Z");

describe("the wake variable's value", () => {
  it("is soon while something moves with time", () => {
    expect(wakeVariableValue({ kind: "active", reason: "task #3 is review" }, now)).toBe("soon");
  });

  it("is idle when nothing waits on time", () => {
    expect(wakeVariableValue({ kind: "idle" }, now)).toBe("idle");
  });

  it("is soon within the hourly cron's period of a wake, later beyond it, with the time", () => {
    expect(wakeVariableValue({ kind: "idle", wakeAtMs: now + SOON_WITHIN_MS }, now)).toBe(
      "soon 2026-11-28T13:00:00.000Z",
    );
    expect(wakeVariableValue({ kind: "idle", wakeAtMs: now + SOON_WITHIN_MS + 1 }, now)).toBe(
      "later 2026-11-28T13:00:00.001Z",
    );
    expect(wakeVariableValue({ kind: "idle", wakeAtMs: now - 1 }, now)).toBe("soon 2026-11-28T11:59:59.999Z");
  });
});
