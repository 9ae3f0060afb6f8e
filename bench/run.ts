/**
 * Every benchmark, one after the other, one table each (markdown, for docs/PERFORMANCE.md).
 *
 *   npm run bench                                   # = npx tsx bench/run.ts
 *   npx tsx bench/run.ts --decide-seconds 8 --worker-iterations 20 --demo-seconds 150
 *
 * The CPU-bound benchmarks run first; the demo scenario (child processes, timers) runs last so it cannot
 * disturb them. Asserts nothing.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runControllerRunsBench } from "./controller-runs.js";
import { runDashboardBench } from "./dashboard-size.js";
import { machineLine } from "./lib.js";
import { runDecideBench } from "./reconcile-decide.js";
import { runRequestsBench } from "./requests.js";
import { runServeFootprintBench } from "./serve-footprint.js";
import { runServeMemoryBench } from "./serve-memory.js";

const here = dirname(fileURLToPath(import.meta.url));

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const decideSeconds = option("decide-seconds", 8);
const workerIterations = option("worker-iterations", 20);
const demoSeconds = option("demo-seconds", 150);

const started = performance.now();
const section = (name: string) =>
  console.error(`[bench] ${name}… (${((performance.now() - started) / 1000).toFixed(0)} s)`);

console.log("## Autopilot benchmarks\n");
console.log(machineLine());
console.log(
  `Command: npm run bench (bench/run.ts: decide ${decideSeconds} s per size, worker ${workerIterations} iterations, demo capped at ${demoSeconds} s)`,
);

section("dashboard size");
runDashboardBench();

section("reconcile decision time");
runDecideBench(decideSeconds);

// The worker benchmark (bench/worker-overhead.ts) runs as its own process with a smaller iteration count.
section("worker overhead");
console.log("\n### Worker overhead per iteration\n");
const worker = spawnSync(
  process.execPath,
  ["--import", "tsx", join(here, "worker-overhead.ts"), String(workerIterations)],
  { stdio: ["ignore", "inherit", "inherit"] },
);
if (worker.status !== 0) console.log(`(worker-overhead.ts exited with ${worker.status ?? worker.signal})`);

section("the hosted app's footprint");
await runServeFootprintBench();

section("the hosted app's memory per active repository");
await runServeMemoryBench();

section("GitHub requests (idle ticks, demo scenario)");
await runRequestsBench(demoSeconds);

section("controller runs per completed task (Actions-only mode, demo scenario)");
await runControllerRunsBench(demoSeconds * 2);

console.log(`\nTotal: ${((performance.now() - started) / 1000).toFixed(0)} s.`);
