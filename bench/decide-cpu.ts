/**
 * `decide` in CPU time (user + system of this process, `process.cpuUsage`), for a machine others share: wall
 * time there measures the other processes as much as this one. Same worlds as bench/reconcile-decide.ts.
 *
 *   npx tsx bench/decide-cpu.ts
 *
 * Prints one line per size and kind; asserts nothing.
 */
import { decide } from "../src/core/reconcile/decide.js";
import { atRest, decideInput, isMain, syntheticWorld } from "./lib.js";

export function decideCpu(
  open: number,
  kind: "first" | "steady",
  runs: number,
): { median: number; min: number } {
  const world =
    kind === "first"
      ? syntheticWorld({ open, done: Math.floor(open / 2), live: 4 })
      : atRest(syntheticWorld({ open, done: Math.floor(open / 2), live: 4, events: false }));
  for (let i = 0; i < 3; i++) decide(decideInput(world));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    decide(decideInput(world));
    const spent = process.cpuUsage(start);
    samples.push((spent.user + spent.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(runs / 2)]!, min: samples[0]! };
}

if (isMain(import.meta.url)) {
  for (const open of [1_000, 10_000]) {
    for (const kind of ["first", "steady"] as const) {
      const { median, min } = decideCpu(open, kind, open === 1_000 ? 60 : 12);
      console.log(`${open} open issues, ${kind}: CPU ms median ${median.toFixed(1)}, min ${min.toFixed(1)}`);
    }
  }
}
