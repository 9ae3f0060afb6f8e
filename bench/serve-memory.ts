/**
 * The hosted app's resident memory per active repository: the controller server as `autopilot serve` starts it
 * (src/app/hosted/http-server.ts, with the memory bounds read from the environment as serve reads them,
 * src/app/hosted/memory-bounds.ts) runs in a child process against the offline sandbox, which this process holds.
 * Repositories are added in steps (1, 10, 50, 100 by default); each is installed with ten tasks (four parked,
 * six ready but waiting on a parked one) and reconciled by the webhooks their creation delivers, until the
 * deliveries and the reconciles they start have settled (the dashboard created, pinned and written). Then the
 * child collects garbage twice and reports `process.memoryUsage()`: rss and heapUsed, above what it held after
 * reconciling one warm-up repository (whose first reconcile loads the code), in total and per repository, and
 * what its bounded caches hold.
 * Twice: with the default bounds, and with small ones (10 repositories and graphs, 50 cached answers) to show
 * what the bounds hold back.
 *
 *   npx tsx bench/serve-memory.ts [steps, comma-separated]     # about five minutes on two cores
 *
 * The child runs the sources through tsx (about 60 MB over the bundle: bench/serve-footprint.ts measures the
 * bundle itself); the figures per repository do not depend on it. Asserts nothing; prints a markdown table.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { type Sandbox, startSandbox } from "../sandbox/emulator/index.js";
import { isMain, machineLine, printTable } from "./lib.js";

const DEFAULT_STEPS = [1, 10, 50, 100];
const PARKED = 4;
const WAITING = 6;

/** What the child reports after settling. */
interface Measure {
  rss: number;
  heapUsed: number;
  repoMemories: number;
  graphs: number;
  readCacheEntries: number;
  readCacheBytes: number;
  reconciles: number;
}

// ---------------------------------------------------------------------------------------------------------
// The child: the controller server, driven by commands on stdin, answering one JSON line each.

async function runApp(): Promise<void> {
  const { startControllerServer } = await import("../src/app/hosted/http-server.js");
  const { memoryBoundsFromEnv } = await import("../src/app/hosted/memory-bounds.js");
  const { keptRepoMemories } = await import("../src/github/repo-memories.js");
  const { keptGraphs } = await import("../src/core/tasks/graph.js");
  const { conditionalReadCache } = await import("../src/github/transport/conditional-reads.js");
  let reconciles = 0;
  const count = (line: string) => {
    if (line.startsWith("reconciled ")) reconciles++;
  };
  const server = await startControllerServer({
    appId: process.env.APP_ID!,
    privateKey: process.env.PRIVATE_KEY!,
    webhookSecret: process.env.WEBHOOK_SECRET!,
    baseUrl: process.env.GITHUB_API_URL!,
    port: 0,
    tickMs: 0,
    retry: false,
    throttle: false,
    logLevel: "fatal",
    log: { debug: () => {}, info: count, warn: () => {}, error: (m) => console.error(m) },
    memoryBounds: memoryBoundsFromEnv(process.env),
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  const reply = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  reply({ webhookUrl: server.webhookUrl });
  for await (const command of createInterface({ input: process.stdin })) {
    if (command === "settle") {
      // Settled: nothing running, and no reconcile started over the last second.
      let seen = -1;
      while (seen !== reconciles) {
        seen = reconciles;
        await new Promise((r) => setTimeout(r, 1000));
        await server.idle();
      }
      reply({ reconciles });
    } else if (command === "measure") {
      gc?.();
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      const cache = conditionalReadCache();
      reply({
        rss,
        heapUsed,
        repoMemories: keptRepoMemories(),
        graphs: keptGraphs(),
        readCacheEntries: cache.size,
        readCacheBytes: cache.bytes,
        reconciles,
      } satisfies Measure);
    } else if (command === "stop") {
      await server.stop();
      reply({ stopped: true });
      process.exit(0);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// This process: the sandbox, the repositories, the steps.

class AppProcess {
  private readonly lines: AsyncIterator<string>;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    child.stderr.on("data", (chunk: Buffer) => process.stderr.write(`[app] ${chunk}`));
  }

  async next<T>(): Promise<T> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`the app process ended (${this.child.exitCode ?? this.child.signalCode})`);
    return JSON.parse(value as string) as T;
  }

  async ask<T>(command: string): Promise<T> {
    this.child.stdin.write(`${command}\n`);
    return this.next<T>();
  }
}

function addRepository(sandbox: Sandbox, name: string): void {
  const repo = { owner: "acme", name };
  sandbox.store.createRepo(repo);
  sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
  const offRamps = ["autopilot:blocked", "autopilot:needs-human", "autopilot:failed", "autopilot:timeout"];
  const prose = "Some context for the agent, as a person would write it. ".repeat(8);
  for (let i = 0; i < PARKED; i++) {
    sandbox.store.createIssue(repo, {
      title: `Parked task ${i + 1}`,
      body: `Waits for a person.\n\n${prose}`,
      labels: [offRamps[i % offRamps.length]!],
      author: "maintainer",
    });
  }
  for (let i = 0; i < WAITING; i++) {
    sandbox.store.createIssue(repo, {
      title: `Waiting task ${i + 1}`,
      body: `Depends on #1\n\n${prose}`,
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
  }
}

/** Waits until the sandbox has sent every webhook and the app has reconciled what they started, twice over. */
async function settle(sandbox: Sandbox, app: AppProcess): Promise<void> {
  for (;;) {
    while (sandbox.webhooks.deliveries.some((d) => d.status === null && !d.dropped && !d.error))
      await new Promise((r) => setTimeout(r, 200));
    const before = sandbox.webhooks.deliveries.length;
    await app.ask("settle");
    if (sandbox.webhooks.deliveries.length === before) return;
  }
}

interface Row {
  repositories: number;
  measure: Measure;
}

async function measureWith(
  steps: readonly number[],
  bounds: Record<string, string>,
): Promise<{ base: Measure; rows: Row[] }> {
  const sandbox = await startSandbox();
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", import.meta.filename, "--app"], {
    env: {
      ...process.env,
      ...bounds,
      APP_ID: String(sandbox.app.id),
      PRIVATE_KEY: sandbox.app.privateKey,
      WEBHOOK_SECRET: sandbox.app.webhookSecret,
      GITHUB_API_URL: sandbox.url,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const app = new AppProcess(child);
  try {
    sandbox.store.addUser("maintainer", { permission: "write" });
    // What is measured is memory: GitHub's hourly budgets (a hundred repositories created at once spend one
    // installation's) would only turn reconciles into failures here.
    sandbox.setRateLimits({ installation: 1e9, app: 1e9, graphql: 1e9 });
    const { webhookUrl } = await app.next<{ webhookUrl: string }>();
    sandbox.setWebhookTarget(webhookUrl);
    // One repository first, not counted: the first reconcile loads and compiles the code every later one runs.
    addRepository(sandbox, "warm-up");
    await settle(sandbox, app);
    const base = await app.ask<Measure>("measure");
    const rows: Row[] = [];
    let added = 0;
    for (const n of steps) {
      for (; added < n; added++) addRepository(sandbox, `repo-${added + 1}`);
      await settle(sandbox, app);
      rows.push({ repositories: n, measure: await app.ask<Measure>("measure") });
      console.error(`[serve-memory] ${n} repositories settled`);
    }
    await app.ask("stop");
    return { base, rows };
  } finally {
    child.kill("SIGTERM");
    await sandbox.stop();
  }
}

const MB = 1024 * 1024;

/** A difference with its sign: +1.5, −0.6. */
function signed(value: number, digits: number): string {
  return `${value < 0 ? "−" : "+"}${Math.abs(value).toFixed(digits)}`;
}

function rowsOf(label: string, base: Measure, rows: readonly Row[]): string[][] {
  return rows.map(({ repositories: n, measure: m }) => [
    label,
    String(n),
    String(m.reconciles),
    `${(m.rss / MB).toFixed(1)} (${signed((m.rss - base.rss) / MB, 1)})`,
    `${(m.heapUsed / MB).toFixed(1)} (${signed((m.heapUsed - base.heapUsed) / MB, 1)})`,
    signed((m.rss - base.rss) / 1024 / n, 0),
    signed((m.heapUsed - base.heapUsed) / 1024 / n, 0),
    `${m.repoMemories} / ${m.graphs} / ${m.readCacheEntries} (${(m.readCacheBytes / 1024).toFixed(0)} kB)`,
  ]);
}

export async function runServeMemoryBench(steps: readonly number[] = DEFAULT_STEPS): Promise<void> {
  const defaults = await measureWith(steps, {});
  const small = {
    AUTOPILOT_KEPT_REPOSITORIES: "10",
    AUTOPILOT_KEPT_GRAPHS: "10",
    AUTOPILOT_READ_CACHE_ENTRIES: "50",
  };
  const bounded = await measureWith(steps, small);
  printTable(
    "The hosted app's memory per active repository (bench/serve-memory.ts)",
    [
      [
        "bounds",
        "active repositories",
        "reconciles",
        "rss MB (over warm)",
        "heapUsed MB (over warm)",
        "rss KB per repository",
        "heapUsed KB per repository",
        "kept: memories / graphs / cached answers",
      ],
      ...rowsOf("default", defaults.base, defaults.rows),
      ...rowsOf("10 / 10 / 50", bounded.base, bounded.rows),
    ],
    [
      `"Over warm" is over the app after it reconciled one warm-up repository (not counted; its first reconcile loads the code the others run): rss ${(defaults.base.rss / MB).toFixed(1)} MB, heapUsed ${(defaults.base.heapUsed / MB).toFixed(1)} MB (the sources through tsx).`,
      `Each repository: ${PARKED} parked and ${WAITING} waiting tasks with ~500-character bodies, reconciled by the webhooks of its creation until settled (the sandbox's hourly rate limits lifted); measured after two forced garbage collections.`,
      "Small bounds: AUTOPILOT_KEPT_REPOSITORIES=10 AUTOPILOT_KEPT_GRAPHS=10 AUTOPILOT_READ_CACHE_ENTRIES=50.",
      "heapUsed is what the app holds; rss also moves with what the allocator keeps or returns to the system (it can fall as repositories are added), so read the growth per repository from heapUsed.",
      machineLine(),
    ],
  );
}

if (isMain(import.meta.url)) {
  if (process.argv.includes("--app")) await runApp();
  else {
    const arg = process.argv[2];
    const steps = arg
      ? arg
          .split(",")
          .map(Number)
          .filter((n) => n > 0)
      : DEFAULT_STEPS;
    await runServeMemoryBench(steps);
  }
}
