import { describe, expect, it } from "vitest";
import {
  decideAfterIteration,
  decideRateLimit,
  type IterationInput,
} from "../../../src/core/agent/iteration.js";

const start = Date.parse("2026-03-01T10:00:00Z");
const minutes = (n: number) => new Date(start + n * 60_000);

function iteration(over: Partial<IterationInput> = {}): IterationInput {
  return {
    signal: { kind: "none" },
    quality: "not_run",
    iteration: 3,
    maxIterations: 25,
    startedAt: new Date(start),
    now: minutes(10),
    timeoutMs: 60 * 60_000,
    iterationsWithoutCommit: 0,
    stuckThreshold: 3,
    stuckStopThreshold: 6,
    ignoredCompletions: 0,
    maxIgnoredCompletionCycles: 2,
    ...over,
  };
}

describe("decideAfterIteration: the completion check matrix", () => {
  // [row of the seed's table, input, outcome, feed failures back]
  const rows: [string, Partial<IterationInput>, string, boolean][] = [
    [
      "COMPLETE + all pass → done, open PR",
      { signal: { kind: "complete" }, quality: "pass" },
      "open_pr",
      false,
    ],
    [
      "COMPLETE + any fail → continue, failures fed back",
      { signal: { kind: "complete" }, quality: "fail" },
      "continue",
      true,
    ],
    [
      "BLOCKED + pass → blocked",
      { signal: { kind: "blocked", text: "no API key" }, quality: "pass" },
      "blocked",
      false,
    ],
    [
      "BLOCKED + fail → blocked",
      { signal: { kind: "blocked", text: "no API key" }, quality: "fail" },
      "blocked",
      false,
    ],
    ["BLOCKED + not run → blocked", { signal: { kind: "blocked" } }, "blocked", false],
    [
      "NEEDS_HUMAN + pass → needs human",
      { signal: { kind: "needs_human", text: "v1 or v2?" }, quality: "pass" },
      "needs_human",
      false,
    ],
    [
      "NEEDS_HUMAN + fail → needs human",
      { signal: { kind: "needs_human", text: "v1 or v2?" }, quality: "fail" },
      "needs_human",
      false,
    ],
    ["no signal + all pass → continue (agent must signal)", { quality: "pass" }, "continue", false],
    ["no signal + any fail → continue", { quality: "fail" }, "continue", true],
    ["no signal + not run → continue", {}, "continue", false],
    ["max iterations + no signal → timeout", { iteration: 25 }, "timeout", false],
    [
      "max iterations + COMPLETE failing → timeout",
      { iteration: 25, signal: { kind: "complete" }, quality: "fail" },
      "timeout",
      false,
    ],
    ["wall clock + no signal → timeout", { now: minutes(60) }, "timeout", false],
    ["wall clock + failing quality → timeout", { now: minutes(75), quality: "fail" }, "timeout", false],
  ];
  it.each(rows)("%s", (_row, over, outcome, feed) => {
    const d = decideAfterIteration(iteration(over));
    expect(d.outcome).toBe(outcome);
    expect(d.feedQualityFailures).toBe(feed);
    expect(d.reason).toMatch(/\w/);
  });

  it("keeps the agent's explicit signal over the limits on the last iteration", () => {
    const last = { iteration: 25, now: minutes(90) };
    expect(
      decideAfterIteration(iteration({ ...last, signal: { kind: "complete" }, quality: "pass" })).outcome,
    ).toBe("open_pr");
    expect(decideAfterIteration(iteration({ ...last, signal: { kind: "blocked", text: "x" } })).outcome).toBe(
      "blocked",
    );
    expect(
      decideAfterIteration(iteration({ ...last, signal: { kind: "needs_human", text: "?" } })).outcome,
    ).toBe("needs_human");
  });

  it("carries the BLOCKED reason and the NEEDS_HUMAN question", () => {
    expect(
      decideAfterIteration(iteration({ signal: { kind: "blocked", text: " no API key " } })).reason,
    ).toBe("agent is blocked: no API key");
    expect(
      decideAfterIteration(iteration({ signal: { kind: "needs_human", text: "v1 or v2?" } })).reason,
    ).toBe("agent asks: v1 or v2?");
  });

  it("treats COMPLETE without any quality command as done, with a warning", () => {
    const d = decideAfterIteration(iteration({ signal: { kind: "complete" }, quality: "not_run" }));
    expect(d.outcome).toBe("open_pr");
    expect(d.warnings).toEqual(["no quality commands ran; the PR's checks are the only gate"]);
  });

  it("measures the wall clock from a string start time too", () => {
    expect(
      decideAfterIteration(iteration({ startedAt: "2026-03-01T10:00:00Z", now: minutes(61) })).outcome,
    ).toBe("timeout");
    expect(decideAfterIteration(iteration({ timeoutMs: 0, now: minutes(6000) })).outcome).toBe("continue");
  });

  describe("contradiction guard", () => {
    const claim = { signal: { kind: "complete" as const }, quality: "fail" as const };
    it("counts contradicted COMPLETE claims and stops at the limit", () => {
      const first = decideAfterIteration(iteration({ ...claim, ignoredCompletions: 0 }));
      expect(first).toMatchObject({ outcome: "continue", ignoredCompletions: 1, feedQualityFailures: true });
      expect(first.warnings).toEqual(["COMPLETE claim 1 of 2 contradicted by failing quality commands"]);
      const second = decideAfterIteration(
        iteration({ ...claim, ignoredCompletions: first.ignoredCompletions }),
      );
      expect(second).toMatchObject({ outcome: "contradiction", ignoredCompletions: 2 });
      expect(second.reason).toBe("COMPLETE claimed 2 times while quality commands fail (limit 2)");
    });
    it("stops on the first contradiction when the limit is 1", () => {
      expect(decideAfterIteration(iteration({ ...claim, maxIgnoredCompletionCycles: 1 })).outcome).toBe(
        "contradiction",
      );
    });
    it("is off when the limit is 0", () => {
      const d = decideAfterIteration(
        iteration({ ...claim, ignoredCompletions: 40, maxIgnoredCompletionCycles: 0 }),
      );
      expect(d).toMatchObject({ outcome: "continue", ignoredCompletions: 41 });
    });
    it("does not count claims that pass or iterations without a claim", () => {
      expect(
        decideAfterIteration(iteration({ quality: "fail", ignoredCompletions: 1 })).ignoredCompletions,
      ).toBe(1);
    });
  });

  describe("stuck detection", () => {
    it.each([
      [2, "continue", []],
      [3, "continue", ["possibly stuck: no new commit in 3 iterations"]],
      [5, "continue", ["possibly stuck: no new commit in 5 iterations"]],
      [6, "stuck", []],
      [9, "stuck", []],
    ])("%i iterations without a commit → %s", (idle, outcome, warnings) => {
      const d = decideAfterIteration(iteration({ iterationsWithoutCommit: idle }));
      expect(d.outcome).toBe(outcome);
      expect(d.warnings).toEqual(warnings);
    });
    it("is off when the thresholds are 0", () => {
      const d = decideAfterIteration(
        iteration({ iterationsWithoutCommit: 50, stuckThreshold: 0, stuckStopThreshold: 0 }),
      );
      expect(d).toMatchObject({ outcome: "continue", warnings: [] });
    });
    it("reports timeout before stuck", () => {
      expect(decideAfterIteration(iteration({ iterationsWithoutCommit: 9, iteration: 25 })).outcome).toBe(
        "timeout",
      );
    });
  });
});

describe("decideRateLimit: backoff, fallback agent, end of job", () => {
  const now = new Date("2026-03-01T10:00:00Z");
  const base = {
    retries: 3,
    agentIndex: 0,
    agentCount: 2,
    baseMs: 5_000,
    factor: 3,
    maxWaitMs: 300_000,
    now,
  };

  it.each([
    [0, 5_000],
    [1, 15_000],
    [2, 45_000],
  ])("waits base × factor^n: hit %i → %i ms", (attempt, ms) => {
    expect(decideRateLimit({ ...base, attempt })).toMatchObject({ action: "wait", ms });
  });

  it("caps the wait at maxWaitMs", () => {
    expect(decideRateLimit({ ...base, attempt: 4, retries: 10 })).toMatchObject({
      action: "wait",
      ms: 300_000,
    });
  });

  it("switches to the next fallback agent when the retries are used", () => {
    expect(decideRateLimit({ ...base, attempt: 3 })).toMatchObject({ action: "switch_agent", next: 1 });
  });

  it("ends the job when every agent is limited, resuming after maxWaitMs without a known reset", () => {
    expect(decideRateLimit({ ...base, attempt: 3, agentIndex: 1 })).toMatchObject({
      action: "end_job",
      resumeAt: "2026-03-01T10:05:00.000Z",
    });
  });

  it("waits for a known reset within maxWaitMs", () => {
    const resetAt = new Date("2026-03-01T10:01:30Z");
    expect(decideRateLimit({ ...base, attempt: 0, resetAt })).toMatchObject({ action: "wait", ms: 90_000 });
  });

  it("does not wait for a known reset beyond maxWaitMs: switch agent, or end the job with the reset time", () => {
    const resetAt = "2026-03-01T15:30:00Z"; // a usage limit hours away
    expect(decideRateLimit({ ...base, attempt: 0, resetAt })).toMatchObject({
      action: "switch_agent",
      next: 1,
    });
    expect(decideRateLimit({ ...base, attempt: 0, agentIndex: 1, resetAt })).toMatchObject({
      action: "end_job",
      resumeAt: "2026-03-01T15:30:00.000Z",
    });
    expect(
      decideRateLimit({ ...base, attempt: 0, agentCount: 1, resetAt: Date.parse(resetAt) }),
    ).toMatchObject({
      action: "end_job",
      resumeAt: "2026-03-01T15:30:00.000Z",
    });
  });

  it("retries at once when the announced reset has passed", () => {
    expect(decideRateLimit({ ...base, attempt: 0, resetAt: "2026-03-01T09:00:00Z" })).toMatchObject({
      action: "wait",
      ms: 0,
    });
  });
});
