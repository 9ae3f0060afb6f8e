import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { endingResultShown, withRunEnded } from "../../../src/core/reconcile/runs/ending-run.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import { config, input, issue, minutes, only, result, run, step, world } from "../world.js";

describe("the reconcile a worker run does as its last step (ending-run)", () => {
  it("sees that run as ended, so its slot goes to the next task in the same reconcile", () => {
    // One slot: #1's worker finished (its result is written) and its run is still in progress.
    const first = step(world({ issues: [issue(1), issue(2)] }), null, { config: config({ maxParallel: 1 }) });
    expect(only(first.decision.effects, "dispatchWorker").map((e) => e.issue)).toEqual([1]);
    const finished = {
      ...first.world,
      runs: [run(900, 1, { dispatchId: "1-1-seed" })],
      workerResults: [result(1, { dispatchId: "1-1-seed", updatedAt: minutes(5).toISOString() })],
    };
    const from = (snapshot: WorldSnapshot) =>
      decide({
        ...input(snapshot, { config: config({ maxParallel: 1 }) }),
        state: first.state,
        now: minutes(6),
      });

    // As the controller workflow sees it while the run is still in progress: the slot is taken.
    expect(only(from(finished).effects, "dispatchWorker")).toEqual([]);
    // As the run's own last step sees it: ended, and #2 goes out now.
    const ended = from(withRunEnded(finished, 900, minutes(6)));
    expect(only(ended.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
    // And #1's outcome is handled in the same reconcile.
    expect(ended.state.tasks["1"]?.handled).toBe("1-1-seed");
  });

  it("changes nothing when that run is not in the snapshot or already completed", () => {
    const w = world({ runs: [run(900, 1, { status: "completed", conclusion: "failure" })] });
    expect(withRunEnded(w, 900, minutes(1))).toBe(w);
    expect(withRunEnded(w, 901, minutes(1))).toBe(w);
  });

  it("knows whether the snapshot shows that run's finished result yet (a read right after its write may not)", () => {
    const ending = run(900, 1, { dispatchId: "1-1-seed" });
    const shown = world({ runs: [ending], workerResults: [result(1, { dispatchId: "1-1-seed" })] });
    expect(endingResultShown(shown, 900)).toBe(true);
    // Only a running result, another dispatch's finished one, or none at all: not yet.
    expect(
      endingResultShown(
        { ...shown, workerResults: [result(1, { dispatchId: "1-1-seed", status: "running" })] },
        900,
      ),
    ).toBe(false);
    expect(
      endingResultShown({ ...shown, workerResults: [result(1, { dispatchId: "1-1-older" })] }, 900),
    ).toBe(false);
    expect(endingResultShown({ ...shown, workerResults: [] }, 900)).toBe(false);
    // The run itself not listed yet: not yet either; a run started by hand without a dispatch id: nothing to wait for.
    expect(endingResultShown({ ...shown, runs: [] }, 900)).toBe(false);
    expect(endingResultShown(world({ runs: [run(901, 1, { dispatchId: null })] }), 901)).toBe(true);
  });
});
