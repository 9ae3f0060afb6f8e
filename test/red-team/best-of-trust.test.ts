/**
 * Attacks on best of N (src/core/reconcile/runs/best-of.ts): a round asked for by someone without write access
 * (it multiplies what a task spends), and a pull request on a branch named like a candidate's passed off as
 * that candidate's evidence.
 */
import { describe, expect, it } from "vitest";
import { trustedOpenPulls } from "../../src/core/gates/pull-trust.js";
import { issue, minutes, only, step, world } from "../core/world.js";
import { bestOf, bothEnded, candidateOf, diff, LABELED } from "../helpers/best-of-round.js";

describe("best of N against people without write access", () => {
  it("takes the label only from a writer: a round multiplies what the task spends", () => {
    for (const by of ["reader", null]) {
      const labeled = step(
        world({ issues: [issue(7, { labels: [...LABELED], bestOfLabeledBy: by })] }),
        null,
        {
          config: bestOf(),
        },
      );
      expect(only(labeled.decision.effects, "dispatchWorker")).toHaveLength(1);
      expect(candidateOf(labeled.decision.effects)).toBeUndefined();
      expect(labeled.state.tasks[7]?.bestOf).toBeUndefined();
    }
  });

  it("takes no pull request as a candidate's evidence unless Autopilot opened it from this repository", () => {
    // The attack: someone opens a tiny PR on a branch named like candidate 2's while candidate 2 failed.
    const ended = bothEnded(bestOf(), { two: { authorId: 999, author: "mallory" } }, { two: "complete" });
    const chose = step({ ...ended.world, pullDiffs: [diff(1, 40), diff(2, 1)] }, ended.state, {
      now: minutes(10),
      config: ended.cfg,
    });
    expect(chose.state.tasks[7]?.bestOf?.winner).toBe(1);
    expect(only(chose.decision.effects, "promoteCandidate")[0]?.sha).toBe("cand1");
    // Its diff is not even read: only Autopilot's own candidates' are (src/github/pull-verification.ts).
    expect(trustedOpenPulls(ended.world, "autopilot/").map((t) => [t.pull.number, t.candidate])).toEqual([
      [201, 1],
    ]);
  });
});
