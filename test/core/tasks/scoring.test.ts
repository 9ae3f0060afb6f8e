import { describe, expect, it } from "vitest";
import { buildTaskGraph, type TaskNode } from "../../../src/core/tasks/graph.js";
import { readyTasks } from "../../../src/core/tasks/ready-tasks.js";
import {
  compareScored,
  DEFAULT_SCORING_WEIGHTS,
  formatScoreParts,
  rankTasks,
  type ScoredTask,
  scoreTask,
} from "../../../src/core/tasks/scoring.js";
import type { IssueNode } from "../../../src/core/world.js";

const repo = { owner: "acme", name: "widgets" };

function issue(number: number, over: Partial<IssueNode> = {}): IssueNode {
  return {
    number,
    title: `Issue ${number}`,
    body: "",
    state: "open",
    labels: ["autopilot:ready"],
    createdAt: `2026-01-${String(number).padStart(2, "0")}T00:00:00Z`,
    author: "alice",
    ...over,
  };
}

function nodes(issues: IssueNode[]): Map<number, TaskNode> {
  return buildTaskGraph(issues, repo).nodes;
}

describe("scoreTask: the selection criteria priority table (seeds 001/002)", () => {
  // Each row: the issues around task #1, retries of #1, expected total and parts.
  const rows: {
    row: string;
    issues: IssueNode[];
    retries?: Record<number, number>;
    total: number;
    parts: [string, number][];
  }[] = [
    { row: "no criterion", issues: [issue(1)], total: 0, parts: [] },
    {
      row: "1. unblocks other issues: +10 per open issue waiting on it",
      issues: [
        issue(1),
        issue(4, { body: "Depends on #1" }),
        issue(6, { blockedBy: [1] }),
        issue(7, { body: "Depends on #1", state: "closed" }),
      ],
      total: 20,
      parts: [["unblocks #4, #6", 20]],
    },
    {
      row: "2. critical tag: +50",
      issues: [issue(1, { labels: ["autopilot:ready", "critical"] })],
      total: 50,
      parts: [["critical", 50]],
    },
    {
      row: "3. quick-win tag: +30",
      issues: [issue(1, { labels: ["autopilot:ready", "Quick-Win"] })],
      total: 30,
      parts: [["quick-win", 30]],
    },
    {
      row: "4. more than half of the parent's sub-issues done: +20",
      issues: [
        issue(1, { parent: 9 }),
        issue(9, { subIssues: [1, 2, 3], labels: [] }),
        issue(2, { state: "closed" }),
        issue(3, { state: "closed" }),
      ],
      total: 20,
      parts: [["parent #9 2/3 done", 20]],
    },
    {
      row: "4. exactly half done is not more than half",
      issues: [
        issue(1, { parent: 9 }),
        issue(9, { subIssues: [1, 2], labels: [] }),
        issue(2, { state: "closed" }),
      ],
      total: 0,
      parts: [],
    },
    {
      row: "5. retry penalty: -15 per earlier retry",
      issues: [issue(1)],
      retries: { 1: 2 },
      total: -30,
      parts: [["2 earlier retries", -30]],
    },
    {
      row: "all criteria together",
      issues: [
        issue(1, { labels: ["autopilot:ready", "critical", "quick-win"], parent: 9 }),
        issue(9, { subIssues: [1, 2, 3], labels: [] }),
        issue(2, { state: "closed" }),
        issue(3, { state: "closed" }),
        issue(5, { body: "Depends on #1" }),
      ],
      retries: { 1: 1 },
      total: 10 + 50 + 30 + 20 - 15,
      parts: [
        ["unblocks #5", 10],
        ["critical", 50],
        ["quick-win", 30],
        ["parent #9 2/3 done", 20],
        ["1 earlier retry", -15],
      ],
    },
  ];
  it.each(rows)("$row", ({ issues, retries, total, parts }) => {
    const scored = scoreTask(nodes(issues).get(1)!, retries ? { retries } : {});
    expect(scored.issue).toBe(1);
    expect(scored.total).toBe(total);
    expect(scored.parts.map((p) => [p.reason, p.points])).toEqual(parts);
  });

  it("uses configured weights and label names; zero-weight criteria disappear from the breakdown", () => {
    const node = nodes([
      issue(1, { labels: ["autopilot:ready", "urgent", "critical"] }),
      issue(2, { body: "Depends on #1" }),
    ]).get(1)!;
    const scored = scoreTask(node, {
      weights: { unblocks: 0, critical: 100 },
      labels: { critical: "urgent" },
      retries: { 1: 1 },
    });
    expect(scored.parts.map((p) => [p.criterion, p.points])).toEqual([
      ["critical", 100],
      ["retryPenalty", -DEFAULT_SCORING_WEIGHTS.retryPenalty],
    ]);
    expect(scored.total).toBe(85);
  });

  it("formats the breakdown for the dashboard", () => {
    expect(
      formatScoreParts([
        { criterion: "unblocks", reason: "unblocks #4, #6", points: 20 },
        { criterion: "retryPenalty", reason: "1 earlier retry", points: -15 },
      ]),
    ).toBe("unblocks #4, #6 (+20), 1 earlier retry (−15)");
    expect(formatScoreParts([])).toBe("no bonus");
  });
});

describe("rankTasks", () => {
  const issues = [
    issue(1),
    issue(2, { labels: ["autopilot:ready", "critical"] }),
    issue(3, { labels: ["autopilot:ready", "quick-win"] }),
    issue(4, { body: "Depends on #1" }),
    issue(5, { body: "Depends on #1" }),
    issue(6, { labels: ["autopilot:ready", "quick-win"], createdAt: "2025-12-01T00:00:00Z" }),
  ];
  const graph = buildTaskGraph(issues, repo);
  const ready = readyTasks(graph, { readyLabel: "autopilot:ready" }).ready;

  it("puts the best tasks first; a tie goes to the older issue", () => {
    expect(rankTasks(ready, {}).map((t) => [t.issue, t.total])).toEqual([
      [2, 50],
      [6, 30], // ties with #3 and goes to the older issue
      [3, 30],
      [1, 20], // unblocks #4 and #5
    ]);
  });

  it("never ranks excluded ids", () => {
    expect(rankTasks(ready, { excludeIds: [2, 6] }).map((t) => t.issue)).toEqual([3, 1]);
    expect(rankTasks([], {})).toEqual([]);
  });

  it("lets retries push a task down", () => {
    expect(rankTasks(ready, { retries: { 2: 4 } }).map((t) => t.issue)[0]).toBe(6);
  });

  it("ranks every candidate for the dashboard queue", () => {
    expect(rankTasks(ready, {}).map((t) => t.issue)).toEqual([2, 6, 3, 1]);
  });

  it("breaks ties by createdAt, then by the lower number, unparseable dates last", () => {
    const t = (issue: number, createdAt: string): ScoredTask => ({
      issue,
      title: "",
      createdAt,
      total: 10,
      parts: [],
    });
    const sorted = [
      t(9, "not a date"),
      t(8, "2026-02-01T00:00:00Z"),
      t(7, "2026-01-01T00:00:00Z"),
      t(3, "2026-02-01T00:00:00Z"),
    ].sort(compareScored);
    expect(sorted.map((s) => s.issue)).toEqual([7, 3, 8, 9]);
    expect(compareScored({ ...t(1, "x"), total: 11 }, t(2, "2020-01-01T00:00:00Z"))).toBeLessThan(0);
  });
});
