/**
 * The worker's side of best of N (src/worker/job/ with the `config` input's `candidate`): a candidate works on
 * its own branch with its one agent, opens its pull request there and leaves the task in progress for the
 * controller's choice; a candidate that stops or asks leaves the round without touching the task.
 */
import { describe, expect, it } from "vitest";
import { jobDirections } from "../../src/worker/settings/config-input.js";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";

const candidates = [
  { preset: "custom", model: "wide", command: "wide {prompt_file}", args: [], env: [] },
  { preset: "custom", model: "narrow", command: "narrow {prompt_file}", args: [], env: [] },
];
const withBestOf = () => config({ bestOf: { candidates } });

describe("a best-of candidate's job", () => {
  it("works with its own agent on its own branch, and leaves the task in progress", async () => {
    const h = await harness([{ message: "Done.\n\n<promise>COMPLETE</promise>" }], {
      inputs: { candidate: 2 },
    });
    const run = await runWorker(h.inputs, withBestOf(), h.deps);
    expect(run.result.result).toBe("complete");
    expect(run.result.branch).toBe("autopilot/issue-7-candidate-2");
    expect(h.agent.requests.map((r) => r.agent.model)).toEqual(["narrow"]);
    expect(h.github.pulls).toHaveLength(1);
    expect(h.github.pulls[0]).toMatchObject({
      headRef: "autopilot/issue-7-candidate-2",
      title: expect.stringMatching(/^\[candidate 2 of 2\] /),
    });
    // The controller chooses among the candidates: the task is not moved to review.
    expect([...(h.github.labels.get(7) ?? [])]).not.toContain("autopilot:review");
  });

  it("leaves the round, not the task, when its agent says it is blocked", async () => {
    const h = await harness([{ message: "<promise>BLOCKED: no database access</promise>" }], {
      inputs: { candidate: 1 },
    });
    const run = await runWorker(h.inputs, withBestOf(), h.deps);
    expect(run.result.result).toBe("blocked");
    expect([...(h.github.labels.get(7) ?? [])]).not.toContain("autopilot:blocked");
    expect(
      h.github.comments.filter((c) => /no database access/.test(c.body) && !c.body.includes("worker-result")),
    ).toEqual([]);
  });

  it("refuses a candidate the configuration does not list", async () => {
    const h = await harness([{ message: "<promise>COMPLETE</promise>" }], { inputs: { candidate: 3 } });
    const run = await runWorker(h.inputs, withBestOf(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toMatch(/candidate 3 .* not in `bestOf.candidates`/);
    expect(h.agent.requests).toHaveLength(0);
  });
});

describe("the config input's directions", () => {
  it("names the candidate, and is no setting of the configuration", () => {
    expect(jobDirections(JSON.stringify({ candidate: 2, maxParallel: 3 }))).toEqual({
      plan: null,
      candidate: 2,
    });
    expect(jobDirections(JSON.stringify({ candidate: 9 }))).toEqual({ plan: null, candidate: null });
    expect(jobDirections("")).toEqual({ plan: null, candidate: null });
  });
});
