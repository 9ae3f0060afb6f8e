/** Counts in the text Autopilot writes: one noun for exactly one, the plural for the rest (src/core/text/plural.ts). */
import { describe, expect, it } from "vitest";
import { epicSummary, renderEpicProgress } from "../../../src/core/tasks/epics.js";
import { counted, nounFor } from "../../../src/core/text/plural.js";

describe("counted", () => {
  it("says 1 iteration, 0 and 2 iterations, and a fraction of days in the plural", () => {
    expect(counted(1, "iteration")).toBe("1 iteration");
    expect(counted(0, "iteration")).toBe("0 iterations");
    expect(counted(2, "iteration")).toBe("2 iterations");
    expect(counted(0.5, "day")).toBe("0.5 days");
    expect(counted(1, "retry", "retries")).toBe("1 retry");
    expect(counted(12_345, "task")).toBe("12,345 tasks");
    expect(nounFor(1, "task")).toBe("task");
  });
});

describe("counts in rendered text", () => {
  it("an epic of one sub-issue says so in the singular", () => {
    const items = [{ issue: 4, title: "Only child", state: "done" as const }];
    expect(epicSummary(items)).toBe("epic: 1 of 1 sub-issue done");
    const body = renderEpicProgress({
      items,
      by: "alice",
      readyLabel: "ready",
      closeParent: true,
      done: true,
    });
    expect(body).toContain("### Epic progress: 1 of 1 sub-issue done");
    expect(body).not.toMatch(/\b1 sub-issues\b/);
  });
});
