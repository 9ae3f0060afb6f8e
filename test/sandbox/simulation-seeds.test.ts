/**
 * CI's fixed seeds of the seeded simulation (sandbox/simulation/, docs/ARCHITECTURE.md "The seeded simulation"):
 * generated worlds with faults, two controllers, tracking-issue tampering, killed runs and controllers, outsiders'
 * commands and pushes racing merges, each of which must hold every invariant in both controller modes. A seed that
 * fails here replays with `npm run simulate -- --seeds 1 --from <seed> --mode <mode>`.
 */
import { describe, expect, it } from "vitest";
import { runWorld } from "../../sandbox/simulation/sim-run.js";
import { type ControllerMode, generateWorld } from "../../sandbox/simulation/world-generator.js";

const SEEDS: Record<ControllerMode, number[]> = { hosted: [3, 6, 13], actions: [5, 14, 25] };

describe("the seeded simulation's fixed seeds", () => {
  for (const mode of ["hosted", "actions"] as const) {
    for (const seed of SEEDS[mode]) {
      it(`seed ${seed} in ${mode} mode holds every invariant`, { timeout: 240_000 }, async () => {
        const outcome = await runWorld(generateWorld(seed, mode), seed);
        expect(outcome.violations).toEqual([]);
        // The world did something: a world where nothing is dispatched would pass every invariant vacuously.
        expect(outcome.counts.reconciles).toBeGreaterThan(0);
        expect(outcome.counts.events).toBeGreaterThan(0);
      });
    }
  }
});
