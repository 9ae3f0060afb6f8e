/**
 * One App across an organization, on the offline sandbox: two installations holding `--repos` repositories,
 * `--active` of them with `--tasks` tasks each and the rest idle; two replicas of the hosted controller sharing
 * their work through Redis (src/app/hosted/replica-work.ts), replica 1 killed for good mid-run; a burst of `--burst`
 * webhooks (a discussion on one task: comments in a row). Checked at the end, each a failed line when it does not
 * hold: every task done with one worker run (no double dispatch, nothing lost), each idle repository reconciled
 * once (to learn it is idle) and never again by a tick, no request refused for an installation's rate limit.
 * Printed: charged requests per installation-hour, label-to-dispatch latency (median, 95th percentile), and the
 * peak memory of each replica process.
 *
 *   npx tsx bench/org-scale.ts [--repos 300] [--active 20] [--tasks 5] [--burst 1000] [--cap 1800]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { loadScenario } from "../sandbox/scenario/scenario-file.js";
import { runScenario } from "../sandbox/scenario/run-scenario.js";
import { formatInt, isMain, machineLine, printTable } from "./lib.js";

interface Shape {
  repos: number;
  active: number;
  tasks: number;
  burst: number;
  capSeconds: number;
}

const READY = "autopilot:ready";
/**
 * After a replica's death, how long the reconciles it held may run again on the other: their lock (5 ticks of
 * 2 s in the harness, sandbox/scenario/controllers/controller-child.ts), the next stalled-job check (2 ticks),
 * and the reconcile itself.
 */
const HAND_OVER_MS = 5 * 2000 + 2 * 2000 + 5_000;

/** A task; in the organization's repositories it waits unlabeled until a maintainer labels it mid-run. */
function task(repo: string, i: number, labeled = true) {
  const file = `src/${repo}-${i}.js`;
  return {
    title: `Task ${i} of ${repo}`,
    ...(labeled ? {} : { labels: [] }),
    agent: { behavior: "complete", files: { [file]: `export const value = ${i};\n` } },
  };
}

const testFiles = {
  "package.json": '{ "name": "org", "private": true, "type": "module" }',
  "test/ok.test.js": 'import test from "node:test";\ntest("ok", () => {});\n',
};
const repoConfig = { maxParallel: 1, maxIterations: 3, qualityCommands: ["node --test test/"] };

/** The scenario: acme/shop (active, judged by the run) and the organization's other repositories. */
function scenarioOf(shape: Shape): Record<string, unknown> {
  const others = shape.repos - 1;
  const acmeCount = Math.ceil(others / 2);
  const acme = Array.from({ length: acmeCount }, (_, i) => {
    const name = i < shape.active - 1 ? `svc-${i + 1}` : `idle-${i + 1}`;
    return {
      name,
      files: testFiles,
      config: repoConfig,
      ...(name.startsWith("svc-") ? { ci: "node --test" } : {}),
      issues: name.startsWith("svc-")
        ? Array.from({ length: shape.tasks }, (_, t) => task(name, t + 1, false))
        : [],
    };
  });
  // A maintainer labels every task of the active repositories once the App runs: each label is a webhook that
  // brings its repository in (a repository the App has not seen yet is idle to its ticks until then).
  const labels = acme
    .filter((r) => r.name.startsWith("svc-"))
    .flatMap((r) =>
      r.issues.map((_, t) => ({ as: "alice", label: READY, repo: `acme/${r.name}`, on: t + 1 })),
    );
  const tools = Array.from({ length: others - acmeCount }, (_, i) => ({ name: `tool-${i + 1}` }));
  const bursts = [];
  for (let left = shape.burst; left > 0; left -= 200)
    bursts.push({ as: "alice", comment: "Any news on this?", times: Math.min(200, left), on: 1 });
  return {
    name: "org-scale",
    description: "Two installations, many repositories, two replicas sharing the work, one killed.",
    repo: { owner: "acme", name: "shop", ci: "node --test", config: repoConfig, files: testFiles },
    users: [{ login: "alice", permission: "admin" }],
    issues: Array.from({ length: shape.tasks }, (_, t) => task("shop", t + 1)),
    installations: [
      { account: "acme", repositories: acme },
      { account: "tools", repositories: tools },
    ],
    controllers: { instances: 2, sharedWork: true },
    timeline: [
      ...(labels.length ? [{ when: { afterSeconds: 5 }, do: labels }] : []),
      {
        when: { afterSeconds: 20 },
        do: [{ killController: { instance: 1, afterWrites: 1, restartAfterSeconds: 86_400 } }],
      },
      { when: { afterSeconds: 30 }, do: bursts },
    ],
    limits: { maxDurationSeconds: shape.capSeconds, tickMs: 2000, settleSeconds: 5, jobTimeoutSeconds: 600 },
    expect: Object.fromEntries(
      Array.from({ length: shape.tasks }, (_, t) => [t + 1, { state: "done", runs: 1 }]),
    ),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;
const seconds = (ms: number) => (Number.isNaN(ms) ? "—" : `${(ms / 1000).toFixed(1)} s`);

async function runOrgScaleBench(shape: Shape): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "autopilot-org-scale-"));
  const file = join(dir, "org-scale.yml");
  // No anchors: the scenario parser refuses many aliases (a YAML bomb guard), and each repository is its own.
  writeFileSync(file, stringify(scenarioOf(shape), { aliasDuplicateObjects: false }));
  const failures: string[] = [];
  const lines: string[][] = [];
  // When the replicas were up (a task labeled before waits for the App's start, not for the App) and when
  // replica 1 was killed.
  let upAt = 0;
  let killedAt = Number.POSITIVE_INFINITY;
  try {
    const report = await runScenario(loadScenario(file), {
      handleSignals: false,
      onProgress: (event) => {
        if (/controller process\(es\) running/.test(event.message)) upAt = Date.now();
        if (/^fault: controller 1 .*killed/.test(event.message)) killedAt = Date.now();
      },
      inspect: ({ sandbox, store }) => {
        const records = sandbox.requests.records;
        const durationH = Math.max(1e-9, (Date.now() - records[0]!.at.getTime()) / 3_600_000);
        // Charged requests per installation (its own rate limit), per hour of the run.
        const byInstallation = new Map<number, number>();
        for (const r of records)
          if (r.charged && r.installationId)
            byInstallation.set(r.installationId, (byInstallation.get(r.installationId) ?? 0) + 1);
        for (const [id, n] of [...byInstallation].sort((a, b) => a[0] - b[0]))
          lines.push([
            `installation ${id}: charged requests per installation-hour`,
            formatInt(Math.round(n / durationH)),
            `${formatInt(n)} in ${(durationH * 60).toFixed(1)} min`,
          ]);
        const limited = records.filter(
          (r) => r.tokenKind === "installation" && (r.status === 429 || (r.status === 403 && !r.charged)),
        );
        if (limited.length)
          failures.push(`${limited.length} installation request(s) refused for a rate limit`);

        // Every task of every repository: done, with one worker run; label-to-dispatch from the ready label.
        const latencies: number[] = [];
        const firstOfRepo: number[] = [];
        let tasks = 0;
        let doneOnce = 0;
        for (const repo of store.listRepos()) {
          const full = `${repo.owner}/${repo.name}`;
          const runs = store.listWorkflowRuns(full).filter((r) => r.inputs.issue);
          const issues = store.listIssues(full).filter((i) => !i.pull && i.title.startsWith("Task "));
          let first = true;
          for (const issue of issues.sort((a, b) => a.number - b.number)) {
            tasks++;
            const mine = runs.filter((r) => Number(r.inputs.issue) === issue.number);
            if (issue.state === "closed" && mine.length === 1) doneOnce++;
            if (issue.state !== "closed") failures.push(`${full}#${issue.number} not done`);
            if (mine.length !== 1) failures.push(`${full}#${issue.number}: ${mine.length} worker runs`);
            const labeled = issue.events.find((e) => e.event === "labeled" && e.label?.name === READY);
            const dispatched = mine.map((r) => r.createdAt.getTime()).sort((a, b) => a - b)[0];
            if (labeled && dispatched !== undefined) {
              const ms = dispatched - Math.max(labeled.createdAt.getTime(), upAt);
              latencies.push(ms);
              if (first) firstOfRepo.push(ms);
            }
            first = false;
          }
        }
        latencies.sort((a, b) => a - b);
        firstOfRepo.sort((a, b) => a - b);
        lines.push(["tasks done with one worker run", `${doneOnce} of ${tasks}`, ""]);
        lines.push([
          "label-to-dispatch, first task of each repository (a free slot; from the App's start for a task labeled before it): median / p95",
          `${seconds(percentile(firstOfRepo, 50))} / ${seconds(percentile(firstOfRepo, 95))}`,
          `${firstOfRepo.length} tasks`,
        ]);
        lines.push([
          "label-to-dispatch, every task (the later ones wait for their repository's one slot): median / p95",
          `${seconds(percentile(latencies, 50))} / ${seconds(percentile(latencies, 95))}`,
          `${latencies.length} tasks`,
        ]);

        // Idle repositories: reconciled once to learn they are idle, then never by a tick. A reconcile the killed
        // replica held when it died is run again by the other (the hand-over), which is not a tick's.
        const idle = store
          .listRepos()
          .filter((r) => r.name.startsWith("idle-") || r.name.startsWith("tool-"));
        let again = 0;
        let handedOver = 0;
        for (const repo of idle) {
          const key = `${repo.owner}/${repo.name}`.toLowerCase();
          const times = records
            .filter((r) => r.charged && r.repo === key && r.endpoint === "POST /graphql")
            .map((r) => r.at.getTime())
            .sort((a, b) => a - b);
          for (const t of times.slice(1)) {
            if (t >= killedAt && t <= killedAt + HAND_OVER_MS) handedOver++;
            else again++;
          }
        }
        lines.push([
          "idle repositories: reconciled again after the reconcile that learned each is idle",
          formatInt(again),
          `${idle.length} idle repositories`,
        ]);
        lines.push([
          "idle repositories: the killed replica's reconciles run again by the other",
          formatInt(handedOver),
          "the hand-over",
        ]);
        if (again > 0)
          failures.push(`idle repositories were reconciled again ${again} time(s) outside the hand-over`);
      },
    });
    for (const p of report.controllerProcesses ?? [])
      lines.push([
        `replica ${p.instance} (process ${p.generation}): peak memory`,
        p.peakRssMiB === null ? "—" : `${p.peakRssMiB} MiB`,
        p.killed ? "killed mid-run" : "to the end",
      ]);
    if (!(report.controllerProcesses ?? []).some((p) => p.killed))
      failures.push("replica 1 was never killed (it made no write after the fault was armed)");
    if (report.outcome !== "settled") failures.push(`the run ended ${report.outcome}`);
    for (const unmet of report.expectations.unmet ?? []) failures.push(unmet);
    if (report.invariants && Object.values(report.invariants).some((v) => typeof v === "number" && v > 0))
      failures.push(`invariants: ${JSON.stringify(report.invariants)}`);
    lines.push([
      "run",
      report.outcome,
      `${(report.durationMs / 1000).toFixed(0)} s, ${formatInt(report.runs.total)} worker runs`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    `An organization: ${shape.repos} repositories in 2 installations, ${shape.active} with ${shape.tasks} tasks each; 2 replicas sharing the work, one killed; a burst of ${shape.burst} webhooks`,
    [["measure", "value", "of"], ...lines],
    failures.length ? failures.map((f) => `FAILED: ${f}`) : ["Every check held."],
  );
  return failures.length === 0;
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const n = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
  return n;
}

if (isMain(import.meta.url)) {
  console.log(machineLine());
  const ok = await runOrgScaleBench({
    repos: flag("repos", 300),
    active: flag("active", 20),
    tasks: flag("tasks", 5),
    burst: flag("burst", 1000),
    capSeconds: flag("cap", 1800),
  });
  process.exitCode = ok ? 0 : 1;
}
