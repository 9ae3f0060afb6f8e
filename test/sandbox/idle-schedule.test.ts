/**
 * The scenario check of the Actions controller's schedule over a quiet stretch (sandbox/scenario/checks/
 * idle-schedule.ts): scheduled runs between two comments, the billed apart from the skipped.
 */
import { describe, expect, it } from "vitest";
import { SandboxStore } from "../../sandbox/emulator/store.js";
import { scheduledRunsInStretch } from "../../sandbox/scenario/checks/idle-schedule.js";
import { CONTROLLER_WORKFLOW_PATH } from "../../sandbox/scenario/controllers/controller-mode.js";

describe("the scheduled runs of a quiet stretch", () => {
  it("counts the runs created between the two comments, billed apart from skipped", () => {
    let now = 0;
    const store = new SandboxStore({ now: () => new Date(now) });
    store.createRepo({ owner: "demo", name: "shop" });
    const workflow = store.addWorkflow("demo/shop", { path: CONTROLLER_WORKFLOW_PATH });
    const issue = store.createIssue("demo/shop", { title: "t", body: "", author: "alice" });
    const scheduled = (conclusion: "success" | "skipped") => {
      const run = store.createWorkflowRun("demo/shop", {
        workflow: workflow.id,
        event: "schedule",
        headBranch: "main",
        headSha: "a".repeat(40),
        actor: "alice",
      });
      store.updateWorkflowRun("demo/shop", run.id, {
        status: "completed",
        conclusion,
        ...(conclusion === "success" ? { runStartedAt: new Date(now) } : {}),
      });
    };
    now = 1_000;
    scheduled("success"); // before the stretch: not counted
    store.createComment(
      "demo/shop",
      issue.number,
      "Deleted `autopilot/issue-1`",
      "autopilot[bot]",
      new Date(2_000),
    );
    now = 3_000;
    scheduled("success"); // within afterSeconds of the comment: not counted
    now = 20_000;
    scheduled("skipped");
    scheduled("skipped");
    now = 30_000;
    scheduled("success");
    store.createComment("demo/shop", issue.number, "/autopilot status", "alice", new Date(40_000));
    now = 50_000;
    scheduled("success"); // after the stretch: not counted
    const humans = new Set(["alice"]);
    expect(
      scheduledRunsInStretch(store, "demo/shop", humans, {
        after: "Deleted `autopilot/issue-1`",
        afterSeconds: 8,
        before: "^/autopilot status",
      }),
    ).toEqual({ found: true, seconds: 30, ran: 1, skipped: 2 });
    expect(
      scheduledRunsInStretch(store, "demo/shop", humans, {
        after: "never said",
        afterSeconds: 0,
        before: "x",
      }),
    ).toMatchObject({ found: false });
  });
});
