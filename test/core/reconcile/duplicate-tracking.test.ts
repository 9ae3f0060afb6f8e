/**
 * A younger open tracking issue beside the one in use: a controller's create went through, then its check for an
 * older issue failed (a 5xx), so the create looked undone and nobody closed it. Found by the seeded simulation
 * (seed 99 in Actions mode, seed 76 in both modes: sandbox/simulation/fixed/tracking-create-check-failed.yml).
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { input, minutes, only, world } from "../world.js";

const TRACKING = { number: 3, body: "", updatedAt: minutes(0).toISOString(), state: "open" as const };

describe("a duplicate tracking issue", () => {
  it("is closed as not planned, with a pointer to the tracking issue", () => {
    const d = decide(input(world({ trackingIssue: TRACKING, duplicateTrackingIssues: [4] })));
    expect(only(d.effects, "closeIssue")).toEqual([{ type: "closeIssue", issue: 4, reason: "not_planned" }]);
    expect(only(d.effects, "comment").find((c) => c.issue === 4)?.body).toContain(
      "#3 is Autopilot's tracking issue",
    );
  });

  it("is not looked for when there is none", () => {
    const d = decide(input(world({ trackingIssue: TRACKING })));
    expect(only(d.effects, "closeIssue")).toEqual([]);
  });
});
