/**
 * Shrinking a failing world (sandbox/simulation/shrink.ts): a world kind the failure does not need is dropped, one
 * it needs is kept. Here the plan gate and the budgets, with a stand-in for running the world.
 */
import { describe, expect, it } from "vitest";
import type { WorldOutcome } from "../../sandbox/simulation/sim-run.js";
import { shrinkWorld } from "../../sandbox/simulation/shrink.js";
import type { WorldInput } from "../../sandbox/simulation/world-generator.js";

const WORLD: WorldInput = {
  name: "shrink",
  users: [{ login: "alice", permission: "admin" }],
  repo: { config: { maxParallel: 1, planGate: { enabled: true } } },
  issues: [{ title: "Task 1", labels: ["autopilot:ready"], author: "alice" }],
  timeline: [],
};

/** A world run that fails `planGatedWorkOnlyOnWritersApproval` when `fails(world)`. */
const runner = (fails: (world: WorldInput) => boolean) => async (world: WorldInput) =>
  ({
    name: world.name,
    mode: "hosted",
    violations: fails(world)
      ? [{ invariant: "planGatedWorkOnlyOnWritersApproval", atSeconds: 1, detail: "#1 ran unapproved" }]
      : [],
    counts: {},
    simulatedSeconds: 1,
  }) as unknown as WorldOutcome;

const gated = (world: WorldInput) => JSON.stringify(world.repo?.config ?? {}).includes("planGate");

describe("shrinking a failing world", () => {
  it("drops the plan gate when the failure does not need it", async () => {
    const shrunk = await shrinkWorld(
      WORLD,
      "planGatedWorkOnlyOnWritersApproval",
      runner(() => true),
    );
    expect(gated(shrunk)).toBe(false);
    expect(shrunk.repo?.config).toEqual({ maxParallel: 1 });
  });

  it("keeps the plan gate when the failure needs it", async () => {
    const shrunk = await shrinkWorld(WORLD, "planGatedWorkOnlyOnWritersApproval", runner(gated));
    expect(gated(shrunk)).toBe(true);
  });

  it("drops the budgets when the failure does not need them, and keeps them when it does", async () => {
    const budgeted: WorldInput = {
      ...WORLD,
      repo: { config: { maxParallel: 1, budgets: { session: { tokens: 5000 } } } },
    };
    const spends = (world: WorldInput) => JSON.stringify(world.repo?.config ?? {}).includes("budgets");
    const dropped = await shrinkWorld(
      budgeted,
      "planGatedWorkOnlyOnWritersApproval",
      runner(() => true),
    );
    expect(dropped.repo?.config).toEqual({ maxParallel: 1 });
    const kept = await shrinkWorld(budgeted, "planGatedWorkOnlyOnWritersApproval", runner(spends));
    expect(kept.repo?.config).toEqual({ maxParallel: 1, budgets: { session: { tokens: 5000 } } });
  });
});
