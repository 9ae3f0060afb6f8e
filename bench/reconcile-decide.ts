/**
 * Pure reconcile decision time: `decide(...)` on a synthetic world of 1,000 and 10,000 open issues
 * (dependency chains and a few cycles, PRs in review with checks, live worker runs, off-ramped tasks with
 * reasons, a status command to answer), plus the task graph and scoring on their own.
 *
 *   npx tsx bench/reconcile-decide.ts [seconds per size]
 *
 * Two decides are timed per size: the first reconcile on the world (it retires merged tasks, answers the
 * command and rewrites the dashboard), and a steady one on the world that reconcile left (nothing new: the
 * usual webhook or tick). N adapts to the time budget. Prints a table; asserts nothing.
 */
import { buildTaskGraph } from "../src/core/tasks/graph.js";
import { readyTasks } from "../src/core/tasks/ready-tasks.js";
import { decide } from "../src/core/reconcile/decide.js";
import { rankTasks } from "../src/core/tasks/scoring.js";
import { formatInt, formatMs, isMain, machineLine, measure, printTable, type Timing } from "./lib.js";
import { atRest, decideInput, MERGED_NOW, syntheticWorld } from "./synthetic-world.js";

export const DECIDE_SIZES = [1_000, 10_000] as const;

export interface DecideRow {
  open: number;
  pulls: number;
  runs: number;
  edges: number;
  cycles: number;
  first: Timing;
  firstEffects: number;
  steady: Timing;
  steadyEffects: string;
  graph: Timing;
}

export function measureDecide(open: number, budgetMs: number): DecideRow {
  const world = syntheticWorld({ open, done: Math.floor(open / 2), live: 4 });
  const first = decide(decideInput(world));
  const next = atRest(syntheticWorld({ open, done: Math.floor(open / 2), live: 4, events: false }));
  const steadyDecision = decide(decideInput(next));
  const L = world.config.labels;
  const graphOnce = buildTaskGraph(world.snapshot.issues, world.snapshot.repo);

  const share = budgetMs / 3;
  const firstTiming = measure(() => decide(decideInput(world)), { budgetMs: share, minRuns: 5 });
  const steadyTiming = measure(() => decide(decideInput(next)), { budgetMs: share, minRuns: 5 });
  const graphTiming = measure(
    () => {
      const graph = buildTaskGraph(world.snapshot.issues, world.snapshot.repo);
      const { ready } = readyTasks(graph, {
        readyLabel: L.ready,
        excludeLabel: L.exclude,
        stateLabels: [L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed],
      });
      return rankTasks(ready, { weights: world.config.scoring });
    },
    { budgetMs: share, minRuns: 5 },
  );
  const kinds = new Map<string, number>();
  for (const e of steadyDecision.effects) kinds.set(e.type, (kinds.get(e.type) ?? 0) + 1);
  return {
    open,
    pulls: world.snapshot.pulls.length,
    runs: world.snapshot.runs.length,
    edges: graphOnce.edges.length,
    cycles: graphOnce.cycles.length,
    first: firstTiming,
    firstEffects: first.effects.length,
    steady: steadyTiming,
    steadyEffects:
      kinds.size === 0
        ? "none"
        : [...kinds]
            .sort()
            .map(([k, n]) => `${n} ${k}`)
            .join(", "),
    graph: graphTiming,
  };
}

export function decideTable(rows: readonly DecideRow[]): void {
  const line = (label: string, open: number, t: Timing) => [
    formatInt(open),
    label,
    String(t.runs),
    formatMs(t.median),
    formatMs(t.p90),
    formatMs(t.min),
    formatMs(t.max),
  ];
  printTable(
    "Pure reconcile decision time, ms",
    [
      ["open issues", "what", "N", "median", "p90", "min", "max"],
      ...rows.flatMap((r) => [
        line(`decide, first reconcile (${r.firstEffects} effects)`, r.open, r.first),
        line(`decide, steady (effects: ${r.steadyEffects})`, r.open, r.steady),
        line("graph build + readiness + scoring alone", r.open, r.graph),
      ]),
    ],
    [
      ...rows.map(
        (r) =>
          `${formatInt(r.open)} open issues: ${formatInt(r.edges)} dependency edges, ${r.cycles} cycles, ${r.pulls} pull requests (${r.pulls - MERGED_NOW} open, ${MERGED_NOW} merged since the last reconcile), ${r.runs} worker runs, ${formatInt(r.open / 2)} tasks finished earlier.`,
      ),
      "First reconcile: since the last one, 20 PRs were merged (tasks retired, branches deleted, a history comment), 2 workers finished (their slots go to the next 2 tasks), checks passed on 2 PRs (merge) and failed on 1 (feedback), a question was answered, a status command arrived; the dashboard is rewritten.",
      "Steady: a world at rest, one reconcile after it was last written. The comments it still emits are the one-time human-gate explanations of PRs in review whose task records the state compaction dropped (over the 24,000-character state budget); the executor skips them by comment key, so nothing is posted twice.",
      "decide includes building the view, rendering and digesting the dashboard and zod-parsing the previous tracking-issue body; it excludes all I/O. N adapts to the time budget.",
    ],
  );
}

export function runDecideBench(secondsPerSize = 10): DecideRow[] {
  const rows = DECIDE_SIZES.map((n) => measureDecide(n, secondsPerSize * 1000));
  decideTable(rows);
  return rows;
}

if (isMain(import.meta.url)) {
  console.log(machineLine());
  runDecideBench(Number(process.argv[2] ?? 10));
}
