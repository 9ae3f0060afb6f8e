/**
 * Every writer's command is acknowledged even when the reaction's write is lost after the state that marks the
 * command processed was written (src/core/reconcile/commands/owed-reactions.ts): found by the seeded simulation
 * (seed 510 hosted, a controller killed after the state write; seed 201 in Actions mode, the reaction held by a
 * secondary limit when the job ended).
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { AGAIN_AT_MOST } from "../../../src/core/reconcile/commands/owed-reactions.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import { comment, input, issue, minutes, only, readBack, step, world } from "../world.js";

/** A first reconcile with a tracking issue, then `/autopilot pause` by a writer on it. */
function paused() {
  const first = step(world({ issues: [issue(1)] }), null);
  const tracking = first.world.trackingIssue!.number;
  const w: WorldSnapshot = { ...first.world, comments: [comment(900, tracking, "dev", "/autopilot pause")] };
  const d = decide({ ...input(w), state: first.state, now: minutes(1) });
  return { w, d, tracking };
}

describe("a reaction lost after the state write", () => {
  it("is given again by the next reconcile, and not once the snapshot shows it", () => {
    const { w, d } = paused();
    expect(only(d.effects, "react")).toEqual([expect.objectContaining({ commentId: 900, content: "+1" })]);
    // The state was written; the reaction was not (the process died): the comment reads unacknowledged.
    const state = readBack(d, w);
    const lost: WorldSnapshot = { ...w, comments: [{ ...w.comments[0]!, acknowledged: false }] };
    const again = decide({ ...input(lost), state, now: minutes(2) });
    expect(only(again.effects, "react")).toEqual([
      expect.objectContaining({ commentId: 900, content: "+1" }),
    ]);
    // The command itself is not acted on twice.
    expect(again.state.session.status).toBe(state!.session.status);

    const seen: WorldSnapshot = { ...w, comments: [{ ...w.comments[0]!, acknowledged: true }] };
    expect(only(decide({ ...input(seen), state, now: minutes(3) }).effects, "react")).toEqual([]);
  });

  it("is owed for a day, no longer", () => {
    const { w, d } = paused();
    const state = readBack(d, w);
    const lost: WorldSnapshot = { ...w, comments: [{ ...w.comments[0]!, acknowledged: false }] };
    expect(only(decide({ ...input(lost), state, now: minutes(25 * 60) }).effects, "react")).toEqual([]);
  });

  it("is given again a few times at most, not on every reconcile while it reads as missing", () => {
    const { w, d } = paused();
    let state = readBack(d, w);
    const lost: WorldSnapshot = { ...w, comments: [{ ...w.comments[0]!, acknowledged: false }] };
    const given: number[] = [];
    for (let i = 0; i < AGAIN_AT_MOST + 3; i++) {
      const again = decide({ ...input(lost), state, now: minutes(2 + i) });
      given.push(only(again.effects, "react").length);
      // No write when nothing changed: the state stays the one the tracking issue holds.
      if (only(again.effects, "writeTrackingIssue").length > 0) state = readBack(again, lost);
    }
    expect(given).toEqual([...Array(AGAIN_AT_MOST).fill(1), 0, 0, 0]);
  });

  it("is not given again when the snapshot did not read the comment's reactions", () => {
    const { w, d } = paused();
    const state = readBack(d, w);
    const { acknowledged: _unread, ...unread } = { ...w.comments[0]! };
    const again = decide({ ...input({ ...w, comments: [unread] }), state, now: minutes(2) });
    expect(only(again.effects, "react")).toEqual([]);
  });
});
