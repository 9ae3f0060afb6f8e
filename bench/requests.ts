/**
 * GitHub requests, counted by the offline sandbox (every request by endpoint template and token kind):
 *
 * (a) per idle reconcile tick: the real reconcile driver (src/app/reconcile-repo.ts → gateway → decide) against a
 *     sandbox repository that holds a tracking issue and nothing to do (parked tasks only);
 * (b) per completed task: the bundled demo scenario (scenarios/demo.yml) and a backlog of 30 independent tasks
 *     worked four at a time (bench/scenarios/backlog-30.yml), each run end to end by the scenario runner (controller
 *     app, worker action, Actions and CI stand-ins), requests / tasks done.
 *
 * "Charged" is what GitHub's primary rate limit counts: a conditional GET answered 304 Not Modified is free
 * (src/github/transport/conditional-reads.ts), and the sandbox's accounting says which requests were.
 *
 *   npx tsx bench/requests.ts [demo time cap in seconds]
 *
 * Prints tables; asserts nothing.
 */
import { reconcile } from "../src/app/reconcile-repo.js";
import { resetCircuits } from "../src/github/transport/circuit.js";
import { join } from "node:path";
import { resetMemories } from "../src/github/gateway.js";
import { createOctokit } from "../src/github/transport/octokit.js";
import { type Sandbox, startSandbox } from "../sandbox/emulator/index.js";
import { PACKAGE_ROOT } from "../src/cli/package-root.js";
import { DEFAULT_SCENARIO, runScenario, type ScenarioReport } from "../sandbox/scenario/run-scenario.js";
import { formatInt, isMain, machineLine, printTable } from "./lib.js";

// ---------------------------------------------------------------------------------------------------------
// (a) Idle ticks

export interface IdleRow {
  setup: string;
  issues: number;
  ticks: number;
  /** Requests per tick by "endpoint (token kind)", averaged over the measured ticks. */
  perTick: Record<string, number>;
  total: number;
  /** Of `total`, what the rate limit counted (a 304 is free). */
  charged: number;
  /** What the driver's own counter (gateway.requests()) says, per tick. */
  gatewayTotal: number;
  writes: number;
  /** GraphQL points per tick, as the sandbox charged them (every query's rateLimit.cost). */
  graphqlPoints: number;
  /** What the driver reports for its snapshot queries (ReconcileResult.graphql), per tick. */
  snapshotPoints: number;
}

const TICKS_TO_SETTLE = 3;
const TICKS_MEASURED = 5;

async function idleRepository(
  sandbox: Sandbox,
  name: string,
  parked: number,
  waiting: number,
): Promise<IdleRow> {
  const repo = { owner: "acme", name };
  sandbox.store.createRepo(repo);
  sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
  const offRamps = ["autopilot:blocked", "autopilot:needs-human", "autopilot:failed", "autopilot:timeout"];
  for (let i = 0; i < parked; i++) {
    sandbox.store.createIssue(repo, {
      title: `Parked task ${i + 1}`,
      body: "Waits for a person.",
      labels: [offRamps[i % offRamps.length]!],
      author: "maintainer",
    });
  }
  // Ready tasks that wait on a blocked one: in the pool, nothing to dispatch.
  for (let i = 0; i < waiting; i++) {
    sandbox.store.createIssue(repo, {
      title: `Waiting task ${i + 1}`,
      body: "Depends on #1",
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
  }
  const octokit = createOctokit({
    auth: sandbox.installationToken(),
    baseUrl: sandbox.url,
    retry: false,
    throttle: false,
  });
  const options = { octokit, repo, botLogin: `${sandbox.app.slug}[bot]`, baseUrl: sandbox.url };
  // The first reconciles create and pin the tracking issue and settle its state.
  for (let i = 0; i < TICKS_TO_SETTLE; i++) await reconcile(options);
  const start = sandbox.requests.records.length;
  let gatewayTotal = 0;
  let writes = 0;
  let snapshotPoints = 0;
  for (let i = 0; i < TICKS_MEASURED; i++) {
    const result = await reconcile(options);
    gatewayTotal += Object.values(result.requests).reduce((a, b) => a + b, 0);
    writes += result.decision.effects.length;
    snapshotPoints += result.graphql?.points ?? 0;
  }
  const perTick: Record<string, number> = {};
  let graphqlPoints = 0;
  let charged = 0;
  for (const r of sandbox.requests.records.slice(start)) {
    graphqlPoints += r.points ?? 0;
    const key = `${r.endpoint} (${r.tokenKind})${r.charged ? "" : ` ${r.status}, free`}`;
    perTick[key] = (perTick[key] ?? 0) + 1;
    if (r.charged) charged++;
  }
  for (const key of Object.keys(perTick)) perTick[key] = perTick[key]! / TICKS_MEASURED;
  return {
    setup:
      waiting > 0
        ? `tracking issue, ${parked} parked + ${waiting} waiting tasks`
        : `tracking issue, ${parked} parked task${parked === 1 ? "" : "s"}`,
    issues: parked + waiting + 1,
    ticks: TICKS_MEASURED,
    perTick,
    total: (sandbox.requests.records.length - start) / TICKS_MEASURED,
    charged: charged / TICKS_MEASURED,
    gatewayTotal: gatewayTotal / TICKS_MEASURED,
    writes,
    graphqlPoints: graphqlPoints / TICKS_MEASURED,
    snapshotPoints: snapshotPoints / TICKS_MEASURED,
  };
}

export async function measureIdleTicks(): Promise<IdleRow[]> {
  resetMemories();
  resetCircuits();
  const sandbox = await startSandbox();
  try {
    sandbox.store.addUser("maintainer", { permission: "write" });
    return [
      await idleRepository(sandbox, "quiet", 1, 0),
      await idleRepository(sandbox, "parked", 120, 30),
      await idleRepository(sandbox, "large", 100, 900),
    ];
  } finally {
    await sandbox.stop();
  }
}

export function idleTable(rows: readonly IdleRow[]): void {
  const endpoints = [...new Set(rows.flatMap((r) => Object.keys(r.perTick)))].sort();
  const fmt = (n: number) => String(Math.round(n * 10) / 10);
  printTable(
    "GitHub requests per idle reconcile tick",
    [
      ["endpoint (token kind)", ...rows.map((r) => r.setup)],
      ...endpoints.map((e) => [e, ...rows.map((r) => fmt(r.perTick[e] ?? 0))]),
      ["total per tick", ...rows.map((r) => fmt(r.total))],
      ["**charged per tick**", ...rows.map((r) => `**${fmt(r.charged)}**`)],
      ["GraphQL points per tick", ...rows.map((r) => fmt(r.graphqlPoints))],
    ],
    [
      `Real driver (src/app/reconcile-repo.ts: snapshot → decide → execute) against the sandbox with an installation token; ${TICKS_TO_SETTLE} reconciles first (they create and pin the tracking issue), then the mean of ${TICKS_MEASURED} measured ones. Effects in the measured ticks: ${rows.map((r) => r.writes).join(" / ")}.`,
      `The gateway's own count agrees: ${rows.map((r) => fmt(r.gatewayTotal)).join(" / ")} per tick. Pool issues come 50 on the first GraphQL page and up to 100 on each later one.`,
      "Per tick: one GraphQL page per 50 pool issues, the worker workflow's runs (asked with the ETag of the last answer: a free 304 while no run changed), and one permission lookup per distinct login that applied the ready label to an open task (cached for five minutes within a process).",
      "The App's periodic tick also lists installations and their repositories (cached, not per tick); webhook-started reconciles cost the same as a tick.",
      `GraphQL points are a budget of their own (5,000 an hour), apart from the requests: the sandbox scores each query as GitHub documents it (sandbox/emulator/graphql/graphql-cost.ts). The first snapshot page costs 9 (its page sizes, whatever they hold); a later pool page asks for what is left, up to 100 issues at 7 points. The snapshot pages alone, as the driver reports them (\`rateLimit.cost\`, logged with every reconcile): ${rows.map((r) => fmt(r.snapshotPoints)).join(" / ")} per tick.`,
    ],
  );
}

// ---------------------------------------------------------------------------------------------------------
// (b) The demo scenario

export interface DemoResult {
  report: ScenarioReport;
  done: number;
  wallMs: number;
}

/** 30 independent tasks, `maxParallel: 4`: the backlog issue 12's goal (≤ 12 charged requests per task) is on. */
export const BACKLOG_SCENARIO = join(PACKAGE_ROOT, "bench", "scenarios", "backlog-30.yml");

export async function measureDemo(
  capSeconds: number | null,
  scenario = DEFAULT_SCENARIO,
): Promise<DemoResult> {
  resetMemories();
  resetCircuits();
  const started = Date.now();
  const report = await runScenario(scenario, {
    handleSignals: false,
    ...(capSeconds !== null ? { signal: AbortSignal.timeout(capSeconds * 1000) } : {}),
  });
  const done = report.issues.filter((i) => i.state === "done").length;
  return { report, done, wallMs: Date.now() - started };
}

export function demoTable(demo: DemoResult, what = "demo scenario"): void {
  const { report, done } = demo;
  const per = (n: number) => (done > 0 ? (n / done).toFixed(1) : "—");
  const endpoints = Object.entries(report.requests.byEndpoint).sort((a, b) => b[1] - a[1]);
  const kinds = Object.entries(report.requests.byTokenKind).sort((a, b) => b[1] - a[1]);
  const states = report.issues.map((i) => `#${i.number} ${i.state}`).join(", ");
  printTable(
    `GitHub requests per completed task, ${what} (${done} of ${report.issues.length} tasks done)`,
    [
      ["endpoint", "requests", "charged", "charged per done task"],
      ...endpoints.map(([e, n]) => {
        const c = report.requests.chargedByEndpoint[e] ?? 0;
        return [e, formatInt(n), formatInt(c), per(c)];
      }),
      [
        "**total (Autopilot)**",
        `**${formatInt(report.requests.total)}**`,
        `**${formatInt(report.requests.charged)}**`,
        `**${per(report.requests.charged)}**`,
      ],
      ...kinds.map(([k, n]) => [`token kind: ${k}`, formatInt(n), "", ""]),
      ["scenario's people (user tokens, not in the total)", formatInt(report.requests.humans), "", ""],
    ],
    [
      `Run: outcome ${report.outcome}${report.outcome === "interrupted" ? " (cut by the bench's time cap, --demo-seconds)" : ""} after ${(report.durationMs / 1000).toFixed(1)} s; ${report.runs.total} worker runs (${
        Object.entries(report.runs.byConclusion)
          .map(([k, n]) => `${n} ${k}`)
          .join(", ") || "none"
      }); final states: ${states}${report.expectations.ok ? "" : ` (expected: ${report.expectations.mismatches.map((m) => `#${m.number} ${m.expected}`).join(", ")})`}.`,
      "Counted by the sandbox for Autopilot's tokens: the controller's reconciles (on webhooks and on the scenario's tick) and the worker jobs' API calls; git clones and pushes over the sandbox's git remote are not API requests. The per-tick polling is shared by all tasks, so per-task figures fall as a run gets denser.",
      `Token kinds are the sandbox's accounting (runner report \`requests.byTokenKind\`). The demo's worker workflow authenticates with an App installation token (actions/create-github-app-token), so the worker's requests count as "installation" together with the controller's${report.requests.byTokenKind.worker === undefined ? '; none used a run\'s GITHUB_TOKEN (kind "worker")' : ""}; "app" is the App JWT (listing installations, minting tokens).`,
      ...(report.validationFailures.length > 0
        ? [
            `${report.validationFailures.length} request(s) the sandbox rejected as invalid against GitHub's description.`,
          ]
        : []),
      ...(report.error ? [`Runner error: ${report.error}`] : []),
    ],
  );
}

export async function runRequestsBench(demoCapSeconds: number | null): Promise<void> {
  idleTable(await measureIdleTicks());
  for (const [scenario, what] of [
    [DEFAULT_SCENARIO, "demo scenario"],
    [BACKLOG_SCENARIO, "30 independent tasks, 4 parallel (bench/scenarios/backlog-30.yml)"],
  ] as const) {
    try {
      demoTable(await measureDemo(scenario === DEFAULT_SCENARIO ? demoCapSeconds : null, scenario), what);
    } catch (error) {
      printTable(
        `GitHub requests per completed task, ${what}`,
        [["status"], ["not measured"]],
        [`The scenario could not run: ${(error as Error).message.split("\n").join(" ")}`],
      );
    }
  }
}

if (isMain(import.meta.url)) {
  console.log(machineLine());
  const cap = process.argv[2] ? Number(process.argv[2]) : null;
  await runRequestsBench(cap);
}
