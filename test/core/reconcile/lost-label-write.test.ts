/**
 * A handled worker outcome whose label write was lost (a write queued by the circuit, dropped when the Actions
 * job ended), or half done (the new label added, in-progress not removed, a 5xx between the two): the task must
 * not stay labeled in progress with no run. Found by the seeded simulation in Actions mode (seed 23: a
 * rate-limited run, its move back to ready refused with a 502; seed 15: a failed run left with both labels).
 */
import { describe, expect, it } from "vitest";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { applyEffects, input, issue, minutes, only, result, step, world } from "../world.js";

describe("a lost label write of a handled outcome", () => {
  it("is written again once the settle window is over, and the task goes on", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [
        result(1, { result: "rate_limited", resumeAt: minutes(40).toISOString(), prNumber: undefined }),
      ],
    });
    const d1 = decide(input(w, { now: minutes(30) }));
    expect(only(d1.effects, "setStateLabel")[0]).toMatchObject({ issue: 1, add: "autopilot:ready" });
    // The dashboard is written; the label move is lost.
    const w2 = applyEffects(
      w,
      d1.effects.filter((e) => e.type !== "setStateLabel"),
      minutes(30),
    );
    expect(w2.issues.find((i) => i.number === 1)!.labels).toEqual(["autopilot:in-progress"]);
    const d2 = decide({
      ...input(w2),
      state: parseDashboard(w2.trackingIssue!.body).state,
      now: minutes(120),
    });
    expect(only(d2.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
  });

  it("is left alone while the read may still be stale (the record is believed then)", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "blocked", reason: "why", prNumber: undefined })],
    });
    const d1 = decide(input(w, { now: minutes(30) }));
    const w2 = applyEffects(
      w,
      d1.effects.filter((e) => e.type !== "setStateLabel"),
      minutes(30),
    );
    const d2 = decide({
      ...input(w2),
      state: parseDashboard(w2.trackingIssue!.body).state,
      now: minutes(31),
    });
    expect(only(d2.effects, "setStateLabel")).toEqual([]);
    expect(only(d2.effects, "dispatchWorker")).toEqual([]);
  });

  it("takes in-progress off a task left with it beside the label its outcome set", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "budget_exceeded", reason: "why", prNumber: undefined })],
    });
    const d1 = decide(input(w, { now: minutes(30) }));
    expect(only(d1.effects, "setStateLabel")[0]).toMatchObject({ issue: 1, add: "autopilot:failed" });
    // The label was added; the removal of in-progress never happened.
    const w2 = applyEffects(
      w,
      d1.effects.filter((e) => e.type !== "setStateLabel"),
      minutes(30),
    );
    const half = {
      ...w2,
      issues: w2.issues.map((i) =>
        i.number === 1 ? { ...i, labels: ["autopilot:in-progress", "autopilot:failed"] } : i,
      ),
    };
    const d2 = decide({
      ...input(half),
      state: parseDashboard(half.trackingIssue!.body).state,
      now: minutes(120),
    });
    expect(only(d2.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:failed",
        remove: expect.arrayContaining(["autopilot:in-progress"]),
      }),
    ]);
    expect(only(d2.effects, "dispatchWorker")).toEqual([]);
  });

  it("takes in-progress off a task taken out whose label removal was lost", () => {
    // Found by the seeded simulation (seed 332, Actions): a failed run's move back to ready and then the take-out
    // of a task whose text a non-writer changed were both queued by a 502 and lost with the job.
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "blocked", reason: "why", prNumber: undefined })],
    });
    const d1 = decide(input(w, { now: minutes(30) }));
    const w2 = applyEffects(
      w,
      d1.effects.filter((e) => e.type !== "setStateLabel"),
      minutes(30),
    );
    const state = parseDashboard(w2.trackingIssue!.body).state!;
    // The state records the take-out (src/core/reconcile/text-approval.ts): labels cleared.
    state.tasks[1]!.label = "none";
    const d2 = decide({ ...input(w2), state, now: minutes(120) });
    expect(only(d2.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: null,
        remove: expect.arrayContaining(["autopilot:in-progress"]),
      }),
    ]);
    expect(only(d2.effects, "dispatchWorker")).toEqual([]);
  });

  it("takes in-progress off a half-done move whose state was not written either", () => {
    // Found by the seeded simulation (seed 976, Actions): a budget-exceeded run's move to failed added the label,
    // a 502 came before in-progress was removed, and the state recording the outcome was not written; the next
    // reconcile read the task as failed and left its labels alone, in progress with no run for ever.
    const first = step(world({ issues: [issue(1)] }), null);
    const sent = only(first.decision.effects, "dispatchWorker")[0]!;
    const w = {
      ...first.world,
      issues: [issue(1, { labels: ["autopilot:in-progress", "autopilot:failed"] })],
      workerResults: [
        result(1, {
          result: "budget_exceeded",
          reason: "why",
          prNumber: undefined,
          dispatchId: sent.dispatchId,
          attempt: sent.attempt,
        }),
      ],
    };
    // The state is the dispatch's: the one recording the outcome was never written.
    const d = decide({ ...input(w), state: first.state, now: minutes(120) });
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:failed",
        remove: expect.arrayContaining(["autopilot:in-progress"]),
      }),
    ]);
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });
});
