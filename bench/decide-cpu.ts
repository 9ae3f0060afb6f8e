/**
 * `decide` in CPU time (user + system of this process, `process.cpuUsage`), for a machine others share: wall
 * time there measures the other processes as much as this one. Same worlds as bench/reconcile-decide.ts.
 *
 *   npx tsx bench/decide-cpu.ts
 *
 * Each run decides on a fresh copy of the snapshot and state (structuredClone, outside the timed part), as a
 * controller reading GitHub again gets them: new objects and strings with the same content. What the graph
 * keeps between reconciles (src/core/tasks/graph.ts: each body's parsed dependency lines, the last graph) is
 * compared by content, so a fresh copy pays what a real reconcile pays for it; nothing is found by the object
 * identity of a repeated input.
 *
 * - first: the reconcile after events (worlds with events), without the memo (Actions mode, or the first
 *   reconcile of `autopilot serve`);
 * - steady: a world at rest, the memo holding the previous reconcile's graph (`autopilot serve`, which keeps it);
 * - steady, no memo: the same without it (Actions mode: a controller started per reconcile keeps nothing).
 *
 * Prints one line per size and kind; asserts nothing.
 */
import { forgetGraphMemos, keepGraphsBetweenBuilds } from "../src/core/tasks/graph.js";
import { decide } from "../src/core/reconcile/decide.js";
import { isMain } from "./lib.js";
import { atRest, decideInput, syntheticWorld, type World } from "./synthetic-world.js";

export type DecideKind = "first" | "steady" | "steady, no memo";

export function decideCpu(open: number, kind: DecideKind, runs: number): { median: number; min: number } {
  const world =
    kind === "first"
      ? syntheticWorld({ open, done: Math.floor(open / 2), live: 4 })
      : atRest(syntheticWorld({ open, done: Math.floor(open / 2), live: 4, events: false }));
  const fresh = (w: World) =>
    decideInput({ ...w, snapshot: structuredClone(w.snapshot), state: structuredClone(w.state) });
  // The memo as `autopilot serve` has it (src/app/hosted/http-server.ts turns it on); off, as in Actions mode, for the others.
  keepGraphsBetweenBuilds(kind === "steady");
  const cold = kind !== "steady";
  for (let i = 0; i < 3; i++) decide(fresh(world));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const input = fresh(world);
    if (cold) forgetGraphMemos();
    const start = process.cpuUsage();
    decide(input);
    const spent = process.cpuUsage(start);
    samples.push((spent.user + spent.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(runs / 2)]!, min: samples[0]! };
}

if (isMain(import.meta.url)) {
  for (const open of [1_000, 10_000]) {
    for (const kind of ["first", "steady", "steady, no memo"] as const) {
      const { median, min } = decideCpu(open, kind, open === 1_000 ? 60 : 12);
      console.log(`${open} open issues, ${kind}: CPU ms median ${median.toFixed(1)}, min ${min.toFixed(1)}`);
    }
  }
}
