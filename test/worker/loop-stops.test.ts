/** The worker loop's stops: a paused or stopped session, budgets, cancellation, refused pushes. */
import { describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";
import { marker, trackingBody } from "./tracking-fixtures.js";

const COMPLETE = "All done.\n\n<promise>COMPLETE</promise>";
const NOTHING = "Made some progress; more to do.";

describe("the worker loop: pause, budgets, cancellation", () => {
  it("a pausing session ends the job at the first boundary with `paused`", async () => {
    const h = await harness([{ message: NOTHING }]);
    h.github.trackingBody = trackingBody("pausing");
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("paused");
    expect(h.agent.requests).toHaveLength(0);
  });

  it("checks the session between iterations and checkpoints when it stops", async () => {
    const h = await harness([
      { message: NOTHING, effect: () => (h.github.trackingBody = trackingBody("stopping")) },
    ]);
    h.github.trackingBody = trackingBody("running");
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("paused");
    expect(run.result.iterations).toBe(1);
    expect(run.result.reason).toContain("stopping");
    expect(h.git.pushes.length).toBeGreaterThan(0);
    // One cheap read per boundary.
    expect(h.github.calls.filter((c) => c === "getIssueBody 1")).toHaveLength(2);
  });

  it("ends with `budget_exceeded` once the task's tokens are spent, after pushing", async () => {
    const h = await harness([{ message: NOTHING, usage: { input: 600, output: 100 } }]);
    const run = await runWorker(h.inputs, config({ budgets: { task: { tokens: 1000 } } }), h.deps);
    expect(run.result.result).toBe("budget_exceeded");
    expect(run.result.iterations).toBe(2);
    expect(h.git.pushes).toHaveLength(2);
  });

  it("counts earlier attempts' cost toward the task's USD budget", async () => {
    const h = await harness([{ message: NOTHING, costUsd: 0.3 }], {
      inputs: { attempt: 2, dispatchId: "7-2-x" },
    });
    h.github.addComment(
      7,
      "autopilot[bot]",
      marker({ status: "finished", result: "paused", costUsd: 0.8 }),
      "Bot",
    );
    const run = await runWorker(h.inputs, config({ budgets: { task: { usd: 1 } } }), h.deps);
    expect(run.result.result).toBe("budget_exceeded");
    expect(run.result.costUsd).toBeCloseTo(1.1);
    expect(h.agent.requests).toHaveLength(1);
  });

  it("a cancelled job kills the agent, checkpoints and ends `paused`", async () => {
    const controller = new AbortController();
    const h = await harness([{ message: NOTHING, effect: () => controller.abort() }]);
    const run = await runWorker(h.inputs, config(), { ...h.deps, signal: controller.signal });
    expect(run.result.result).toBe("paused");
    expect(run.result.reason).toContain("cancelled");
    expect(h.git.pushes.length).toBeGreaterThan(0);
  });

  it("a rejected push ends the job `failed` instead of overwriting the remote", async () => {
    const h = await harness([{ message: NOTHING }]);
    h.git.pushError = new Error("! [rejected] HEAD -> autopilot/issue-7 (fetch first)");
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toContain("rejected");
  });

  it("a push GitHub refuses for the workflows permission ends `failed` with what to do about it", async () => {
    const h = await harness([{ message: NOTHING }]);
    h.git.pushError = new Error(
      "git push failed (1): ! [remote rejected] HEAD -> autopilot/issue-7 (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)",
    );
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toContain(
      "GitHub refused the push (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission): a workflow's token may never",
    );
    expect(run.result.reason).toContain("/autopilot retry #7");
    expect(run.result.reason).not.toContain("worker error");
  });

  it("a closed issue is not worked on", async () => {
    const h = await harness([{ message: COMPLETE }]);
    h.github.issues.get(7)!.state = "closed";
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(h.agent.requests).toHaveLength(0);
  });
});
