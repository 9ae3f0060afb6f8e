/**
 * A writer's `/autopilot fix` read by a worker run's own last step (ending-run.ts) before that run's finished
 * result shows: the run counts as ended, yet its outcome is not handled. Sent back then, the fix was undone a
 * round later when the late result moved the task to review, and the PR waited on its reviewers for ever
 * (follow-ups@actions, seen in CI).
 */
import { describe, expect, it } from "vitest";
import { withRunEnded } from "../../../src/core/reconcile/runs/ending-run.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import { check, comment, issue, minutes, only, pull, result, run, step, world } from "../world.js";

const tracking = { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" as const };

/**
 * Task #7's worker ended: it pushed, opened PR #107 and moved the task to review, and its last step reconciles
 * while its finished result does not show yet. `pr` is what the PR shows; `comments`, what was said.
 */
function endedBeforeItsResult(pr: ReturnType<typeof pull>, comments: ReturnType<typeof comment>[]) {
  const first = step(world({ issues: [issue(7)], trackingIssue: tracking }), null);
  const dispatched = only(first.decision.effects, "dispatchWorker")[0]!;
  const ids = { dispatchId: dispatched.dispatchId, attempt: dispatched.attempt };
  const ending: WorldSnapshot = withRunEnded(
    {
      ...first.world,
      issues: first.world.issues.map((i) => (i.number === 7 ? { ...i, labels: ["autopilot:review"] } : i)),
      runs: [run(900, 7, ids)],
      workerResults: [result(7, { ...ids, status: "running", updatedAt: minutes(29).toISOString() })],
      pulls: [pr],
      comments,
    },
    900,
    minutes(30),
  );
  return { first, ids, ending };
}

/** A task's worker ending (its last step's two rounds) with a writer's fix on its PR, and `also` said too. */
function endingWithFix(also: ReturnType<typeof comment>[] = []) {
  const { first, ids, ending } = endedBeforeItsResult(pull(7), [
    ...also,
    comment(700, 107, "dev", "/autopilot fix name it orders_idx"),
  ]);
  const round1 = step(ending, first.state, { now: minutes(30) });
  // The next round shows the finished result.
  const round2 = step(
    {
      ...round1.world,
      comments: round1.world.comments.map((c) => ({ ...c, acknowledged: true })),
      workerResults: [result(7, { ...ids, updatedAt: minutes(30).toISOString() })],
    },
    round1.state,
    { now: minutes(30.1) },
  );
  return { ids, round1, round2 };
}

describe("/autopilot fix as the worker's run ends", () => {
  it("is carried out once the run's outcome is handled, even when its result shows a round late", () => {
    const { ids, round1, round2 } = endingWithFix();
    const dispatches = [round1, round2].flatMap((r) => only(r.decision.effects, "dispatchWorker"));
    expect(dispatches).toEqual([expect.objectContaining({ issue: 7, attempt: ids.attempt + 1 })]);
    expect(round2.state.tasks[7]?.fixAsked).toBeUndefined();
    // Nothing merged on the head the fix was asked about, before the worker's outcome was read either.
    expect([round1, round2].flatMap((r) => only(r.decision.effects, "mergePr"))).toEqual([]);
  });

  it("is not undone by the late result when no worker can start yet (a paused session)", () => {
    const { round1, round2 } = endingWithFix([comment(699, 50, "dev", "/autopilot pause")]);
    expect([round1, round2].flatMap((r) => only(r.decision.effects, "dispatchWorker"))).toEqual([]);
    // The PR goes back to a worker once one may start: the task waits in the queue (or keeps the request).
    const record = round2.state.tasks[7];
    expect(record?.label === "ready" || record?.fixAsked !== undefined).toBe(true);
    // Resumed: the fix goes out.
    const resumed = step(
      {
        ...round2.world,
        comments: [comment(701, 50, "dev", "/autopilot resume")],
      },
      round2.state,
      { now: minutes(31) },
    );
    expect(only(resumed.decision.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 7 })]);
  });
});

describe("a task in review whose run ended before its result shows", () => {
  it("is not sent back on failing checks until the run's outcome is handled, and is then", () => {
    const { first, ids, ending } = endedBeforeItsResult(pull(7, { checks: [check("test", "failure")] }), []);
    const round1 = step(ending, first.state, { now: minutes(30) });
    expect(only(round1.decision.effects, "dispatchWorker")).toEqual([]);
    expect(only(round1.decision.effects, "setStateLabel")).toEqual([]);
    const round2 = step(
      { ...round1.world, workerResults: [result(7, { ...ids, updatedAt: minutes(30).toISOString() })] },
      round1.state,
      { now: minutes(30.1) },
    );
    // The outcome handled, the failing checks send the PR back to a worker: a new attempt of the same task.
    expect(only(round2.decision.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 7, attempt: ids.attempt + 1 }),
    ]);
  });
});
