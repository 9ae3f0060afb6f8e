/**
 * The dashboard's session controls (000 §4.2: pause, resume and stop; src/core/reconcile/commands/checkboxes.ts):
 * a writer ticking one in the tracking issue acts as the command does, the rewrite unticks it, and a tick by
 * anyone else changes nothing.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import { input, issue, minutes, only, run, step, T0, world } from "../world.js";

/** A running session with #2's worker live, the dashboard as Autopilot wrote it. */
function running() {
  const first = step(world({ issues: [issue(2)] }), null, { now: T0 });
  const dispatch = only(first.decision.effects, "dispatchWorker")[0]!;
  const live = run(900, 2, { dispatchId: dispatch.dispatchId, attempt: dispatch.attempt });
  return { world: { ...first.world, runs: [live] }, state: first.state };
}

/** The body with one session box ticked, last edited by `editor`. */
function tick(w: WorldSnapshot, box: "pause" | "resume" | "stop", editor: string): WorldSnapshot {
  const body = w.trackingIssue!.body;
  const unticked = `- [ ] <!-- autopilot:session-${box} -->`;
  expect(body).toContain(unticked);
  return {
    ...w,
    trackingIssue: {
      ...w.trackingIssue!,
      body: body.replace(unticked, `- [x] <!-- autopilot:session-${box} -->`),
      lastEditedBy: editor,
    },
  };
}

describe("the dashboard's session boxes", () => {
  it("a running session shows pause and stop; a writer's tick pauses it, and the rewrite unticks the box", () => {
    const { world: w, state } = running();
    expect(w.trackingIssue!.body).not.toContain("autopilot:session-resume");
    const d = decide({ ...input(tick(w, "pause", "dev"), { now: minutes(3) }), state });
    expect(d.state.session).toMatchObject({ status: "pausing", reason: "user_pause", actor: "dev" });
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(parseDashboard(body).sessionBoxes).toEqual([]);
    // Pausing: resume (to cancel) and stop are offered.
    expect(body).toContain("- [ ] <!-- autopilot:session-resume --> **resume**: cancel the pause");
    expect(body).toContain("- [ ] <!-- autopilot:session-stop -->");
  });

  it("resume and stop act like their commands", () => {
    const { world: w, state } = running();
    const paused = step(tick(w, "pause", "dev"), state, { now: minutes(3) });
    const resumed = step(tick(paused.world, "resume", "lead"), paused.state, { now: minutes(4) });
    expect(resumed.state.session).toMatchObject({ status: "running", actor: "lead" });
    const stopped = step(tick(resumed.world, "stop", "dev"), resumed.state, { now: minutes(5) });
    expect(stopped.state.session).toMatchObject({ status: "stopping", reason: "user_stop" });
    expect(only(stopped.decision.effects, "dispatchWorker")).toEqual([]);
  });

  it("a tick by someone without write access, or by the bot, changes nothing and is said on the dashboard", () => {
    const { world: w, state } = running();
    for (const editor of ["triager", w.botLogin]) {
      const d = decide({ ...input(tick(w, "stop", editor), { now: minutes(3) }), state });
      expect(d.state.session.status).toBe("running");
      expect(d.state.incidents.at(-1)).toMatchObject({ kind: "checkbox_refused" });
      expect(parseDashboard(only(d.effects, "writeTrackingIssue")[0]!.body).sessionBoxes).toEqual([]);
    }
  });
});
