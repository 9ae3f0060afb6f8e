import { describe, expect, it } from "vitest";
import {
  judgeSubIssueLinks,
  linkedBeforeLabel,
  linkRefusalText,
} from "../../../src/core/tasks/sub-issue-links.js";

const LABEL = "2026-11-22T10:00:00Z";
const writers = new Set(["alice"]);
const judge = (links: { issue: number; at: string; by: string | null }[], labeledAt: string | null = LABEL) =>
  judgeSubIssueLinks({
    candidates: [2, 3, 4, 5],
    links,
    labeledAt,
    isWriter: (login) => writers.has(login),
  });

describe("which sub-issues an epic's ready label approves", () => {
  it("approves those linked before the label, whoever linked them", () => {
    const out = judge([
      { issue: 2, at: "2026-11-22T09:00:00Z", by: "tina" },
      { issue: 3, at: "2026-11-22T09:59:59Z", by: null },
      { issue: 4, at: "2026-11-22T08:00:00Z", by: "alice" },
      { issue: 5, at: "2026-11-22T09:30:00Z", by: "mallory" },
    ]);
    expect(out).toEqual({ approved: [2, 3, 4, 5], refused: [] });
  });

  it("approves one linked after the label only when a writer linked it", () => {
    const out = judge([
      { issue: 2, at: "2026-11-22T10:05:00Z", by: "tina" },
      { issue: 3, at: "2026-11-22T10:05:00Z", by: "alice" },
      { issue: 4, at: "2026-11-22T10:05:00Z", by: null },
    ]);
    expect(out.approved).toEqual([3]);
    expect(out.refused).toEqual([{ issue: 2, linkedBy: "tina" }, { issue: 4, linkedBy: null }, { issue: 5 }]);
  });

  it("judges the newest link of a sub-issue unlinked and linked again", () => {
    const out = judge([
      { issue: 2, at: "2026-11-22T09:00:00Z", by: "alice" },
      { issue: 2, at: "2026-11-22T10:05:00Z", by: "tina" },
    ]);
    expect(out.refused).toContainEqual({ issue: 2, linkedBy: "tina" });
  });

  it("does not take a link in the label's own second, or before a label of unknown time, as before it", () => {
    expect(linkedBeforeLabel({ at: LABEL }, LABEL)).toBe(false);
    expect(linkedBeforeLabel({ at: "2026-11-22T09:59:59Z" }, LABEL)).toBe(true);
    expect(linkedBeforeLabel({ at: "2026-11-22T09:00:00Z" }, null)).toBe(false);
    expect(linkedBeforeLabel({ at: "" }, LABEL)).toBe(false);
    const unknownLabel = judge(
      [
        { issue: 2, at: "2026-11-22T09:00:00Z", by: "tina" },
        { issue: 3, at: "2026-11-22T09:00:00Z", by: "alice" },
      ],
      null,
    );
    expect(unknownLabel.approved).toEqual([3]);
  });

  it("says why in the checklist's words", () => {
    const quiet = (login: string) => `\`@${login}\``;
    expect(linkRefusalText({ issue: 2, linkedBy: "tina" }, quiet)).toBe(
      "linked by `@tina`, who has no write access, and not before the epic's label",
    );
    expect(linkRefusalText({ issue: 2 }, quiet)).toMatch(/^when it was linked is unknown/);
    expect(linkRefusalText({ issue: 2, linkedBy: null }, quiet)).toMatch(/deleted account/);
  });
});
