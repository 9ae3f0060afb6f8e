/**
 * Commands where people give them (issue 34, item 5): a writer's `/autopilot` command written on a merged task's
 * own closed issue, or on its merged pull request, is acted on or answered — never silent. A task that ended has
 * left the state and lost its labels; its closed issue is still the task's while Autopilot sees its PR.
 */
import { describe, expect, it } from "vitest";
import { comment, issue, only, pull, step, world } from "../world.js";

const TRACKING = { number: 50, body: "", updatedAt: "2026-01-01T00:00:00.000Z", state: "open" as const };

/** Task 4 merged (PR #104), its issue closed with no Autopilot label left, and these comments new. */
function mergedTask(...comments: ReturnType<typeof comment>[]) {
  return world({
    issues: [issue(4, { state: "closed", labels: [], stateReason: "completed" })],
    pulls: [pull(4, { state: "merged", nodeId: "PR_4" })],
    comments,
    trackingIssue: TRACKING,
  });
}

describe("a command on a merged task's closed issue", () => {
  it("`/autopilot rollback` with no number asks GitHub for the revert of the task's merged PR", () => {
    const { decision, state } = step(mergedTask(comment(700, 4, "dev", "/autopilot rollback")), null);
    expect(only(decision.effects, "revertPull")).toEqual([expect.objectContaining({ pr: 104, issue: 4 })]);
    expect(only(decision.effects, "reopenIssue")).toEqual([{ type: "reopenIssue", issue: 4 }]);
    expect(state.tasks[4]?.rollback?.merged).toBe(104);
    expect(only(decision.effects, "react")).toEqual([
      expect.objectContaining({ commentId: 700, content: "+1" }),
    ]);
    const reply = only(decision.effects, "comment").find((c) => c.issue === 4);
    expect(reply?.body).toMatch(/Rolling back #4/);
  });

  it("`/autopilot follow-up` opens the task again for another round", () => {
    const { decision, state } = step(
      mergedTask(comment(700, 4, "dev", "/autopilot follow-up also greet in French")),
      null,
    );
    expect(only(decision.effects, "reopenIssue")).toEqual([{ type: "reopenIssue", issue: 4 }]);
    expect(state.tasks[4]?.followUp).toBeTruthy();
    expect(only(decision.effects, "react")[0]?.content).toBe("+1");
  });

  it("a non-writer's command changes nothing and is answered once with the reason", () => {
    const { decision, state } = step(mergedTask(comment(700, 4, "reader", "/autopilot rollback")), null);
    expect(only(decision.effects, "revertPull")).toEqual([]);
    expect(only(decision.effects, "reopenIssue")).toEqual([]);
    expect(state.tasks[4]).toBeUndefined();
    expect(only(decision.effects, "react")[0]?.content).toBe("confused");
    expect(only(decision.effects, "comment").map((c) => c.body)).toEqual([
      expect.stringMatching(/only takes commands from people with write access/),
    ]);
  });

  it("a malformed command gets a reply saying what was meant", () => {
    const { decision } = step(mergedTask(comment(700, 4, "dev", "/autopilot rollbak")), null);
    expect(only(decision.effects, "revertPull")).toEqual([]);
    const reply = only(decision.effects, "comment").find((c) => c.issue === 4);
    expect(reply?.body).toMatch(/did you mean `\/autopilot rollback`/);
  });

  it("a closed issue that was never a task is not Autopilot's to answer", () => {
    const w = world({
      issues: [issue(9, { state: "closed", labels: [] })],
      comments: [comment(700, 9, "dev", "/autopilot rollback")],
      trackingIssue: TRACKING,
    });
    const { decision } = step(w, null);
    expect(only(decision.effects, "comment")).toEqual([]);
    expect(only(decision.effects, "react")).toEqual([]);
  });
});

describe("a command on a merged task's pull request", () => {
  it("`/autopilot rollback` reverts it", () => {
    const { decision } = step(mergedTask(comment(700, 104, "dev", "/autopilot rollback")), null);
    expect(only(decision.effects, "revertPull")).toEqual([expect.objectContaining({ pr: 104, issue: 4 })]);
  });
});
