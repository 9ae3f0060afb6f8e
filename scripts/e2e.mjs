#!/usr/bin/env node
// End to end: runs every scenario (scenarios/*.yml) on the offline sandbox through the CLI,
//   node bin/autopilot.js sandbox --scenario <file> --report <json> [--controller actions]
// four at a time, one line per scenario: outcome, seconds, requests (charged, per task done), GraphQL points,
// unmet expectations.
// Every scenario runs twice: with the hosted controller, and with the controller workflow run by Actions
// (tagged @actions). Exits 1 when any run did not pass.
//
//   npm run e2e                          every scenario, in both controller modes
//   npm run e2e -- 02 05-human-gate      only scenarios whose file name contains one of these
//   npm run e2e -- --controller actions  every chosen scenario in Actions mode only (hosted, both: likewise)
//   npm run e2e -- --repeat 3            each scenario three times (flakiness hunting)
//   npm run e2e -- --jobs 1              one at a time (default 4, or $E2E_JOBS; Actions-mode runs 1.5 times as many)
//   npm run e2e -- --keep                keep the logs and reports (always kept on failure)
//   npm run e2e -- --except demo         every scenario but `demo` (exact names; CI ran it already)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
/**
 * Runs at once. A scenario run mostly waits (on its timeline's people, its controller's tick or schedule, its
 * workers and their CI): its CPU time (/usr/bin/time) against its length was 0.2–0.3 of one core for hosted runs
 * (faults-controller-restarted: 55 s in 265 s; faults-content-limit: 28 s in 97 s) and under 0.2 in Actions
 * mode (see costOf), so two at a time left a 2-core CI machine about half idle; four keep it about busy.
 */
const DEFAULT_JOBS = 4;
let jobs = Number(process.env.E2E_JOBS ?? DEFAULT_JOBS);
let repeat = 1;
let keep = false;
/** null: both modes for every scenario (as "both"). */
let controller = null;
const filters = [];
/** Scenarios (file names without .yml) left out. */
const except = new Set();
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "--jobs" || arg === "-j") jobs = Number(args[++i]);
  else if (arg === "--repeat") repeat = Number(args[++i]);
  else if (arg === "--keep") keep = true;
  else if (arg === "--except") except.add(args[++i]);
  else if (arg === "--controller") controller = args[++i];
  else if (arg === "--help" || arg === "-h") {
    process.stdout.write(
      `${readFileSync(fileURLToPath(import.meta.url), "utf8")
        .split("\n")
        .slice(1, 15)
        .join("\n")
        .replace(/^\/\/ ?/gm, "")}\n`,
    );
    process.exit(0);
  } else filters.push(arg);
}
if (!Number.isInteger(jobs) || jobs < 1) jobs = DEFAULT_JOBS;
if (!Number.isInteger(repeat) || repeat < 1) repeat = 1;
if (controller !== null && !["hosted", "actions", "both"].includes(controller)) {
  process.stderr.write(`e2e: --controller must be hosted, actions or both, not "${controller}"\n`);
  process.exit(2);
}

const scenarioDir = join(root, "scenarios");
const files = readdirSync(scenarioDir)
  .filter((f) => /\.ya?ml$/.test(f))
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)))
  .filter((f) => !except.has(f.replace(/\.ya?ml$/, "")))
  .sort((a, b) => (a === "demo.yml" ? -1 : b === "demo.yml" ? 1 : a.localeCompare(b)));
if (files.length === 0) {
  process.stderr.write(
    `e2e: no scenario in ${scenarioDir}${filters.length ? ` matches ${filters.join(", ")}` : ""}\n`,
  );
  process.exit(1);
}

/** A scenario's time limit as its file states it (the longest start first, so no long run ends the suite alone). */
function limitOf(file) {
  const m = /maxDurationSeconds:\s*(\d+)/.exec(readFileSync(join(scenarioDir, file), "utf8"));
  return m ? Number(m[1]) : 180;
}
const outDir = mkdtempSync(join(tmpdir(), "autopilot-e2e-"));
/**
 * The controller modes a scenario runs in: both unless told. A fresh controller job per event is where state
 * kept in memory, a lost webhook or an unlucky second shows (a bad file once fell back to the defaults there).
 */
function modesOf() {
  return controller === null || controller === "both" ? ["hosted", "actions"] : [controller];
}
const queue = [];
for (let round = 1; round <= repeat; round++)
  for (const file of files)
    for (const mode of modesOf())
      queue.push({
        file,
        round,
        mode,
        name: `${basename(file).replace(/\.ya?ml$/, "")}${mode === "actions" ? "@actions" : ""}`,
      });
queue.sort(
  (a, b) =>
    limitOf(b.file) * (b.mode === "actions" ? 1.5 : 1) - limitOf(a.file) * (a.mode === "actions" ? 1.5 : 1),
);

/** Runs one scenario through the CLI; resolves with its row. */
function runOne(item) {
  const tag = repeat > 1 ? `${item.name}#${item.round}` : item.name;
  const report = join(outDir, `${tag}.json`);
  const log = join(outDir, `${tag}.log`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(root, "bin", "autopilot.js"),
        "sandbox",
        "--scenario",
        join(scenarioDir, item.file),
        "--report",
        report,
        ...(item.mode === "actions" ? ["--controller", "actions"] : []),
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FORCE_COLOR: "0" } },
    );
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    child.on("close", (code, signal) => {
      const output = Buffer.concat(chunks).toString("utf8");
      writeFileSync(log, output);
      let parsed = null;
      try {
        parsed = existsSync(report) ? JSON.parse(readFileSync(report, "utf8")) : null;
      } catch {
        parsed = null;
      }
      const unmet = [];
      if (parsed) {
        for (const m of parsed.expectations?.mismatches ?? [])
          unmet.push(`#${m.number}: expected ${m.expected}, got ${m.actual}`);
        unmet.push(...(parsed.expectations?.unmet ?? []));
        for (const d of parsed.invariants?.details ?? [])
          if (d.kind !== "note") unmet.push(`invariant: ${d.message}`);
        if (parsed.error) unmet.push(`error: ${String(parsed.error).split("\n")[0]}`);
      } else {
        const last = output.trim().split("\n").slice(-3).join(" | ");
        unmet.push(`no report (exit ${code ?? signal}): ${last.slice(0, 300)}`);
      }
      const passed = code === 0 && parsed !== null;
      if (passed && unmet.length) unmet.length = 0; // notes only
      resolve({
        tag,
        passed,
        outcome: parsed?.outcome ?? `exit ${code ?? signal}`,
        seconds: parsed ? parsed.durationMs / 1000 : (Date.now() - started) / 1000,
        requests: parsed?.requests?.total ?? null,
        points: parsed?.requests?.graphqlPoints ?? null,
        charged: parsed?.requests?.charged ?? null,
        chargedPerTask: parsed?.requests?.chargedPerCompletedTask ?? null,
        unmet: passed ? [] : unmet.length ? unmet : [`exit code ${code ?? signal}`],
        log,
        report,
      });
    });
  });
}

/**
 * How much of a job slot a run takes, in thirds. An Actions-mode run mostly waits (its controller is a job the
 * Actions stand-in starts on events and a schedule): measured with /usr/bin/time, one used 17–18% of one core
 * over its run (faults-controller-killed@actions: 30 s of CPU in 174 s), so three of them share two slots.
 */
const costOf = (item) => (item.mode === "actions" ? 2 : 3);
const capacity = jobs * 3;

const rows = [];
const startedAll = Date.now();
let used = 0;
const running = new Set();
/** Starts every queued run that fits, the longest first (the queue's order); resolves when all have ended. */
async function runAll() {
  for (;;) {
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i];
      // The first run of the queue always starts when nothing runs, whatever its cost.
      if (used + costOf(item) > capacity && running.size > 0) continue;
      queue.splice(i--, 1);
      used += costOf(item);
      const done = runOne(item).then((row) => {
        rows.push(row);
        used -= costOf(item);
        running.delete(done);
        process.stdout.write(
          `${row.passed ? "pass" : "FAIL"}  ${row.tag}  ${row.outcome}  ${row.seconds.toFixed(1)}s${row.passed ? "" : `  (log: ${row.log})`}\n`,
        );
      });
      running.add(done);
    }
    if (running.size === 0) return;
    await Promise.race(running);
  }
}
process.stdout.write(
  `e2e: ${queue.length} scenario run(s), ${jobs} at a time (Actions-mode runs: ${Math.floor(capacity / 2)}); logs in ${outDir}\n`,
);
await runAll();

rows.sort((a, b) => a.tag.localeCompare(b.tag));
const header = [
  "scenario",
  "outcome",
  "seconds",
  "requests",
  "charged",
  "charged/task",
  "GraphQL points",
  "unmet expectations",
];
const table = rows.map((r) => [
  r.tag,
  r.passed ? r.outcome : `${r.outcome} ✗`,
  r.seconds.toFixed(1),
  r.requests === null ? "-" : String(r.requests),
  r.charged === null ? "-" : String(r.charged),
  r.chargedPerTask === null ? "-" : String(r.chargedPerTask),
  r.points === null ? "-" : String(r.points),
  r.unmet.length ? r.unmet[0] : "-",
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
const line = (cells) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
process.stdout.write(`\n${line(header)}\n${line(widths.map((w) => "-".repeat(w)))}\n`);
for (const [i, row] of table.entries()) {
  process.stdout.write(`${line(row)}\n`);
  for (const more of rows[i].unmet.slice(1))
    process.stdout.write(`${line(["", "", "", "", "", "", "", more])}\n`);
}
const failed = rows.filter((r) => !r.passed);
process.stdout.write(
  `\n${rows.length - failed.length} of ${rows.length} passed in ${((Date.now() - startedAll) / 1000).toFixed(0)}s\n`,
);
if (failed.length) {
  for (const row of failed) {
    // What happened (the narration, without the runs' own output), then how it ended (the report's last lines):
    // a CI log keeps only this of a failure.
    const lines = readFileSync(row.log, "utf8").trim().split("\n");
    const story = lines.filter(
      (l) => /^\[\s*\d+\.\d+s\]/.test(l) && !/^\[[^\]]*\]\s+(#\d+ .{0,40})?\s+\| /.test(l),
    );
    const shown = [...story.slice(-40), "…", ...lines.slice(-12)].map((l) => l.slice(0, 220)).join("\n");
    process.stdout.write(`\n──── ${row.tag} (narration and last lines of ${row.log}) ────\n${shown}\n`);
  }
  process.exit(1);
}
if (!keep) rmSync(outDir, { recursive: true, force: true });
