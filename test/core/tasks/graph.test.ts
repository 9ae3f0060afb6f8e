import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crossRepoKey, formatRef, parseDependencies } from "../../../src/core/tasks/dependency-references.js";
import { buildTaskGraph, forgetGraphMemos, keepGraphsBetweenBuilds } from "../../../src/core/tasks/graph.js";
import { formatCycle, readyTasks } from "../../../src/core/tasks/ready-tasks.js";
import type { IssueNode } from "../../../src/core/world.js";

const repo = { owner: "acme", name: "widgets" };

function issue(number: number, over: Partial<IssueNode> = {}): IssueNode {
  return {
    number,
    title: `Issue ${number}`,
    body: "",
    state: "open",
    labels: ["autopilot:ready"],
    createdAt: "2026-01-01T00:00:00Z",
    author: "alice",
    ...over,
  };
}

const readyOptions = {
  readyLabel: "autopilot:ready",
  excludeLabel: "autopilot:exclude",
  stateLabels: [
    "autopilot:in-progress",
    "autopilot:review",
    "autopilot:blocked",
    "autopilot:needs-human",
    "autopilot:timeout",
    "autopilot:failed",
  ],
};

describe("parseDependencies", () => {
  const cases: [string, string, number[], string[]?][] = [
    ["a plain line", "Depends on #3", [3]],
    ["any case", "DEPENDS ON #3\nblocked BY #4", [3, 4]],
    ["blocked by", "Blocked by #7", [7]],
    ["a hyphenated keyword", "blocked-by #2", [2]],
    ["a comma and 'and' list", "Depends on #1, #2 and #3.", [1, 2, 3]],
    ["an Oxford comma list", "Depends on #1, #2, and #3", [1, 2, 3]],
    ["an ampersand and spaces", "Depends on #1 & #2 #3", [1, 2, 3]],
    ["a colon after the keyword", "Depends on: #4", [4]],
    ["bold markers", "**Depends on:** #4, #5", [4, 5]],
    ["the word issue", "Blocked by issue #12", [12]],
    ["mid-sentence", "This change depends on #8 being merged first.", [8]],
    ["prose after the list stops it", "Depends on #4 for the API, see #5", [4]],
    ["several lines, deduplicated", "Depends on #2\nBlocked by #2 and #1", [2, 1]],
    ["a cross-repo reference", "Depends on other/lib#5", [], ["other/lib#5"]],
    ["the same repo written in full (any case)", "Depends on Acme/Widgets#5", [5]],
    ["a mixed list", "Depends on #1, other/lib#2 and #3", [1, 3], ["other/lib#2"]],
    [
      "issue URLs",
      "Depends on https://github.com/acme/widgets/issues/9 and https://github.com/x/y/pull/2",
      [9],
      ["x/y#2"],
    ],
    ["a task-list item with the keyword", "- [ ] depends on #4\n- [x] Blocked by #6", [4, 6]],
    [
      "task lists under a heading",
      "## Depends on\n\n- [ ] #4\n- [x] #5 (the parser)\n* other/lib#2\n1. #6\n\nOther text\n- [ ] #9",
      [4, 5, 6],
      ["other/lib#2"],
    ],
    ["task lists under a bold label", "**Blocked by:**\n- [ ] #10\n- [ ] #11, #12", [10, 11, 12]],
    ["task lists under a Dependencies heading", "### Dependencies\n- [ ] #3", [3]],
    ["a section ends at the next heading", "## Depends on\n- #3\n## Tasks\n- [ ] #4", [3]],
    ["task lists without a heading do not count", "## Tasks\n- [ ] #4\n- [ ] #5", []],
    ["a fenced code block is ignored", "```\nDepends on #1\n```\nDepends on #2", [2]],
    [
      "a tilde fence and a longer fence",
      "~~~md\nDepends on #1\n~~~\n````\n```\nDepends on #3\n````\nBlocked by #4",
      [4],
    ],
    ["an unclosed fence hides the rest", "```\nDepends on #1", []],
    ["quoted lines are ignored", "> Depends on #1\n>Blocked by #2\nDepends on #3", [3]],
    ["inline code is ignored", "Write `Depends on #1` to declare one. Depends on #2", [2]],
    ["HTML comments are ignored", "<!-- Depends on #1\nBlocked by #2 -->\nDepends on #3", [3]],
    ["other keywords do not count", "Fixes #3, closes #4, related to #5, see #6", []],
    ["#0 and glued text do not count", "Depends on #0\nDepends on #3abc", []],
    ["an empty body", "", []],
  ];
  it.each(cases)("reads %s", (_name, body, numbers, cross = []) => {
    const parsed = parseDependencies(body, repo);
    expect(parsed.numbers).toEqual(numbers);
    expect(parsed.crossRepo.map(crossRepoKey)).toEqual(cross);
  });

  it("keeps the owner and name of cross-repo references as written", () => {
    expect(parseDependencies("Depends on Other-Org/lib.js#12", repo).crossRepo).toEqual([
      { owner: "Other-Org", name: "lib.js", number: 12 },
    ]);
  });

  it("accepts null and CRLF bodies", () => {
    expect(parseDependencies(null, repo).numbers).toEqual([]);
    expect(parseDependencies("## Depends on\r\n- [ ] #4\r\nDepends on #5\r\n", repo).numbers).toEqual([4, 5]);
  });
});

describe("buildTaskGraph", () => {
  it("combines body lines, native blocked-by relations and sub-issues", () => {
    const graph = buildTaskGraph(
      [
        issue(1, { body: "Depends on #2" }),
        issue(2, { state: "closed" }),
        issue(3, { blockedBy: [1] }),
        issue(4, { subIssues: [5, 6] }),
        issue(5),
        issue(6, { parent: 4, state: "closed" }),
        issue(7, { parent: 4 }),
      ],
      repo,
    );
    const node = (n: number) => graph.nodes.get(n)!;
    expect(node(1).dependsOn).toEqual([2]);
    expect(node(1).unresolved).toEqual([]);
    expect(node(1).dependents).toEqual([3]);
    expect(node(1).unblocks).toEqual([3]);
    expect(node(3).dependsOn).toEqual([1]);
    expect(node(3).unresolved).toEqual([1]);
    // The parent waits on its sub-issues (from either side of the relation); sub-issues do not wait on it.
    expect(node(4).subIssues).toEqual([5, 6, 7]);
    expect(node(4).dependsOn).toEqual([5, 6, 7]);
    expect(node(4).unresolved).toEqual([5, 7]);
    expect(node(5).dependsOn).toEqual([]);
    expect(node(5).parent).toBe(4);
    expect(node(5).dependents).toEqual([4]);
    expect(node(5).unblocks).toEqual([]); // a parent epic is not "unblocked" work
    expect(node(5).parentProgress).toEqual({ parent: 4, done: 1, total: 3 });
    expect(graph.edges).toContainEqual({ from: 3, to: 1, source: "blockedBy" });
    expect(graph.edges).toContainEqual({ from: 4, to: 7, source: "subIssue" });
    expect(graph.cycles).toEqual([]);
  });

  it("counts only open dependents as unblocked", () => {
    const graph = buildTaskGraph(
      [issue(1), issue(2, { body: "Depends on #1" }), issue(3, { body: "Depends on #1", state: "closed" })],
      repo,
    );
    expect(graph.nodes.get(1)!.dependents).toEqual([2, 3]);
    expect(graph.nodes.get(1)!.unblocks).toEqual([2]);
  });

  it("treats dependencies unknown to the snapshot as unresolved, and pull requests by their state", () => {
    const graph = buildTaskGraph(
      [
        issue(1, { body: "Depends on #99, #20, #21" }),
        issue(20, { isPullRequest: true, state: "closed" }),
        issue(21, { isPullRequest: true, state: "open" }),
      ],
      repo,
    );
    expect(graph.nodes.has(20)).toBe(false);
    expect(graph.nodes.get(1)!.unresolved).toEqual([21, 99]);
  });

  it("treats cross-repo dependencies as unresolved unless known closed", () => {
    const issues = [issue(1, { body: "Depends on other/lib#5 and other/lib#6" })];
    expect(buildTaskGraph(issues, repo).nodes.get(1)!.unresolvedCrossRepo).toHaveLength(2);
    const known = buildTaskGraph(issues, repo, { crossRepoClosed: ["Other/Lib#5"] });
    expect(known.nodes.get(1)!.unresolvedCrossRepo).toEqual([{ owner: "other", name: "lib", number: 6 }]);
  });

  describe("cycles", () => {
    it("finds a two-issue cycle and reports the path from each member", () => {
      const graph = buildTaskGraph(
        [issue(2, { body: "Depends on #4" }), issue(4, { body: "Blocked by #2" })],
        repo,
      );
      expect(graph.cycles).toEqual([[2, 4]]);
      expect(graph.nodes.get(2)!.cycle).toEqual([2, 4, 2]);
      expect(graph.nodes.get(4)!.cycle).toEqual([4, 2, 4]);
    });

    it("finds self-loops", () => {
      const graph = buildTaskGraph([issue(5, { body: "Depends on #5" }), issue(6)], repo);
      expect(graph.cycles).toEqual([[5]]);
      expect(graph.nodes.get(5)!.cycle).toEqual([5, 5]);
      expect(graph.nodes.get(6)!.cycle).toBeNull();
    });

    it("finds longer cycles across sources and lists every member", () => {
      const graph = buildTaskGraph(
        [
          issue(1, { body: "Depends on #2" }),
          issue(2, { blockedBy: [3] }),
          issue(3, { subIssues: [1] }), // parent 3 waits on sub-issue 1
          issue(7, { body: "Depends on #1" }), // waits on the cycle but is not in it
        ],
        repo,
      );
      expect(graph.cycles).toEqual([[1, 2, 3]]);
      expect(graph.nodes.get(1)!.cycle).toEqual([1, 2, 3, 1]);
      expect(graph.nodes.get(7)!.cycle).toBeNull();
    });

    it("reports separate cycles separately and one component with two loops once", () => {
      const graph = buildTaskGraph(
        [
          issue(1, { body: "Depends on #2" }),
          issue(2, { body: "Depends on #1, #3" }),
          issue(3, { body: "Depends on #2" }),
          issue(10, { body: "Depends on #11" }),
          issue(11, { body: "Depends on #10" }),
        ],
        repo,
      );
      expect(graph.cycles).toEqual([
        [1, 2, 3],
        [10, 11],
      ]);
      expect(graph.nodes.get(3)!.cycle).toEqual([3, 2, 3]);
    });

    it("ignores a loop through a closed issue (a closed dependency is satisfied)", () => {
      const graph = buildTaskGraph(
        [issue(2, { body: "Depends on #4" }), issue(4, { body: "Depends on #2", state: "closed" })],
        repo,
      );
      expect(graph.cycles).toEqual([]);
      expect(graph.nodes.get(2)!.unresolved).toEqual([]);
    });

    it("handles long chains without exhausting the stack", () => {
      const n = 20_000;
      const issues = Array.from({ length: n }, (_, i) => issue(i + 1, { body: `Depends on #${i + 2}` }));
      issues[n - 1] = issue(n, { body: "Depends on #1" });
      const graph = buildTaskGraph(issues, repo);
      expect(graph.cycles).toHaveLength(1);
      expect(graph.cycles[0]).toHaveLength(n);
      const waiting = readyTasks(graph, readyOptions).waiting;
      expect(waiting).toHaveLength(n);
      expect(waiting[0]!.reason).toBe(`in cycle #1 → #2 → #3 → … → #${n} → #1 (${n} issues)`);
    });
  });
});

describe("readyTasks", () => {
  it("is open + ready label + not excluded + no other state + every dependency closed, with reasons", () => {
    const graph = buildTaskGraph(
      [
        issue(1),
        issue(2, { body: "Depends on #1" }),
        issue(3, { body: "Depends on #1, #9 and other/lib#4" }),
        issue(4, { labels: ["autopilot:ready", "autopilot:exclude"] }),
        issue(5, { labels: ["autopilot:ready", "autopilot:in-progress"] }),
        issue(6, { body: "Depends on #7" }),
        issue(7, { body: "Depends on #6" }),
        issue(8, { labels: [] }),
        issue(9, { state: "closed" }),
        issue(10, { subIssues: [11] }),
        issue(11, { labels: [] }),
        issue(12, { body: "Depends on #9" }),
        issue(13, { state: "closed" }),
        issue(14, { labels: ["AUTOPILOT:READY"] }),
      ],
      repo,
    );
    const result = readyTasks(graph, readyOptions);
    expect(result.ready.map((n) => n.number)).toEqual([1, 12, 14]);
    expect(result.waiting.map((w) => [w.number, w.code, w.reason])).toEqual([
      [2, "dependencies", "waiting on #1"],
      [3, "dependencies", "waiting on #1, other/lib#4"],
      [4, "excluded", "excluded (autopilot:exclude)"],
      [5, "other_state", "also labeled autopilot:in-progress"],
      [6, "cycle", "in cycle #6 → #7 → #6"],
      [7, "cycle", "in cycle #7 → #6 → #7"],
      [10, "dependencies", "waiting on #11"],
    ]);
    expect(result.waiting[1]!.waitingOn).toEqual([1, { owner: "other", name: "lib", number: 4 }]);
  });

  it("works without exclude or state labels", () => {
    const graph = buildTaskGraph([issue(1, { labels: ["go", "autopilot:exclude"] })], repo);
    expect(readyTasks(graph, { readyLabel: "go" }).ready.map((n) => n.number)).toEqual([1]);
  });
});

describe("formatting", () => {
  it("formats references and cycles for people", () => {
    expect(formatRef(7)).toBe("#7");
    expect(formatRef({ owner: "o", name: "r", number: 7 })).toBe("o/r#7");
    expect(formatCycle([2, 4, 2])).toBe("#2 → #4 → #2");
    expect(formatCycle([1, 2, 3, 4, 5, 6, 7, 8, 9, 1])).toBe("#1 → #2 → #3 → … → #9 → #1 (9 issues)");
  });
});

describe("buildTaskGraph between reconciles (the memo of the last graph)", () => {
  beforeAll(() => keepGraphsBetweenBuilds(true));
  afterAll(() => keepGraphsBetweenBuilds(false));
  const world = (): IssueNode[] => [
    issue(1, { body: "Depends on #2 and acme/other#9" }),
    issue(2, { body: "Blocked by #3" }),
    issue(3, { blockedBy: [4] }),
    issue(4, { subIssues: [5, 6] }),
    issue(5, { parent: 4 }),
    issue(6, { parent: 4, state: "closed" }),
    issue(7, { body: "Depends on #8" }),
    issue(8, { body: "Depends on #7" }),
    issue(9, { isPullRequest: true, state: "closed" }),
    issue(10, { body: "Depends on #9" }),
  ];
  // The graph as a plain value (node.issue included), to compare a memoized build with a cold one.
  const plain = (g: ReturnType<typeof buildTaskGraph>) => ({
    edges: g.edges,
    cycles: g.cycles,
    nodes: [...g.nodes.values()],
  });
  const cold = (issues: IssueNode[], options = {}) => {
    forgetGraphMemos();
    return plain(buildTaskGraph(issues, repo, options));
  };
  const changes: [string, (issues: IssueNode[]) => void][] = [
    ["nothing (a fresh copy)", () => {}],
    [
      "a label",
      (i) => {
        i[0]!.labels = ["autopilot:review"];
      },
    ],
    [
      "a title",
      (i) => {
        i[0]!.title = "Renamed";
      },
    ],
    [
      "a body",
      (i) => {
        i[1]!.body = "Depends on #7";
      },
    ],
    [
      "a body to none",
      (i) => {
        i[0]!.body = null as unknown as string;
      },
    ],
    [
      "a state",
      (i) => {
        i[2]!.state = "closed";
      },
    ],
    [
      "a pull request's state",
      (i) => {
        i[8]!.state = "open";
      },
    ],
    [
      "a blocked-by relation",
      (i) => {
        i[6]!.blockedBy = [1];
      },
    ],
    [
      "a sub-issue",
      (i) => {
        i[3]!.subIssues = [5];
      },
    ],
    [
      "a parent",
      (i) => {
        i[4]!.parent = 1;
      },
    ],
    ["the order", (i) => void i.reverse()],
    ["an issue more", (i) => void i.push(issue(11, { body: "Depends on #1" }))],
    ["an issue less", (i) => void i.splice(7, 1)],
  ];
  for (const [what, change] of changes) {
    it(`builds what a cold build would after a change of ${what}`, () => {
      forgetGraphMemos();
      buildTaskGraph(world(), repo); // the previous reconcile's graph
      const next = structuredClone(world());
      change(next);
      const warm = plain(buildTaskGraph(next, repo));
      expect(warm).toEqual(cold(structuredClone(next)));
      // Each node carries this snapshot's issue, not the previous one's.
      for (const node of warm.nodes) expect(next).toContain(node.issue);
    });
  }
  it("reuses the last graph when only labels and titles changed", () => {
    forgetGraphMemos();
    const before = buildTaskGraph(world(), repo);
    const next = structuredClone(world());
    next[0]!.labels = [];
    next[1]!.title = "Renamed";
    const after = buildTaskGraph(next, repo);
    expect(after.edges).toBe(before.edges);
    expect(after.nodes.get(1)!.issue).toBe(next[0]);
    expect(after.nodes.get(2)!.issue.title).toBe("Renamed");
  });
  it("follows the cross-repository issues known to be closed", () => {
    forgetGraphMemos();
    buildTaskGraph(world(), repo);
    const options = { crossRepoClosed: ["acme/other#9"] };
    expect(plain(buildTaskGraph(world(), repo, options))).toEqual(cold(world(), options));
  });
  it("keeps one memo per repository", () => {
    forgetGraphMemos();
    const other = { owner: "acme", name: "gadgets" };
    buildTaskGraph(world(), repo);
    const elsewhere = world();
    elsewhere[0]!.body = "Depends on acme/widgets#2";
    const warm = plain(buildTaskGraph(elsewhere, other));
    forgetGraphMemos();
    expect(warm).toEqual(plain(buildTaskGraph(elsewhere, other)));
  });
});
