import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { repoActivity } from "../../../src/core/scheduling/repo-activity.js";
import { issue, run, world } from "../world.js";

const labels = DEFAULT_CONFIG.labels;
const quiet = { effects: [] };
/** A running session. */
const auto = { session: "running" } as const;

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

  it("is active with an in-progress or review task", () => {
    for (const label of ["autopilot:in-progress", "autopilot:review"]) {
      const snapshot = world({ issues: [issue(4, { labels: [label] })] });
      expect(repoActivity({ snapshot, decision: quiet, labels, ...auto }).kind, label).toBe("active");
    }
  });

  it("is idle when the moving label is on an excluded issue or a pull request", () => {
    const snapshot = world({
      issues: [
        issue(4, { labels: ["autopilot:in-progress", "autopilot:exclude"] }),
        issue(5, { labels: ["autopilot:in-progress"], isPullRequest: true }),
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

  it("is active while ready work waits on Autopilot alone, idle while ready tasks wait on people", () => {
    const snapshot = world({ issues: [issue(4, { labels: ["autopilot:ready"] })] });
    expect(
      repoActivity({ snapshot, decision: { effects: [], readyWaitsOnAutopilot: true }, labels, ...auto })
        .kind,
    ).toBe("active");
    for (const session of ["running", "paused", "idle", "completed"] as const)
      expect(repoActivity({ snapshot, decision: quiet, labels, session }), session).toEqual({ kind: "idle" });
  });

  it("is active while paused with a task in progress or in review: those move with time", () => {
    for (const label of ["autopilot:in-progress", "autopilot:review"]) {
      const snapshot = world({ issues: [issue(4, { labels: [label] })] });
      expect(repoActivity({ snapshot, decision: quiet, labels, session: "paused" }).kind, label).toBe(
        "active",
      );
    }
  });

  it("is active, paused too, while a task carries in-progress beside another state label: its repair waits on time", () => {
    // A label move of Autopilot's half done (seeds 540 and 742 of the seeded simulation, Actions): the status
    // read is the other label, yet only a later reconcile takes in-progress off (src/core/reconcile/runs/workers.ts).
    for (const other of ["autopilot:needs-human", "autopilot:failed", "autopilot:ready"]) {
      const snapshot = world({ issues: [issue(4, { labels: [other, "autopilot:in-progress"] })] });
      for (const session of ["paused", "completed"] as const)
        expect(repoActivity({ snapshot, decision: quiet, labels, session }).kind, `${other} ${session}`).toBe(
          "active",
        );
    }
  });

  it("is active while the session is pausing or stopping: it waits for its workers' checkpoints", () => {
    for (const session of ["pausing", "stopping"] as const)
      expect(repoActivity({ snapshot: world(), decision: quiet, labels, session })).toEqual({
        kind: "active",
        reason: `the session is ${session}`,
      });
  });
});
