import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { repoActivity } from "../../../src/core/scheduling/repo-activity.js";
import { issue, run, world } from "../world.js";

const labels = DEFAULT_CONFIG.labels;
const quiet = { effects: [] };
/** A running session of `mode: auto`: Autopilot starts ready tasks by itself. */
const auto = { session: "running", mode: "auto" } as const;

describe("repoActivity", () => {
  it("is idle with no task moving, no run and nothing done, even with a tracking issue", () => {
    const snapshot = world({
      issues: [
        issue(1, { labels: ["autopilot:needs-human"] }),
        issue(2, { labels: [] }),
        issue(3, { state: "closed" }),
      ],
      runs: [run(7, 1, { status: "completed", conclusion: "success" })],
      trackingIssue: { number: 9, body: "", updatedAt: "2026-11-27T00:00:00Z", state: "open" },
    });
    expect(repoActivity({ snapshot, decision: quiet, labels, ...auto })).toEqual({ kind: "idle" });
    // Idle with a step only time brings (a branch the stale-branch sweep deletes later): it says when.
    const later = { effects: [], wakeAtMs: 1_800_000_000_000 };
    expect(repoActivity({ snapshot, decision: later, labels, ...auto })).toEqual({
      kind: "idle",
      wakeAtMs: 1_800_000_000_000,
    });
  });

  it("is active with a ready, in-progress or review task", () => {
    for (const label of ["autopilot:ready", "autopilot:in-progress", "autopilot:review"]) {
      const snapshot = world({ issues: [issue(4, { labels: [label] })] });
      expect(repoActivity({ snapshot, decision: quiet, labels, ...auto }).kind, label).toBe("active");
    }
  });

  it("is idle when the moving label is on an excluded issue or a pull request", () => {
    const snapshot = world({
      issues: [
        issue(4, { labels: ["autopilot:ready", "autopilot:exclude"] }),
        issue(5, { labels: ["autopilot:ready"], isPullRequest: true }),
      ],
    });
    expect(repoActivity({ snapshot, decision: quiet, labels, ...auto }).kind).toBe("idle");
  });

  it("is active while a worker run has not completed, and after a reconcile that acted", () => {
    expect(
      repoActivity({
        snapshot: world({ runs: [run(7, 1, { status: "queued" })] }),
        decision: quiet,
        labels,
        ...auto,
      }),
    ).toEqual({
      kind: "active",
      reason: "worker run 7 is queued",
    });
    const acted = { effects: [{ type: "pinIssue" as const, issue: 0 }] };
    expect(repoActivity({ snapshot: world(), decision: acted, labels, ...auto }).kind).toBe("active");
  });

  it("is idle with ready tasks that only a person starts: paused, stopped, not auto-started, semi-auto", () => {
    const snapshot = world({ issues: [issue(4, { labels: ["autopilot:ready"] })] });
    const waits = [
      { session: "paused", mode: "auto" },
      { session: "idle", mode: "auto" },
      { session: "completed", mode: "auto" },
      { session: "running", mode: "semi-auto" },
      { session: "paused", mode: "semi-auto" },
    ] as const;
    for (const on of waits)
      expect(repoActivity({ snapshot, decision: quiet, labels, ...on }), JSON.stringify(on)).toEqual({
        kind: "idle",
      });
  });

  it("is active while paused or semi-auto with a task in progress or in review: those move with time", () => {
    for (const label of ["autopilot:in-progress", "autopilot:review"]) {
      const snapshot = world({ issues: [issue(4, { labels: [label] })] });
      for (const mode of ["auto", "semi-auto"] as const)
        expect(repoActivity({ snapshot, decision: quiet, labels, session: "paused", mode }).kind, label).toBe(
          "active",
        );
    }
  });

  it("is active while the session is pausing or stopping: it waits for its workers' checkpoints", () => {
    for (const session of ["pausing", "stopping"] as const)
      expect(repoActivity({ snapshot: world(), decision: quiet, labels, session, mode: "auto" })).toEqual({
        kind: "active",
        reason: `the session is ${session}`,
      });
  });
});
