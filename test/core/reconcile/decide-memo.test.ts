/**
 * What `decide` keeps between reconciles (the task graph's memo, src/core/tasks/graph.ts) must never change a
 * decision: each reconcile of a synthetic world, decided with the memo of the one before it, equals the same
 * reconcile decided with the memo emptied, byte for byte (the dashboard body included).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetGraphMemos, keepGraphsBetweenBuilds } from "../../../src/core/tasks/graph.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { decideInput, settle, syntheticWorld, type World } from "../../../bench/synthetic-world.js";

const fresh = (world: World) =>
  decideInput({ ...world, snapshot: structuredClone(world.snapshot), state: structuredClone(world.state) });

describe("decide with the graph kept between reconciles", () => {
  beforeAll(() => keepGraphsBetweenBuilds(true));
  afterAll(() => keepGraphsBetweenBuilds(false));
  for (const events of [true, false]) {
    it(`decides as a cold start would, reconcile after reconcile (${events ? "with events" : "at rest"})`, () => {
      forgetGraphMemos();
      let world = syntheticWorld({ open: 600, done: 300, live: 4, events, cycles: 5 });
      for (let round = 0; round < 4; round++) {
        const warm = JSON.stringify(decide(fresh(world)));
        forgetGraphMemos();
        const cold = JSON.stringify(decide(fresh(world)));
        expect(warm).toBe(cold);
        keepGraphsBetweenBuilds(false); // as in Actions mode
        expect(JSON.stringify(decide(fresh(world)))).toBe(cold);
        keepGraphsBetweenBuilds(true);
        // The next reconcile starts from this one's graph: decide once more (memo warm) and settle.
        decide(fresh(world));
        world = settle(world).world;
      }
    });
  }
});
