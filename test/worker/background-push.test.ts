/**
 * An iteration the loop goes on from is pushed while the agent's next turn runs (src/worker/job/commit.ts):
 * pushes stay in order, the job never ends with one still running, and a push that fails is met after that
 * turn as any failed push is.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";

const COMPLETE = "All done.\n\n<promise>COMPLETE</promise>";
const NOTHING = "Made some progress; more to do.";

/** Makes every push of `h.git` take a while, and writes what happens, in order, into `events`. */
function slowPushes(h: Awaited<ReturnType<typeof harness>>, events: string[], failAt?: number) {
  const push = h.git.push.bind(h.git);
  let count = 0;
  h.git.push = async (branch: string, head?: string) => {
    const n = ++count;
    events.push(`push ${n} starts`);
    await delay(30);
    if (n === failAt) {
      events.push(`push ${n} fails`);
      throw new Error("! [rejected] HEAD -> autopilot/issue-7 (fetch first)");
    }
    const pushed = await push(branch, head);
    events.push(`push ${n} done`);
    return pushed;
  };
}

describe("the push of an iteration the loop goes on from", () => {
  it("runs while the agent's next turn does, one push at a time, and is over before the job ends", async () => {
    const events: string[] = [];
    const h = await harness([
      { message: NOTHING, effect: () => events.push("agent 1") },
      { message: NOTHING, effect: () => events.push("agent 2") },
      { message: NOTHING, effect: () => events.push("agent 3") },
    ]);
    slowPushes(h, events);
    const run = await runWorker(h.inputs, config({ maxIterations: 3 }), h.deps);

    expect(run.result.result).toBe("timeout");
    // The second and third turns started while the push before them was still running.
    expect(events.indexOf("agent 2")).toBeLessThan(events.indexOf("push 1 done"));
    expect(events.indexOf("agent 3")).toBeLessThan(events.indexOf("push 2 done"));
    // Never two pushes at once: each starts after the one before it is done.
    expect(events.indexOf("push 2 starts")).toBeGreaterThan(events.indexOf("push 1 done"));
    expect(events.indexOf("push 3 starts")).toBeGreaterThan(events.indexOf("push 2 done"));
    // The job's last iteration is pushed before its result is written: HEAD is on the remote.
    expect(events.at(-1)).toBe("push 3 done");
    expect(h.git.pushes.at(-1)).toBe(h.git.head);
    expect(run.result.headSha).toBe(`sha${h.git.head}`);
  });

  it("a push that fails while the agent works fails the job after that turn, with git's words", async () => {
    const events: string[] = [];
    const h = await harness([
      { message: NOTHING, effect: () => events.push("agent 1") },
      { message: NOTHING, effect: () => events.push("agent 2") },
      { message: COMPLETE, effect: () => events.push("agent 3") },
    ]);
    slowPushes(h, events, 1);
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toContain("rejected");
    // Met right after the turn that ran beside it: no third turn, no further push, no PR.
    expect(events).not.toContain("agent 3");
    expect(events.filter((e) => e.endsWith("starts"))).toEqual(["push 1 starts"]);
    expect(h.github.pulls).toHaveLength(0);
  });

  it("a job that ends at its task budget while a push runs waits for that push", async () => {
    const events: string[] = [];
    const h = await harness([{ message: NOTHING, costUsd: 2, effect: () => events.push("agent 1") }]);
    slowPushes(h, events);
    const run = await runWorker(h.inputs, config({ budgets: { task: { usd: 1 } } }), h.deps);
    expect(run.result.result).toBe("budget_exceeded");
    expect(events).toEqual(["agent 1", "push 1 starts", "push 1 done"]);
    expect(h.git.pushes).toEqual([h.git.head]);
  });
});
