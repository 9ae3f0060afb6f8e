import { describe, expect, it } from "vitest";
import { issue, minutes, step, world } from "../world.js";

/**
 * A task that leaves the pool and comes back is one task on the dashboard: its earlier exit, still waiting in
 * the pending history, is replaced by the later one (src/core/reconcile/runs/task-exit.ts), so "Finished" does
 * not count it twice.
 */
describe("a task that is closed, reopened and closed again", () => {
  it("counts once under Finished, with its latest exit", () => {
    const at = (m: number) => minutes(m).toISOString();
    const first = step(world({ issues: [issue(1), issue(2)] }), null, { now: minutes(0) });
    expect(first.state.tasks["1"]).toBeDefined();
    const close = (w: typeof first.world, n: number) => ({
      ...w,
      issues: w.issues.map((i) =>
        i.number === n ? { ...i, state: "closed" as const, stateReason: "not_planned" as const } : i,
      ),
    });
    const closed = step(close(first.world, 1), first.state, { now: minutes(1) });
    expect(closed.state.history.closed).toBe(1);
    expect(closed.state.tasks["1"]).toBeUndefined();

    const reopened = {
      ...closed.world,
      issues: closed.world.issues.map((i) => (i.number === 1 ? { ...issue(1), readyLabeledAt: at(20) } : i)),
    };
    const back = step(reopened, closed.state, { now: minutes(21) });
    expect(back.state.tasks["1"]).toBeDefined();
    const again = step(close(back.world, 1), back.state, { now: minutes(22) });

    expect(again.state.history.closed).toBe(1);
    expect(again.state.pendingHistory.filter((h) => h.issue === 1)).toEqual([
      expect.objectContaining({ outcome: "closed", at: at(22) }),
    ]);
    expect(again.world.trackingIssue?.body).toContain("### Finished (1)");
  });
});
