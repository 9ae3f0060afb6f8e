import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { renderWorkerResultMarker, type WorkerResult } from "../../src/core/tasks/worker-result.js";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import {
  checkExpectations,
  type ExpectationContext,
  ExpectationRecorder,
} from "../../sandbox/scenario/checks/expectations.js";
import type { GitRemote } from "../../sandbox/emulator/git/git-remote.js";
import { issueExpectations, runExpectations } from "../../sandbox/scenario/checks/expect-schema.js";
import { loadScenario, parseScenario, ScenarioError } from "../../sandbox/scenario/scenario-file.js";
import { SandboxStore } from "../../sandbox/emulator/store.js";

const REPO = "demo/shop";

function scenarioText(expect: string): string {
  return `name: t
users: [{ login: alice, permission: admin }]
issues:
  - title: One
  - title: Two
expect:
${expect}
`;
}

function result(over: Partial<WorkerResult>): WorkerResult {
  return {
    version: 1,
    issue: 1,
    attempt: 1,
    dispatchId: "1-1-a",
    status: "finished",
    result: "complete",
    iterations: 1,
    maxIterations: 5,
    commits: 1,
    branch: "autopilot/issue-1",
    tokens: { input: 1, output: 1 },
    costUsd: 0,
    humanGate: { fired: false, rules: [] },
    startedAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:10Z",
    ...over,
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("scenario expectations: the format", () => {
  it("every scenario file in scenarios/ and bench/scenarios/ is valid", () => {
    const files = ["scenarios", join("bench", "scenarios")].flatMap((sub) =>
      readdirSync(join(PACKAGE_ROOT, sub))
        .filter((f) => f.endsWith(".yml"))
        .map((f) => join(PACKAGE_ROOT, sub, f)),
    );
    expect(files.length).toBeGreaterThanOrEqual(11);
    expect(files.some((f) => f.endsWith("backlog-30.yml"))).toBe(true);
    for (const file of files) expect(() => loadScenario(file), file).not.toThrow();
  });

  it("takes a bare state or an object per issue, and run-wide checks beside them", () => {
    const s = parseScenario(
      scenarioText(`  1: done
  2: { state: blocked, comments: "no credentials", results: [blocked], iterations: { min: 1 } }
  dashboard: [Blocked]
  session: completed
  noDispatchWhilePaused: true`),
    );
    expect(issueExpectations(s.expect)).toEqual([
      [1, { state: "done" }],
      [2, { state: "blocked", comments: ["no credentials"], results: ["blocked"], iterations: { min: 1 } }],
    ]);
    expect(runExpectations(s.expect)).toEqual({
      dashboard: ["Blocked"],
      session: "completed",
      noDispatchWhilePaused: true,
    });
  });

  it("rejects unknown keys, bad regular expressions and unknown issues", () => {
    const error = (text: string) => {
      try {
        parseScenario(scenarioText(text), "t.yml");
      } catch (e) {
        expect(e).toBeInstanceOf(ScenarioError);
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    expect(error("  dashbord: [x]")).toContain(
      "expect.dashbord: Invalid input: under expect: an issue number with a state or { state",
    );
    expect(error('  1: { state: done, prompts: "(" }')).toContain("not a regular expression");
    expect(error("  7: done")).toContain("there is no issue #7");
    expect(error("  1: { state: done, colour: red }")).toContain('unknown key "colour"');
  });
});

describe("checkExpectations", () => {
  function setup(expectText: string) {
    const scenario = parseScenario(
      `name: t
users: [{ login: alice, permission: admin }]
issues:
  - title: One
  - title: Two
expect:
${expectText}
`,
    );
    const store = new SandboxStore();
    store.addUser("alice", { permission: "admin" });
    store.createRepo({ owner: "demo", name: "shop", defaultBranch: "main" });
    const recorder = new ExpectationRecorder(REPO, scenario);
    store.onEvent((e) => recorder.onEvent(e));
    store.createIssue(REPO, { title: "One", body: "", labels: [], author: "alice" });
    store.createIssue(REPO, { title: "Two", body: "", labels: [], author: "alice" });
    const dir = mkdtempSync(join(tmpdir(), "expect-test-"));
    dirs.push(dir);
    const scriptPath = join(dir, "demo-script.json");
    const files: Record<string, string> = { "src/a.js": "export const a = 1;\n" };
    const remote = {
      listRefs: async () => [
        { ref: "refs/heads/main", sha: "a".repeat(40) },
        { ref: "refs/heads/autopilot/issue-2", sha: "b".repeat(40) },
      ],
      readFile: async (_o: string, _r: string, _ref: string, path: string) => files[path] ?? null,
    } as unknown as GitRemote;
    const ctx: ExpectationContext = {
      scenario,
      store,
      remote,
      repo: { owner: "demo", name: "shop", defaultBranch: "main" },
      branchPrefix: "autopilot/",
      humans: new Set(["alice", "demo"]),
      recorder,
      scriptPath,
      state: () => "done",
      pullFor: () => null,
      iterationsOf: (n) => (n === 1 ? 4 : 0),
      runsOf: (n) => (n === 1 ? 2 : 0),
      tracking: () => store.listIssues(REPO).find((i) => (i.body ?? "").includes(TRACKING_MARKER)) ?? null,
    };
    const agentLog = (issue: number, log: object[]) => {
      mkdirSync(join(dir, "state"), { recursive: true });
      writeFileSync(join(dir, "state", `issue-${issue}.json`), JSON.stringify({ runs: log.length, log }));
    };
    return { store, ctx, agentLog };
  }

  it("passes when what happened matches: results in order, counters, comments, prompts, branch, files, dashboard", async () => {
    const { store, ctx, agentLog } = setup(`  1:
    results: [timeout, complete]
    lastIterations: 1
    iterations: 4
    runs: 2
    comments: ["^Done"]
    prompts: ["the answer"]
    lastPrompt: ["the answer"]
    agents: [fallback]
    agentRuns: 2
    branch: false
    files: { src/a.js: "const a", src/gone.js: null }
  2: { branch: true }
  dashboard: ["autopilot:session completed"]
  dashboardSeen: ["autopilot:session paused"]
  dashboardComments: ["paused after failures"]
  sessions: [running, paused, completed]
  noDispatchWhilePaused: true`);
    const tracking = store.createIssue(REPO, {
      title: "Autopilot dashboard",
      body: `${TRACKING_MARKER}\n<!-- autopilot:session running -->`,
      labels: [],
      author: "autopilot[bot]",
    });
    const progress = store.createComment(
      REPO,
      1,
      `Timed out.\n${renderWorkerResultMarker(result({ result: "timeout", iterations: 3 }))}`,
      "autopilot[bot]",
    );
    store.updateIssue(
      REPO,
      tracking.number,
      { body: `${TRACKING_MARKER}\n<!-- autopilot:session paused -->` },
      "autopilot[bot]",
    );
    store.createComment(REPO, tracking.number, "Autopilot paused after failures (3).", "autopilot[bot]");
    store.updateComment(
      REPO,
      progress.id,
      `Done.\n${renderWorkerResultMarker(result({ dispatchId: "1-2-b", attempt: 2, iterations: 1 }))}`,
      "autopilot[bot]",
    );
    store.updateIssue(
      REPO,
      tracking.number,
      { body: `${TRACKING_MARKER}\n<!-- autopilot:session completed -->` },
      "autopilot[bot]",
    );
    agentLog(1, [
      { at: "x", agent: "primary", prompt: "Do the work" },
      { at: "y", agent: "fallback", prompt: "Do the work. Human: the answer is 42" },
    ]);
    expect(await checkExpectations(ctx)).toEqual([]);
  });

  it("reports each unmet expectation on its own line", async () => {
    const { store, ctx, agentLog } = setup(`  1:
    results: [paused, complete]
    lastIterations: 1
    runs: 3
    comments: ["the question"]
    prompts: ["the answer"]
    branch: true
    files: { src/a.js: "const b", src/missing.js: "x" }
  session: paused
  dashboardSeen: ["Dependency cycles"]`);
    store.createIssue(REPO, {
      title: "Autopilot dashboard",
      body: `${TRACKING_MARKER}\n<!-- autopilot:session running -->`,
      labels: [],
      author: "autopilot[bot]",
    });
    store.createComment(REPO, 1, "the question, asked by a person", "alice");
    store.createComment(REPO, 1, renderWorkerResultMarker(result({ iterations: 3 })), "autopilot[bot]");
    agentLog(1, [{ at: "x", prompt: "no answer here" }]);
    const unmet = await checkExpectations(ctx);
    expect(unmet).toEqual([
      "#1: no comment by Autopilot matching /the question/ (1 comments)",
      "#1: no agent prompt matching /the answer/ (1 runs)",
      "#1: expected worker results paused → complete, got complete",
      "#1: expected 1 iterations in the last worker run, got 3",
      "#1: expected 3 worker runs, got 2",
      "#1: expected the branch autopilot/issue-1 to exist",
      "#1: src/a.js on main does not match /const b/",
      "#1: expected src/missing.js on main; it does not exist",
      "dashboard: never matched /Dependency cycles/ during the run",
      "session: expected paused, got running",
    ]);
  });

  it("counts Autopilot's answers on the dashboard and flags a comment written twice", async () => {
    const { store, ctx } = setup(`  dashboardCommentCount: { pattern: "^> /autopilot status", count: 2 }
  noDuplicateComments: true`);
    const tracking = store.createIssue(REPO, {
      title: "Autopilot dashboard",
      body: `${TRACKING_MARKER}\n<!-- autopilot:session running -->`,
      labels: [],
      author: "autopilot[bot]",
    });
    store.createComment(
      REPO,
      tracking.number,
      "> /autopilot status\n\nrunning <!-- autopilot:reply-1 -->",
      "autopilot[bot]",
    );
    store.createComment(REPO, tracking.number, "/autopilot status", "alice");
    store.createComment(REPO, tracking.number, "/autopilot status", "alice");
    store.createComment(REPO, 1, "Progress <!-- autopilot:progress -->", "autopilot[bot]");
    store.createComment(REPO, 1, "Progress <!-- autopilot:progress -->", "autopilot[bot]");
    expect(await checkExpectations(ctx)).toEqual([
      "dashboard: 1 comment(s) by Autopilot match /^> /autopilot status/, expected 2",
      "comments: #1 has 2 identical comments by Autopilot",
    ]);
  });

  it("checks the hosted controller's dashboard expectations only when the controller is hosted", async () => {
    const { store, ctx } = setup(`  hosted: { dashboardSeen: ["Waiting for GitHub", "Never shown"] }`);
    store.createIssue(REPO, {
      title: "Autopilot dashboard",
      body: `${TRACKING_MARKER}\n> Waiting for GitHub's secondary rate limit`,
      labels: [],
      author: "autopilot[bot]",
    });
    expect(await checkExpectations(ctx)).toEqual(["dashboard: never matched /Never shown/ during the run"]);
    const actions = {
      ...ctx,
      scenario: {
        ...ctx.scenario,
        controllers: { instances: 1, process: false, sharedWork: false, mode: "actions" as const },
      },
    };
    expect(await checkExpectations(actions)).toEqual([]);
  });

  it("flags a dispatch made while the dashboard said paused", async () => {
    const { store, ctx } = setup("  noDispatchWhilePaused: true");
    store.createIssue(REPO, {
      title: "Autopilot dashboard",
      body: `${TRACKING_MARKER}\n<!-- autopilot:session paused -->`,
      labels: [],
      author: "autopilot[bot]",
    });
    ctx.recorder.onEvent({
      name: "workflow_dispatch",
      repo: store.getRepo({ owner: "demo", name: "shop" })!,
      sender: "autopilot[bot]",
      workflow: {} as never,
      ref: "main",
      inputs: { issue: "2" },
    });
    expect(await checkExpectations(ctx)).toEqual(["dispatch: #2 while paused"]);
  });
});

describe("scenario expectations: worker runs at work at once", () => {
  const scenario = parseScenario(scenarioText("  maxConcurrentRuns: 2"));
  const repo = { fullName: REPO } as never;
  const runEvent = (id: number, action: string, dispatchId: string) =>
    ({
      name: "workflow_run",
      repo,
      action,
      run: { id, event: "workflow_dispatch", inputs: { issue: "1", "dispatch-id": dispatchId } },
    }) as never;
  const finished = (dispatchId: string) =>
    ({
      name: "issue_comment",
      repo,
      action: "created",
      comment: { body: renderWorkerResultMarker(result({ dispatchId })) },
    }) as never;

  it("counts a run until its finished result: its last step (the reconcile of its end) is not work on a task", () => {
    const recorder = new ExpectationRecorder(REPO, scenario);
    recorder.onEvent(runEvent(1, "in_progress", "1-1-a"));
    recorder.onEvent(runEvent(2, "in_progress", "2-1-a"));
    recorder.onEvent(finished("1-1-a"));
    recorder.onEvent(runEvent(3, "in_progress", "3-1-a"));
    expect(recorder.maxConcurrentRuns).toBe(2);
    recorder.onEvent(runEvent(1, "completed", "1-1-a"));
    expect(recorder.maxConcurrentRuns).toBe(2);
  });

  it("counts a run still working when a third starts", () => {
    const recorder = new ExpectationRecorder(REPO, scenario);
    recorder.onEvent(runEvent(1, "in_progress", "1-1-a"));
    recorder.onEvent(runEvent(2, "in_progress", "2-1-a"));
    recorder.onEvent(runEvent(3, "in_progress", "3-1-a"));
    expect(recorder.maxConcurrentRuns).toBe(3);
  });
});
