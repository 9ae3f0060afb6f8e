/**
 * Whether a reconcile's ready work waits on Autopilot alone (`Decision.readyWaitsOnAutopilot`), which keeps the
 * repository active, its schedule on (src/core/scheduling/repo-activity.ts): only where Autopilot dispatches by
 * itself. Ready tasks that wait on people leave it unset, so a repository waiting on them bills no schedule.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { config, input, issue, minutes, step, world } from "../world.js";

describe("ready work that waits on Autopilot alone", () => {
  it("is a ready task waiting for a free slot in a running `mode: auto` session", () => {
    const cfg = config({ maxParallel: 1 });
    const first = step(world({ issues: [issue(1), issue(2)] }), null, { config: cfg });
    const second = step(first.world, first.state, { config: cfg, now: minutes(1) });
    expect(second.state.session.status).toBe("running");
    expect(second.decision.readyWaitsOnAutopilot).toBe(true);
  });

  it("is not a ready task of a paused session", () => {
    const cfg = config();
    const first = step(world(), null, { config: cfg });
    const paused = { ...first.state, session: { ...first.state.session, status: "paused" as const } };
    const d = decide({
      ...input(world({ issues: [issue(1)] })),
      state: paused,
      config: cfg,
      now: minutes(1),
    });
    expect(d.state.session.status).toBe("paused");
    expect(d.effects.filter((e) => e.type === "dispatchWorker")).toEqual([]);
    expect(d.readyWaitsOnAutopilot).toBeUndefined();
  });

  it("is not a ready task `mode: semi-auto` waits to be run by a person", () => {
    const cfg = config({ mode: "semi-auto" });
    const first = step(world({ issues: [issue(1)] }), null, { config: cfg });
    const second = step(first.world, first.state, { config: cfg, now: minutes(1) });
    expect(second.state.session.status).toBe("running");
    expect(second.decision.readyWaitsOnAutopilot).toBeUndefined();
  });

  it("is still a ready task the pool cannot start yet, while Autopilot dispatches by itself", () => {
    // Conservative: a task blocked by another looks, from the pool, like one a killed controller recorded as
    // dispatched and never sent, which only time brings back (scenario faults-controller-killed).
    const cfg = config({ maxParallel: 2 });
    const issues = [
      issue(1, { labels: ["autopilot:needs-human"] }),
      issue(2, { body: "Depends on #1" }),
      issue(3),
    ];
    const first = step(world({ issues }), null, { config: cfg });
    const second = step(first.world, first.state, { config: cfg, now: minutes(1) });
    expect(second.state.session.status).toBe("running");
    expect(second.decision.effects.filter((e) => e.type === "dispatchWorker" && e.issue === 2)).toEqual([]);
    expect(second.decision.readyWaitsOnAutopilot).toBe(true);
  });
});
