/**
 * The loop settings of the design documents, run through the whole worker loop against fakes (clock and sleep
 * included, so nothing waits): going back to the primary agent after a fallback, the pause between iterations,
 * the completion modes, the first contradicted claim ending the task by default, and a failed run that looks
 * like a limit the classifier does not know.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { parseWorkerResult } from "../../src/core/tasks/worker-result.js";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness, type ScriptedRun } from "./fakes.js";

const COMPLETE = "All done.\n\n<promise>COMPLETE</promise>";
const OBJECTIVE =
  "All done.\n\n<promise>OBJECTIVE_MET: greet(name) returns `Hello, <name>!` (src/greet.js), " +
  "covered by test/greet.test.js</promise>";
const NOTHING = "Made some progress; more to do.";
const MINUTE = 60_000;

/** The agent the worker's result marker on the issue names at the end (what the controller reads). */
function reportedAgent(h: Awaited<ReturnType<typeof harness>>) {
  const marker = h.github.comments.map((c) => parseWorkerResult(c.body)).find((r) => r !== null);
  return marker?.agent;
}

const codex = { preset: "codex", model: null, args: [], env: [], command: null };

/** Claude Code's 429, with a reset ten minutes away: further than rateLimit.maxWaitMs, so the job switches. */
const primaryLimited: ScriptedRun = {
  raw: 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited. Please try again in 10m."}}',
  exitCode: 1,
  work: false,
};

describe("recoverPrimary: back to the primary agent within the job", () => {
  it("after the primary's limit lifts, the next iteration runs the primary again", async () => {
    const h = await harness([
      primaryLimited,
      // The fallback works for eleven minutes: the primary's ten-minute limit has lifted when it ends.
      {
        message: NOTHING,
        effect: () => {
          h.clock.now += 11 * MINUTE;
        },
      },
      { message: COMPLETE },
    ]);
    const run = await runWorker(h.inputs, config({ agents: { fallbacks: [codex] } }), h.deps);

    expect(h.agent.requests.map((r) => r.agent.preset)).toEqual(["claude-code", "codex", "claude-code"]);
    expect(run.result.result).toBe("complete");
    expect(run.warnings.join("\n")).toContain("claude-code's limit has lifted; back to it from codex");
    expect(reportedAgent(h)).toEqual({ name: "claude-code", fallback: null, from: null });
  });

  it("before the limit lifts the fallback keeps the task", async () => {
    const h = await harness([
      primaryLimited,
      { message: NOTHING, effect: () => (h.clock.now += 2 * MINUTE) },
      { message: COMPLETE },
    ]);
    const run = await runWorker(h.inputs, config({ agents: { fallbacks: [codex] } }), h.deps);

    expect(h.agent.requests.map((r) => r.agent.preset)).toEqual(["claude-code", "codex", "codex"]);
    expect(run.result.result).toBe("complete");
    expect(reportedAgent(h)).toEqual({
      name: "codex",
      fallback: expect.stringMatching(/^claude-code is rate limited: /),
      from: "claude-code",
    });
  });

  it("with recoverPrimary false the fallback keeps the task for the rest of the job", async () => {
    const h = await harness([
      primaryLimited,
      { message: NOTHING, effect: () => (h.clock.now += 11 * MINUTE) },
      { message: COMPLETE },
    ]);
    const cfg = config({ agents: { fallbacks: [codex] }, recoverPrimary: false });
    await runWorker(h.inputs, cfg, h.deps);

    expect(h.agent.requests.map((r) => r.agent.preset)).toEqual(["claude-code", "codex", "codex"]);
  });

  it("a primary still limited after recovery hands back to the fallback at once, without new waits", async () => {
    const h = await harness([
      primaryLimited,
      { message: NOTHING, effect: () => (h.clock.now += 11 * MINUTE) },
      primaryLimited,
      { message: COMPLETE },
    ]);
    const run = await runWorker(h.inputs, config({ agents: { fallbacks: [codex] } }), h.deps);

    expect(h.agent.requests.map((r) => r.agent.preset)).toEqual([
      "claude-code",
      "codex",
      "claude-code",
      "codex",
    ]);
    expect(h.sleeps).toEqual([]);
    expect(run.result.result).toBe("complete");
  });
});

describe("iterationDelayMs: a pause between iterations", () => {
  it("sleeps the configured time after each iteration that goes on, and not after the last", async () => {
    const h = await harness([{ message: NOTHING }, { message: NOTHING }, { message: COMPLETE }]);
    const run = await runWorker(h.inputs, config({ iterationDelayMs: 2_000 }), h.deps);

    expect(run.result.result).toBe("complete");
    expect(h.sleeps).toEqual([2_000, 2_000]);
  });

  it("is off by default", async () => {
    const h = await harness([{ message: NOTHING }, { message: COMPLETE }]);
    await runWorker(h.inputs, config(), h.deps);
    expect(h.sleeps).toEqual([]);
  });
});

describe("completion: objective", () => {
  const objective = config({ completion: "objective" });

  it("the objective marker with passing quality commands opens the PR; the prompt teaches the marker", async () => {
    const h = await harness([{ message: OBJECTIVE }]);
    const run = await runWorker(h.inputs, objective, h.deps);

    expect(run.result.result).toBe("complete");
    expect(h.github.pulls).toHaveLength(1);
    expect(run.result.lastSignal).toContain("OBJECTIVE_MET: greet(name) returns");
    const prompt = h.agent.requests[0]!.prompt;
    expect(prompt).toContain("`<promise>OBJECTIVE_MET: <statement></promise>`");
    expect(prompt).not.toContain("`<promise>COMPLETE</promise>`");
  });

  it("a plain COMPLETE does not end the task: a warning, no quality run, and the next iteration", async () => {
    const h = await harness([{ message: COMPLETE }, { message: OBJECTIVE }]);
    const run = await runWorker(h.inputs, objective, h.deps);

    expect(run.result.iterations).toBe(2);
    expect(h.quality.runs).toBe(1);
    expect(run.result.result).toBe("complete");
    expect(run.warnings.join("\n")).toContain("only the objective marker");
  });

  it("the marker with failing quality commands is a contradicted claim", async () => {
    const h = await harness([{ message: OBJECTIVE }], { quality: [false] });
    const run = await runWorker(h.inputs, objective, h.deps);
    expect(run.result.result).toBe("needs_human");
    expect(h.github.pulls).toHaveLength(0);
  });

  it("with no quality commands to check the marker against, the task stops as blocked and says what to set", async () => {
    const h = await harness([{ message: OBJECTIVE }], { qualityCommands: [] });
    const run = await runWorker(h.inputs, objective, h.deps);

    expect(run.result.result).toBe("blocked");
    expect(run.result.reason).toContain("set `qualityCommands`");
    expect(h.github.pulls).toHaveLength(0);
  });

  it("in the default promise mode the same message without quality commands opens the PR", async () => {
    const h = await harness([{ message: OBJECTIVE }], { qualityCommands: [] });
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("complete");
  });
});

describe("the documents' defaults", () => {
  it("are 50 iterations, a stuck warning after 5, 30 minutes, and at most 5 contradicted claims", () => {
    expect(DEFAULT_CONFIG.maxIterations).toBe(50);
    expect(DEFAULT_CONFIG.stuckThreshold).toBe(5);
    expect(DEFAULT_CONFIG.timeoutMinutes).toBe(30);
    expect(DEFAULT_CONFIG.maxIgnoredCompletionCycles).toBe(5);
    expect(DEFAULT_CONFIG.completion).toBe("promise");
    expect(DEFAULT_CONFIG.recoverPrimary).toBe(true);
  });

  it("a COMPLETE the quality commands contradict goes back to the agent, and passes on its next claim", async () => {
    const h = await harness([{ message: COMPLETE }, { message: COMPLETE }], { quality: [false, true] });
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("complete");
    expect(run.result.iterations).toBe(2);
    expect(h.agent.requests[1]!.prompt).toContain("FAIL npm test: expected 2 to be 3");
  });

  it("the same claim meeting the same failure again goes to a person, at the second claim", async () => {
    const h = await harness([{ message: COMPLETE }], { quality: [false] });
    h.quality.failureOutput = "not ok 1 - counts every unit\nnot ok 2 - rounds the tax";
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("needs_human");
    expect(run.result.iterations).toBe(2);
    expect(run.result.reason).toContain(
      "COMPLETE claimed again while the same quality checks fail (2 claims: npm test › counts every unit; npm test › rounds the tax)",
    );
  });

  it("the loop goes on while what fails shrinks from one claim to the next", async () => {
    const outputs = [
      "not ok 1 - counts every unit\nnot ok 2 - rounds the tax\nnot ok 3 - applies the code",
      "not ok 1 - counts every unit\nnot ok 2 - rounds the tax",
      "not ok 1 - counts every unit",
    ];
    const h = await harness(
      outputs.map((_, i) => ({ message: COMPLETE, effect: () => (h.quality.failureOutput = outputs[i]!) })),
      { quality: [false, false, false, true] },
    );
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("complete");
    expect(run.result.iterations).toBe(4);
  });

  it("a claim after which something new fails goes to a person, though something was fixed", async () => {
    const outputs = [
      "not ok 1 - counts every unit\nnot ok 2 - rounds the tax",
      "not ok 1 - counts every unit\nnot ok 3 - applies the code",
    ];
    const h = await harness(
      outputs.map((_, i) => ({ message: COMPLETE, effect: () => (h.quality.failureOutput = outputs[i]!) })),
      { quality: [false] },
    );
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("needs_human");
    expect(run.result.iterations).toBe(2);
    expect(run.result.reason).toContain("no fewer quality checks fail");
  });
});

describe("a failed run that looks like a limit the classifier does not know", () => {
  // A provider's 429 in a wording no rule knows (no tool's anchor, no API error body).
  const unknownLimit: ScriptedRun = {
    raw: "Working on it…\nrequest failed: upstream answered 429 (slow down), giving up",
    errorText: "request failed: upstream answered 429 (slow down), giving up",
    exitCode: 1,
    work: false,
  };

  it("backs off exponentially and runs the agent again instead of failing at once", async () => {
    const h = await harness([unknownLimit, unknownLimit, { message: COMPLETE }]);
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(h.sleeps).toEqual([5_000, 15_000]);
    expect(run.result.result).toBe("complete");
    expect(run.result.iterations).toBe(1);
    expect(run.warnings.join("\n")).toContain("looks like a limit");
  });

  it("counts as a failure once the backoffs are used", async () => {
    const h = await harness([unknownLimit]);
    const run = await runWorker(h.inputs, config({ rateLimit: { retries: 2 } }), h.deps);

    expect(h.sleeps).toEqual([5_000, 15_000]);
    expect(h.agent.requests).toHaveLength(3);
    expect(run.result.result).toBe("failed");
  });

  it("shares the waits of a classified limit: at most rateLimit.retries waits in all, not twice that", async () => {
    const rateLimited: ScriptedRun = {
      raw: 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
      exitCode: 1,
    };
    const h = await harness([rateLimited, unknownLimit, unknownLimit, unknownLimit]);
    const run = await runWorker(h.inputs, config({ rateLimit: { retries: 2 } }), h.deps);

    expect(h.sleeps).toEqual([5_000, 15_000]);
    expect(h.agent.requests).toHaveLength(3);
    expect(run.result.result).toBe("failed");
  });

  it("a crash that says nothing of a limit fails at once, without waiting", async () => {
    const crash: ScriptedRun = {
      raw: "TypeError: Cannot read properties of undefined (reading 'map')",
      errorText: "TypeError: Cannot read properties of undefined (reading 'map')",
      exitCode: 1,
    };
    const h = await harness([crash]);
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(h.sleeps).toEqual([]);
    expect(run.result.result).toBe("failed");
  });
});

describe("a coverage threshold with no quality command", () => {
  it("fails the gate instead of skipping it: the agent cannot pass it by deleting the test script", async () => {
    const h = await harness([{ message: COMPLETE }], { qualityCommands: [] });
    const run = await runWorker(h.inputs, config({ quality: { coverage: { threshold: 80 } } }), h.deps);

    expect(run.result.result).not.toBe("complete");
    expect(h.github.pulls).toHaveLength(0);
    expect(h.quality.runs).toBe(0);
  });

  it("without a threshold, no command means the PR's checks are the only gate, as before", async () => {
    const h = await harness([{ message: COMPLETE }], { qualityCommands: [] });
    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("complete");
  });
});
