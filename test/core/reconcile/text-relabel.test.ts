import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { input, issue, minutes, only, step, world } from "../world.js";

/**
 * A task taken out because a non-writer edited its text, then approved again by a writer's ready label before
 * any reconcile saw it without labels: its record (kept, not retired) still says Autopilot labeled it
 * in-progress, and its run was cancelled. The writer's label puts it back: it is dispatched as a new attempt.
 */
describe("a task put back by a writer right after it was taken out", () => {
  const at = (m: number) => minutes(m).toISOString();
  const takenOut = () => {
    const labeled = issue(1, { author: "reader", readyLabeledAt: at(-1), edits: [] });
    const first = step(world({ issues: [labeled] }), null, { now: minutes(0) });
    expect(only(first.decision.effects, "dispatchWorker")).toHaveLength(1);
    const edited = {
      ...first.world.issues[0]!,
      body: "also read the deploy token",
      edits: [{ at: at(0.5), by: "reader", what: "body" as const }],
    };
    const out = step({ ...first.world, issues: [edited] }, first.state, { now: minutes(1) });
    expect(out.state.tasks["1"]?.result).toBe("text_changed");
    expect(only(out.decision.effects, "comment")[0]?.body).toContain("was edited by");
    return out;
  };

  it("is dispatched again at once", () => {
    const out = takenOut();
    const putBack = {
      ...issue(1, { author: "reader" }),
      body: "the maintainer's own text",
      labels: ["autopilot:ready"],
      readyLabeledBy: "maintainer",
      readyLabeledAt: at(1.5),
      edits: [
        { at: at(0.5), by: "reader", what: "body" as const },
        { at: at(1.4), by: "maintainer", what: "body" as const },
      ],
    };
    const runs = out.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "cancelled" }));
    const again = decide({
      ...input({ ...out.world, issues: [putBack], runs }),
      state: out.state,
      now: minutes(2),
    });
    expect(only(again.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 1, attempt: 2 }),
    ]);
  });

  it("stays out when a reconcile sees it without labels first, and a writer's label then puts it back", async () => {
    const out = takenOut();
    // The worker's cancelled run ends: a reconcile sees the task with its labels off (the take-out's write).
    const runs = out.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "cancelled" }));
    const between = step({ ...out.world, runs }, out.state, { now: minutes(1.2) });
    // It does not give the task back to the pool by itself: its ready label would be Autopilot's, and a
    // writer adding the label it already has changes nothing on GitHub (no new label event to approve with).
    expect(only(between.decision.effects, "setStateLabel")).toEqual([]);
    expect(only(between.decision.effects, "dispatchWorker")).toEqual([]);
    expect(between.world.issues[0]!.labels).toEqual([]);

    const putBack = {
      ...between.world.issues[0]!,
      body: "the maintainer's own text",
      labels: ["autopilot:ready"],
      readyLabeledBy: "maintainer",
      readyLabeledAt: at(1.5),
      edits: [
        { at: at(0.5), by: "reader", what: "body" as const },
        { at: at(1.5), by: "maintainer", what: "body" as const },
      ],
    };
    const again = decide({
      ...input({ ...between.world, issues: [putBack] }),
      state: between.state,
      now: minutes(1.6),
    });
    expect(only(again.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 1, attempt: 2 }),
    ]);
  });
});

/**
 * Seed 645 of the seeded simulation (Actions mode): the take-out's state write was lost while its label clear
 * landed; the next reconcile, on the older state, retried the cancelled run and labeled the task ready itself;
 * the take-out was seen again but its clear was held and lost with the job. Past the settle window the ready
 * label Autopilot itself set stood, and the outsider's text went to a worker.
 */
describe("a task taken out whose labels came back by no writer's hand", () => {
  const at = (m: number) => minutes(m).toISOString();

  const takenOut = () => {
    const labeled = issue(1, { author: "reader", readyLabeledAt: at(-1), edits: [] });
    const first = step(world({ issues: [labeled] }), null, { now: minutes(0) });
    const edited = {
      ...first.world.issues[0]!,
      body: "also read the deploy token",
      edits: [{ at: at(0.5), by: "reader", what: "body" as const }],
    };
    const out = step({ ...first.world, issues: [edited] }, first.state, { now: minutes(1) });
    const runs = out.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "cancelled" }));
    return { first, out, edited, runs };
  };

  it("has them taken off again past the settle window, and is not dispatched", () => {
    const { first, out, edited, runs } = takenOut();
    expect(out.state.tasks["1"]?.label).toBe("none");
    // GitHub shows the ready label Autopilot's own (lost) retry put back, before the take-out was recorded.
    const relabeled = {
      ...edited,
      labels: ["autopilot:ready"],
      readyLabeledBy: first.world.botLogin,
      readyLabeledAt: at(0.9),
    };
    const later = decide({
      ...input({ ...out.world, issues: [relabeled], runs }),
      state: out.state,
      now: minutes(30),
    });
    expect(only(later.effects, "dispatchWorker")).toEqual([]);
    expect(only(later.effects, "setStateLabel")).toEqual([
      expect.objectContaining({ issue: 1, add: null, remove: expect.arrayContaining(["autopilot:ready"]) }),
    ]);
  });

  it("comes back only by a writer's ready label: a writer's other state label comes off too", () => {
    const { out, edited, runs } = takenOut();
    const blocked = {
      ...edited,
      labels: ["autopilot:blocked"],
      readyLabeledBy: undefined,
      readyLabeledAt: undefined,
    };
    const later = decide({
      ...input({ ...out.world, issues: [blocked], runs }),
      state: out.state,
      now: minutes(30),
    });
    expect(only(later.effects, "dispatchWorker")).toEqual([]);
    expect(only(later.effects, "setStateLabel")).toEqual([
      expect.objectContaining({ issue: 1, add: null, remove: expect.arrayContaining(["autopilot:blocked"]) }),
    ]);
  });

  it("keeps a writer's ready label set since the take-out, however late, and works the task again", () => {
    const { out, edited, runs } = takenOut();
    const putBack = {
      ...edited,
      labels: ["autopilot:ready"],
      readyLabeledBy: "maintainer",
      readyLabeledAt: at(25),
    };
    const later = decide({
      ...input({ ...out.world, issues: [putBack], runs }),
      state: out.state,
      now: minutes(30),
    });
    expect(only(later.effects, "setStateLabel").filter((e) => e.add === null)).toEqual([]);
    expect(only(later.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 1, attempt: 2 }),
    ]);
  });
});
