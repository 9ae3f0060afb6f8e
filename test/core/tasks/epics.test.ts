import { describe, expect, it } from "vitest";
import {
  EPIC_PROGRESS_MARKER,
  type EpicItem,
  epicDone,
  epicSummary,
  isEpicParent,
  renderEpicProgress,
  subIssuesToPool,
} from "../../../src/core/tasks/epics.js";

describe("which issue is an epic", () => {
  it("is an open issue with sub-issues that carries the ready label", () => {
    expect(isEpicParent({ state: "open", subIssues: [2] }, "ready")).toBe(true);
    expect(isEpicParent({ state: "open", subIssues: [] }, "ready")).toBe(false);
    expect(isEpicParent({ state: "open" }, "ready")).toBe(false);
    expect(isEpicParent({ state: "closed", subIssues: [2] }, "done")).toBe(false);
    // A parent already at work as a task (in progress before epics existed) stays a task.
    expect(isEpicParent({ state: "open", subIssues: [2] }, "in-progress")).toBe(false);
  });
});

describe("the sub-issues an epic's label pools", () => {
  it("are the open ones that are not tasks yet, in the parent's order", () => {
    const children: Record<number, { open: boolean; status: null | "ready" | "skipped"; epic: boolean }> = {
      5: { open: true, status: null, epic: false },
      2: { open: true, status: "ready", epic: false },
      3: { open: false, status: null, epic: false },
      4: { open: true, status: "skipped", epic: false },
      6: { open: true, status: null, epic: true },
      7: { open: true, status: null, epic: false },
    };
    expect(subIssuesToPool([5, 2, 3, 4, 6, 7, 8], (n) => children[n] ?? null)).toEqual([5, 7]);
  });
});

describe("an epic's checklist", () => {
  const items: EpicItem[] = [
    { issue: 2, title: "Cart total", state: "done", pr: 7 },
    { issue: 3, title: "Tax <b>line</b>", state: "blocked", detail: "needs the tax table" },
    { issue: 4, title: "Receipt", state: "not pooled", detail: "added after the epic's label" },
  ];

  it("ticks what is done and says where the rest stand, with their pull requests", () => {
    const body = renderEpicProgress({
      items,
      by: "alice",
      readyLabel: "autopilot:ready",
      closeParent: true,
      done: false,
    });
    expect(body).toContain("### Epic progress: 1 of 3 sub-issues done");
    expect(body).toContain("- [x] #2 Cart total — ✅ done (PR #7)");
    expect(body).toContain("- [ ] #3 Tax &lt;b&gt;line&lt;/b&gt; — ⛔ blocked: needs the tax table");
    expect(body).toContain("- [ ] #4 Receipt — not pooled: added after the epic's label");
    expect(body).toContain("Autopilot closes this issue when every sub-issue is done.");
    expect(body.endsWith(EPIC_PROGRESS_MARKER)).toBe(true);
  });

  it("is done when every sub-issue is closed", () => {
    const closed: EpicItem[] = [
      { issue: 2, title: "a", state: "done" },
      { issue: 3, title: "b", state: "closed" },
    ];
    expect(epicDone(closed)).toBe(true);
    expect(epicDone(items)).toBe(false);
    expect(epicDone([])).toBe(false);
    expect(epicSummary(items)).toBe("epic: 1 of 3 sub-issues done (#3 blocked, #4 not pooled)");
  });
});
