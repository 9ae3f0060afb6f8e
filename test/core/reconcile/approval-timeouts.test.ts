/**
 * An approval that waits past `alerts.approvalTimeoutHours` (design document 003's gate request with a timeout;
 * src/core/reconcile/approval-timeouts.ts): the human gate's approval of a pull request and a proposed plan are
 * reported as timed out and handed to a person — one alert, and a dashboard line that says so.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import type { Effect } from "../../../src/core/effects.js";
import { planDigest } from "../../../src/core/tasks/task-plan.js";
import { config, issue, minutes, only, pull, result, review, run, step, world } from "../world.js";

const timeoutAlerts = (effects: readonly Effect[]) =>
  only(effects, "comment").filter((c) => c.key?.startsWith("alert-approval-timeout-"));
const dashboard = (effects: readonly Effect[]) => only(effects, "writeTrackingIssue")[0]?.body ?? "";

describe("the human gate's approval", () => {
  /** #7 in review since minute 21, its PR held by the human gate. */
  function waitingForGate(cfg = config()) {
    const first = step(world({ issues: [issue(7, { readyLabeledBy: "dev" })] }), null, { config: cfg });
    const w = first.world;
    w.runs = [run(90, 7, { status: "completed", conclusion: "success", dispatchId: "7-1-seed" })];
    w.workerResults = [
      result(7, {
        result: "complete",
        humanGate: {
          fired: true,
          rules: [{ rule: "migrations", where: "path", match: "db/x.sql", neverAutoApprove: false }],
        },
      }),
    ];
    w.pulls = [pull(7, { reviews: [review("lead", "COMMENTED", "sha7a")] })];
    return step(w, first.state, { now: minutes(21), config: cfg });
  }

  it("times out once after alerts.approvalTimeoutHours: one alert to the approver and reviewers, a dashboard line", () => {
    const cfg = config({
      alerts: { ...DEFAULT_CONFIG.alerts, reviewReminderHours: null, approvalTimeoutHours: 2 },
    });
    const inReview = waitingForGate(cfg);
    const early = step(inReview.world, inReview.state, { now: minutes(100), config: cfg });
    expect(timeoutAlerts(early.decision.effects)).toEqual([]);
    expect(dashboard(early.decision.effects)).not.toMatch(/approval timed out/);

    const late = step(early.world, early.state, { now: minutes(150), config: cfg });
    const [alert, ...more] = timeoutAlerts(late.decision.effects);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ issue: 7, key: "alert-approval-timeout-pr-107" });
    expect(alert!.body).toMatch(/human gate's approval of PR #107 \(#7\) timed out/);
    expect(alert!.body).toMatch(/@dev @lead: this needs a person/);
    expect(late.decision.alerts?.map((a) => a.kind)).toEqual(["approval-timeout"]);
    expect(dashboard(late.decision.effects)).toMatch(
      // The dashboard names them without a mention (a joiner after `@`): the alert is what pings.
      /approval timed out \(waiting since .*\), handed to @\u200ddev, @\u200dlead/,
    );
    // Nothing merges on anyone's behalf.
    expect(only(late.decision.effects, "mergePr")).toEqual([]);

    const later = step(late.world, late.state, { now: minutes(400), config: cfg });
    expect(timeoutAlerts(later.decision.effects)).toEqual([]);
  });

  it("never, with approvalTimeoutHours: null", () => {
    const cfg = config({ alerts: { ...DEFAULT_CONFIG.alerts, approvalTimeoutHours: null } });
    const inReview = waitingForGate(cfg);
    const late = step(inReview.world, inReview.state, { now: minutes(60 * 24 * 30), config: cfg });
    expect(timeoutAlerts(late.decision.effects)).toEqual([]);
  });
});

describe("a proposed plan's approval", () => {
  const DIGEST = planDigest("1. Add greet() in src/greet.js.");
  const cfg = config({
    planGate: { ...DEFAULT_CONFIG.planGate, enabled: true },
    alerts: { ...DEFAULT_CONFIG.alerts, approvalTimeoutHours: 1 },
  });

  it("times out once after alerts.approvalTimeoutHours; the Needs-a-human line says whom it went to", () => {
    const first = step(world({ issues: [issue(7, { readyLabeledBy: "dev" })] }), null, { config: cfg });
    const planned = {
      ...first.world,
      issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human"] })),
      runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
      workerResults: [
        result(7, { result: "needs_human", reason: "plan proposed", plan: { digest: DIGEST } }),
      ],
    };
    const waiting = step(planned, first.state, { now: minutes(4), config: cfg });
    expect(timeoutAlerts(waiting.decision.effects)).toEqual([]);

    const late = step(waiting.world, waiting.state, { now: minutes(90), config: cfg });
    const [alert, ...more] = timeoutAlerts(late.decision.effects);
    expect(more).toEqual([]);
    expect(alert?.body).toMatch(/approval of #7's plan timed out/);
    expect(alert?.body).toMatch(/@dev: this needs a person/);
    expect(dashboard(late.decision.effects)).toMatch(
      /plan proposed: approval timed out .*handed to @\u200ddev/,
    );

    const later = step(late.world, late.state, { now: minutes(200), config: cfg });
    expect(timeoutAlerts(later.decision.effects)).toEqual([]);
    expect(later.state.tasks[7]?.label).toBe("needs-human");
  });
});
