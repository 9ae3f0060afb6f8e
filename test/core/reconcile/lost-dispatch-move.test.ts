/**
 * Label moves of Autopilot's own lost or half done around a run's dispatch and end: a write held by GitHub's
 * secondary rate limit (or refused with a 502) is dropped when the Actions job holding it ends. Whatever was
 * lost, a later reconcile must leave the task with one state label and no in-progress without a run. Found by
 * the seeded simulation in Actions mode: seeds 540 and 742 (a move to in-progress half done and its dispatch
 * lost), 319 and 635 (a failed task's move to failed lost or half done, the task later put back in the queue or
 * left in progress).
 */
import { describe, expect, it } from "vitest";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { applyEffects, config, input, issue, minutes, only, run, step, world } from "../world.js";

/** Attempt 1 of #1 recorded and dispatched at T0; the state it leaves, and the world with no run of it (yet). */
function dispatched(extra: Parameters<typeof step>[2] = {}) {
  const first = step(world({ issues: [issue(1)] }), null, extra);
  const sent = only(first.decision.effects, "dispatchWorker")[0]!;
  return { ...first, world: { ...first.world, runs: [] }, sent };
}

describe("a move to in-progress half done, its dispatch never run", () => {
  it("gives the task back to the pool after the dispatch's grace, its old label off", () => {
    // Seed 742: the task was needs-human (its plan waiting), then approved and dispatched; in-progress was added,
    // needs-human never removed, and the dispatch (and its one re-send) lost.
    const { world: w, state } = dispatched();
    const half = {
      ...w,
      issues: [issue(1, { labels: ["autopilot:needs-human", "autopilot:in-progress"] })],
    };
    const d = decide({ ...input(half), state, now: minutes(30) });
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:ready",
        remove: expect.arrayContaining(["autopilot:in-progress", "autopilot:needs-human"]),
      }),
    ]);
    const record = parseDashboard(only(d.effects, "writeTrackingIssue")[0]!.body).state!.tasks[1]!;
    expect(record).toMatchObject({ result: "lost", retries: 1 });
  });

  it("is repaired in a paused session too, and nothing is dispatched", () => {
    // Seed 540: a send-back from review and its dispatch held, then the session paused by a writer.
    const { world: w, state } = dispatched();
    state!.session = { ...state!.session, status: "paused", reason: "user_pause", actor: "dev" };
    const half = {
      ...w,
      issues: [issue(1, { labels: ["autopilot:review", "autopilot:in-progress"] })],
    };
    const d = decide({ ...input(half), state, now: minutes(30) });
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:ready",
        remove: expect.arrayContaining(["autopilot:in-progress", "autopilot:review"]),
      }),
    ]);
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });

  it("leaves a writer's skip alone", () => {
    const { world: w, state } = dispatched();
    const skipped = {
      ...w,
      issues: [issue(1, { labels: ["autopilot:exclude", "autopilot:in-progress"] })],
    };
    const d = decide({ ...input(skipped), state, now: minutes(30) });
    expect(only(d.effects, "setStateLabel")).toEqual([]);
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });
});

describe("a failed run's move to failed lost", () => {
  /** Attempt 1 ended without a result and no retries are left: the reconcile moves #1 to failed. */
  function failedForGood() {
    const settings = { config: config({ maxRetries: 0 }) };
    const { world: w, state, sent } = dispatched(settings);
    const ended = {
      ...w,
      runs: [
        run(7, 1, {
          status: "completed",
          conclusion: "failure",
          dispatchId: sent.dispatchId,
          attempt: sent.attempt,
          updatedAt: minutes(20).toISOString(),
        }),
      ],
    };
    const d = decide({ ...input(ended, settings), state, now: minutes(30) });
    expect(only(d.effects, "setStateLabel")[0]).toMatchObject({ issue: 1, add: "autopilot:failed" });
    // The dashboard is written; the label move is lost.
    const after = applyEffects(
      ended,
      d.effects.filter((e) => e.type !== "setStateLabel"),
      minutes(30),
    );
    return { after, settings, state: parseDashboard(after.trackingIssue!.body).state };
  }

  it("is written again past the settle window: the task is not put back in the queue past its retries", () => {
    // Seed 319: the move to failed met a 502 and went with the job; the next reconcile found the task in
    // progress with no run and gave it back to ready.
    const { after, settings, state } = failedForGood();
    expect(after.issues[0]!.labels).toEqual(["autopilot:in-progress"]);
    const d = decide({ ...input(after, settings), state, now: minutes(60) });
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:failed",
        remove: expect.arrayContaining(["autopilot:in-progress"]),
      }),
    ]);
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });

  it("takes in-progress off when the move was half done (failed added, in-progress left)", () => {
    // Seed 635: the labels read failed and in-progress; failed is what the task shows, so nothing took
    // in-progress off.
    const { after, settings, state } = failedForGood();
    const half = {
      ...after,
      issues: [issue(1, { labels: ["autopilot:in-progress", "autopilot:failed"] })],
    };
    expect(decide({ ...input(half, settings), state, now: minutes(35) }).effects).not.toContainEqual(
      expect.objectContaining({ type: "setStateLabel" }),
    );
    const d = decide({ ...input(half, settings), state, now: minutes(60) });
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({
        issue: 1,
        add: "autopilot:failed",
        remove: expect.arrayContaining(["autopilot:in-progress"]),
      }),
    ]);
  });

  it("lets a writer's ready label set since stand: a writer's word to try again", () => {
    const { after, settings, state } = failedForGood();
    const readied = {
      ...after,
      issues: [
        issue(1, {
          labels: ["autopilot:in-progress", "autopilot:ready"],
          readyLabeledBy: "dev",
          readyLabeledAt: minutes(45).toISOString(),
        }),
      ],
    };
    const d = decide({ ...input(readied, settings), state, now: minutes(60) });
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
  });
});
