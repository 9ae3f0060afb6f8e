import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { input, issue, minutes, only, step, world } from "../world.js";

describe("a secondary rate limit holding Autopilot's writes back", () => {
  it("is said on the dashboard while it lasts, and the line goes once it has lifted", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    const waiting = decide({
      ...input(first.world),
      state: first.state,
      now: minutes(1),
      githubLimitWait: { since: minutes(0.5), until: minutes(1.5) },
    });
    const body = only(waiting.effects, "writeTrackingIssue")[0]?.body ?? "";
    expect(body).toMatch(/Waiting for GitHub's secondary rate limit \(content creation\)/);
    expect(body).toMatch(/writes to this repository pause and go out once it lifts, none twice/);

    const lifted = decide({ ...input(first.world), state: first.state, now: minutes(3) });
    const after =
      only(lifted.effects, "writeTrackingIssue")[0]?.body ?? first.world.trackingIssue?.body ?? "";
    expect(after).not.toMatch(/secondary rate limit/);
  });
});
