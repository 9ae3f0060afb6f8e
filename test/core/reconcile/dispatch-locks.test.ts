import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { LOCK_REFUSED_INCIDENT } from "../../../src/core/reconcile/runs/dispatch-locks.js";
import { comment, input, issue, minutes, only, step, world } from "../world.js";

describe("the dispatch locks", () => {
  const dispatched = () => step(world({ issues: [issue(1)] }), null);

  it("a dispatched attempt whose lock ref does not exist puts GitHub's refusal on the dashboard", () => {
    const first = dispatched();
    expect(first.world.runs.map((r) => r.dispatchId)).toEqual(["1-1-seed"]);
    const refused = decide({
      ...input({ ...first.world, dispatchLocks: [], dispatchLocksComplete: true }),
      state: first.state,
      now: minutes(2),
    });
    expect(refused.state.incidents).toEqual([
      expect.objectContaining({ kind: "dispatch_lock", message: LOCK_REFUSED_INCIDENT }),
    ]);
    expect(only(refused.effects, "writeTrackingIssue")[0]?.body).toContain(
      "GitHub refused to create a dispatch lock",
    );

    const held = decide({
      ...input({ ...first.world, dispatchLocks: ["issue-1-attempt-1"], dispatchLocksComplete: true }),
      state: first.state,
      now: minutes(2),
    });
    expect(held.state.incidents).toEqual([]);
    // A list the snapshot could not read in full says nothing of a lock missing from it.
    const unknown = decide({
      ...input({ ...first.world, dispatchLocks: ["issue-2-attempt-1"], dispatchLocksComplete: false }),
      state: first.state,
      now: minutes(2),
    });
    expect(unknown.state.incidents).toEqual([]);
  });

  it("are deleted when their task leaves the state (skipped here), and leftovers of ended tasks too", () => {
    const first = dispatched();
    const skip = comment(900, 1, "maintainer", "/autopilot skip #1");
    const w = {
      ...first.world,
      runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "cancelled" })),
      comments: [skip],
      issues: [...first.world.issues, issue(9, { state: "closed" })],
      dispatchLocks: ["issue-1-attempt-1", "issue-9-attempt-1", "issue-9-attempt-2"],
    };
    const d = decide({ ...input(w), state: first.state, now: minutes(3) });
    expect(d.state.tasks["1"]).toBeUndefined();
    expect(only(d.effects, "releaseDispatchLocks")).toEqual([
      { type: "releaseDispatchLocks", issue: 1, attempts: 1 },
      { type: "releaseDispatchLocks", issue: 9, attempts: 2 },
    ]);
  });

  it("a task back in the pool after it left the state is dispatched as a new attempt, past its ended run", () => {
    // Taken out (its labels removed), retired, then labeled ready again before its lock was deleted: attempt 1
    // again would find the lock taken (read as another controller's dispatch) and the old run as its own.
    const first = dispatched();
    const state = structuredClone(first.state);
    delete state.tasks["1"];
    const w = {
      ...first.world,
      runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "cancelled" })),
      dispatchLocks: ["issue-1-attempt-1"],
      dispatchLocksComplete: true,
    };
    const d = decide({ ...input(w), state, now: minutes(3) });
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
    // Nothing of attempt 1 left anywhere: the number starts again.
    const fresh = decide({
      ...input({ ...w, runs: [], dispatchLocks: [] }),
      state,
      now: minutes(3),
    });
    expect(only(fresh.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 1, attempt: 1 }),
    ]);
    // A lock with no ended run may be an attempt in flight (another controller's, or one a lost state recorded):
    // its number is taken again, so the lock turns the second dispatch away instead of a new attempt running twice.
    const inFlight = decide({
      ...input({ ...w, runs: [], dispatchLocks: ["issue-1-attempt-1"] }),
      state,
      now: minutes(3),
    });
    expect(only(inFlight.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 1, attempt: 1 }),
    ]);
  });

  it("of a task still at work are kept", () => {
    const first = dispatched();
    const w = { ...first.world, dispatchLocks: ["issue-1-attempt-1"] };
    const d = decide({ ...input(w), state: first.state, now: minutes(2) });
    expect(only(d.effects, "releaseDispatchLocks")).toEqual([]);
  });

  it("a recorded dispatch that never took its lock was never sent: it is sent again within a minute, taking the lock", () => {
    // The controller recorded the dispatch on the dashboard and stopped before it took the lock and sent it.
    const first = dispatched();
    const lost = { ...first.world, runs: [] };
    const early = decide({
      ...input({ ...lost, dispatchLocks: [], dispatchLocksComplete: true }),
      state: first.state,
      now: minutes(0.25),
    });
    expect(only(early.effects, "dispatchWorker")).toEqual([]);
    const sent = decide({
      ...input({ ...lost, dispatchLocks: [], dispatchLocksComplete: true }),
      state: first.state,
      now: minutes(0.6),
    });
    const again = only(sent.effects, "dispatchWorker");
    expect(again).toEqual([expect.objectContaining({ issue: 1, attempt: 1, dispatchId: "1-1-seed" })]);
    // Not a blind resend: it takes the lock, so a controller still sending it and this one cannot both succeed.
    expect(again[0]?.resend).toBeUndefined();

    // With the lock taken (stopped between the lock and the send), or a list cut short, the wait stays 2 minutes
    // and the resend goes without the lock (it is this attempt's own).
    for (const locks of [
      { dispatchLocks: ["issue-1-attempt-1"], dispatchLocksComplete: true },
      { dispatchLocks: [], dispatchLocksComplete: false },
    ]) {
      const held = decide({ ...input({ ...lost, ...locks }), state: first.state, now: minutes(0.6) });
      expect(only(held.effects, "dispatchWorker")).toEqual([]);
      const later = decide({ ...input({ ...lost, ...locks }), state: first.state, now: minutes(2.1) });
      expect(only(later.effects, "dispatchWorker")).toEqual([expect.objectContaining({ resend: true })]);
    }
  });
});
