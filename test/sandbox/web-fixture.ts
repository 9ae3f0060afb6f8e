/**
 * A small repository in the sandbox's store for the web view's tests: a tracking issue whose body is the real
 * dashboard (tables, task list, `<details>`, a mermaid graph), an issue with a hostile body, and a pull request
 * with checks, a review and a workflow run.
 */
import { emptyState, renderDashboard, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { RunDetails } from "../../sandbox/emulator/index.js";
import { type GitBackend, SandboxStore } from "../../sandbox/emulator/store.js";

export const REPO = "acme/widgets";
const T0 = new Date("2026-11-23T10:00:00Z");

/** Each block tries a different way to run script; a page that shows it inert leaves `window.pwned` unset. */
export const HOSTILE_BODY = [
  "Please fix this.",
  "<script>window.pwned = 'script'</script>",
  '<img src="x" onerror="window.pwned = \'onerror\'">',
  "[click me](javascript:window.pwned='link')",
  '<a href="javascript:window.pwned=\'anchor\'" id="js-anchor">anchor</a>',
  "<iframe src=\"javascript:parent.pwned='iframe'\"></iframe>",
  "<style>body { display: none }</style>",
  '<div style="background:url(javascript:alert(1))" onmouseover="window.pwned=\'hover\'">hover me</div>',
  '<svg><script>window.pwned = "svg"</script></svg>',
  "<details open ontoggle=\"window.pwned='toggle'\"><summary>s</summary>x</details>",
  "```mermaid\ngraph TD\n  A[\"<img src=x onerror=window.pwned='mermaid'>\"] --> B\n```",
].join("\n\n");

export const SECRET_TOKEN = "ghs_verysecretinstallationtoken123";

export interface WebFixture {
  store: SandboxStore;
  tracking: number;
  hostile: number;
  pull: number;
  runId: number;
  runDetails: (id: number) => RunDetails | undefined;
}

export async function webFixture(): Promise<WebFixture> {
  // A clock a second further on each reading: the timeline's order is the order things happened.
  let now = T0.getTime();
  const store = new SandboxStore({
    now: () => {
      now += 1000;
      return new Date(now);
    },
  });
  store.createRepo({ owner: "acme", name: "widgets" });
  store.addUser("alice", { permission: "write" });
  store.addUser("mallory", { permission: "read" });
  store.createLabel(REPO, { name: "autopilot:ready", color: "0e8a16" });
  store.createLabel(REPO, { name: "critical", color: "b60205" });

  const task1 = store.createIssue(REPO, {
    title: "Format prices",
    author: "alice",
    labels: ["autopilot:ready"],
  });
  const task2 = store.createIssue(REPO, { title: "Cart total", author: "alice", labels: ["critical"] });
  const task3 = store.createIssue(REPO, { title: "Orders migration", author: "alice" });
  store.setLabels(REPO, task1.number, ["autopilot:in-progress"], "autopilot[bot]");
  store.createComment(REPO, task1.number, "Working on it: **iteration 1**", "autopilot[bot]");

  const state = emptyState(T0);
  const body = renderDashboard(
    state,
    {
      repo: { owner: "acme", name: "widgets" },
      dryRun: false,
      maxParallel: 2,
      maxIterations: 4,
      slots: [
        {
          issue: task1.number,
          title: task1.title,
          attempt: 1,
          iteration: 1,
          maxIterations: 4,
          startedAt: T0.toISOString(),
          runId: 7,
          runUrl: null,
          phase: "running",
        },
      ],
      queue: [{ issue: task2.number, title: task2.title, score: 3, why: "critical" }],
      waiting: [],
      review: [],
      needsHuman: [{ issue: task3.number, title: task3.title, reason: "Which currency?", since: null }],
      blocked: [],
      timeouts: [],
      failed: [],
      notInPool: [],
      cycles: [],
      graph: {
        nodes: [
          { issue: task1.number, status: "in-progress" },
          { issue: task2.number, status: "ready" },
        ],
        edges: [[task1.number, task2.number]],
      },
      statistics: {
        runtimeMs: 60_000,
        tasks: {
          total: 2,
          completed: 0,
          failed: 0,
          blocked: 0,
          timeout: 0,
          needsHuman: 0,
          skipped: 0,
          remaining: 2,
          ready: 1,
          inProgress: 1,
          review: 0,
        },
        iterations: { total: 1, average: 1, fastest: null, slowest: null },
        merges: { successful: 0, pending: 0, conflictsResolved: 0 },
        tokens: { input: 10, output: 5, total: 15 },
        costUsd: 0.01,
      },
      progress: { done: 0, total: 2 },
      configProblems: null,
    },
    T0,
  );
  if (!body.includes(TRACKING_MARKER) && !body.includes("autopilot:state"))
    throw new Error("unexpected dashboard");
  const tracking = store.createIssue(REPO, { title: "Autopilot dashboard", body, author: "autopilot[bot]" });
  store.pinIssue(REPO, tracking.number, "autopilot[bot]");

  const hostile = store.createIssue(REPO, {
    title: "Hostile <b>title</b>",
    body: HOSTILE_BODY,
    author: "mallory",
  });
  store.createComment(REPO, hostile.number, "<img src=x onerror=\"window.pwned='comment'\">", "mallory");

  const head = "a".repeat(40);
  await store.createRef(REPO, "refs/heads/autopilot/issue-1", head, "autopilot[bot]");
  const pull = await store.createPull(REPO, {
    title: "Format prices (#1)",
    body: "Closes #1",
    head: "autopilot/issue-1",
    base: "main",
    author: "autopilot[bot]",
  });
  const headSha = store.getPull(REPO, pull.number)!.pull!.head.sha;
  const baseSha = store.getPull(REPO, pull.number)!.pull!.base.sha;
  store.createCheckRun(REPO, {
    name: "ci",
    headSha,
    appSlug: "github-actions",
    status: "completed",
    conclusion: "success",
    output: { title: "node --test passed", summary: "All **12** tests passed." },
    detailsUrl: "javascript:window.pwned='details'",
  });
  store.createCheckRun(REPO, { name: "lint", headSha, status: "completed", conclusion: "failure" });
  store.createStatus(REPO, headSha, { state: "pending", context: "deploy/preview", creator: "alice" });
  store.createReview(REPO, pull.number, { author: "alice", body: "Looks right.", event: "APPROVE" });

  // The diff comes from git; a stand-in answers for this one pull request.
  const backend: Pick<GitBackend, "compare"> = {
    compare: async (_repo, base, headRef) => {
      if (base !== baseSha || headRef !== headSha) throw new Error("unexpected compare");
      return {
        ahead_by: 1,
        files: [
          {
            filename: "src/format.js",
            status: "added",
            additions: 1,
            deletions: 0,
            changes: 1,
            patch:
              "@@ -0,0 +1 @@\n+export const formatPrice = (c) => `$${(c / 100).toFixed(2)}`; // <b>not bold</b>",
          },
        ],
      };
    },
  };
  store.setGitBackend(backend as GitBackend);

  store.addWorkflow(REPO, { path: ".github/workflows/autopilot-worker.yml", name: "Autopilot worker" });
  const run = store.createWorkflowRun(REPO, {
    workflow: "autopilot-worker.yml",
    event: "workflow_dispatch",
    headBranch: "main",
    headSha,
    actor: "autopilot[bot]",
    inputs: { issue: "1", attempt: "1" },
    displayTitle: "autopilot #1 attempt 1",
  });
  const details: RunDetails = {
    log: [
      "##[group]Autopilot worker",
      `::add-mask::${SECRET_TOKEN}`,
      "::debug::internal detail",
      `pushing with ${SECRET_TOKEN}`,
      "##[endgroup]",
      "::error::Quality gate failed",
    ],
    summary: "### Autopilot worker: #1\n\n| Result | complete |\n|---|---|\n| Iterations | 1 |",
    annotations: [{ level: "error", message: "Quality gate failed" }],
    steps: [{ name: "Autopilot worker", status: "completed", conclusion: "success" }],
    reason: null,
    secrets: ["-----BEGIN KEY-----\nprivatekeymaterialline\n-----END KEY-----"],
  };
  return {
    store,
    tracking: tracking.number,
    hostile: hostile.number,
    pull: pull.number,
    runId: run.id,
    runDetails: (id) => (id === run.id ? details : undefined),
  };
}
