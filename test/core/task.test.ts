import { describe, expect, it } from "vitest";
import {
  type AgentExitInput,
  decideAfterIteration,
  decideAgentExit,
  decideOnFailure,
  decideOnWorkerOutcome,
  decideRateLimit,
  type IterationInput,
  labelForStatus,
  RECOVERY_ACTIONS,
  TASK_STATUSES,
  type TaskEvent,
  type TaskStatus,
  taskStatusFromLabels,
  trackConsecutiveFailures,
  transitionTask,
} from "../../src/core/task.js";
import { WORKER_OUTCOMES } from "../../src/core/worker-result.js";

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

  describe("contradiction guard (seed 004)", () => {
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

describe("decideAgentExit: agent exit handling (seed 001)", () => {
  const base: AgentExitInput = { exitCode: 0, signal: { kind: "none" } };
  // [exit condition, input, status, action]
  const rows: [string, AgentExitInput, TaskStatus, string][] = [
    ["0 + COMPLETE", { ...base, signal: { kind: "complete" }, quality: "pass" }, "review", "open_pr"],
    [
      "0 + COMPLETE (tests fail)",
      { ...base, signal: { kind: "complete" }, quality: "fail" },
      "in-progress",
      "continue",
    ],
    ["0 + no signal", base, "in-progress", "continue"],
    ["0 + BLOCKED", { ...base, signal: { kind: "blocked", text: "missing secret" } }, "blocked", "blocked"],
    ["!= 0", { ...base, exitCode: 2 }, "failed", "fail"],
    [
      "!= 0 even with a COMPLETE signal",
      { exitCode: 1, signal: { kind: "complete" }, quality: "pass" },
      "failed",
      "fail",
    ],
    [
      "SIGTERM (user)",
      { exitCode: null, processSignal: "SIGTERM", signal: { kind: "none" } },
      "ready",
      "release",
    ],
    [
      "SIGKILL (crash)",
      { exitCode: null, processSignal: "SIGKILL", signal: { kind: "none" } },
      "ready",
      "recover",
    ],
    // Beyond the seed's table:
    [
      "0 + NEEDS_HUMAN",
      { ...base, signal: { kind: "needs_human", text: "which DB?" } },
      "needs-human",
      "needs_human",
    ],
    [
      "SIGINT (user)",
      { exitCode: null, processSignal: "SIGINT", signal: { kind: "none" } },
      "ready",
      "release",
    ],
    [
      "killed by the per-iteration timeout",
      { exitCode: null, processSignal: "SIGKILL", iterationTimedOut: true, signal: { kind: "none" } },
      "in-progress",
      "continue",
    ],
  ];
  it.each(rows)("%s", (_row, input, status, action) => {
    const d = decideAgentExit(input);
    expect([d.status, d.action]).toEqual([status, action]);
  });

  it("keeps the branch, checkpoints and alerts as the table says", () => {
    const sigterm = decideAgentExit({ exitCode: null, processSignal: "SIGTERM", signal: { kind: "none" } });
    expect(sigterm).toMatchObject({ checkpoint: true, keepBranch: true, alert: false }); // stash changes, release
    const sigkill = decideAgentExit({ exitCode: null, processSignal: "SIGKILL", signal: { kind: "none" } });
    expect(sigkill).toMatchObject({ checkpoint: false, keepBranch: true, alert: true }); // keep for recovery
    const failed = decideAgentExit({ exitCode: 3, signal: { kind: "none" } });
    expect(failed).toMatchObject({ keepBranch: true, alert: true, reason: "agent exited with code 3" });
    const blocked = decideAgentExit({ exitCode: 0, signal: { kind: "blocked", text: "missing secret" } });
    expect(blocked).toMatchObject({ alert: true, reason: "blocked: missing secret" }); // log reason, alert
  });
});

describe("decideOnWorkerOutcome: signal handling (seed 001)", () => {
  const rows: [string, Parameters<typeof decideOnWorkerOutcome>[0], TaskStatus, Record<string, boolean>][] = [
    [
      "COMPLETE: mark done, queue merge, pick next",
      "complete",
      "review",
      { queueMerge: true, freeSlot: true },
    ],
    ["BLOCKED: mark blocked, free slot, pick next", "blocked", "blocked", { freeSlot: true, failure: false }],
    [
      "NEEDS_HUMAN: pause the task, alert, continue others",
      "needs_human",
      "needs-human",
      { alert: true, freeSlot: true },
    ],
    ["PROGRESS: update the UI", "progress", "in-progress", { freeSlot: false }],
    [
      "TIMEOUT: mark timeout, free slot, pick next",
      "timeout",
      "timeout",
      { freeSlot: true, alert: true, failure: false },
    ],
  ];
  it.each(rows)("%s", (_row, outcome, status, flags) => {
    const d = decideOnWorkerOutcome(outcome);
    expect(d.status).toBe(status);
    expect(d).toMatchObject(flags);
  });

  it.each(WORKER_OUTCOMES)("decides every worker outcome: %s", (outcome) => {
    const d = decideOnWorkerOutcome(outcome);
    expect(TASK_STATUSES).toContain(d.status);
    expect(d.note).toMatch(/\w/);
  });

  it("counts failed, stuck, contradiction, auth and quota as failures; nothing else", () => {
    const failures = WORKER_OUTCOMES.filter((o) => decideOnWorkerOutcome(o).failure);
    expect(failures).toEqual(["stuck", "contradiction", "failed", "auth", "quota"]);
    const later = WORKER_OUTCOMES.filter((o) => decideOnWorkerOutcome(o).resumeLater);
    expect(later).toEqual(["paused", "rate_limited", "usage_limited"]);
  });
});

describe("decideOnFailure: error strategies", () => {
  const retry = { strategy: "retry" as const, maxRetries: 2, retryBaseMs: 60_000, retryMaxMs: 3_600_000 };
  it.each([
    [1, { action: "retry", delayMs: 120_000, nextAttempt: 2 }],
    [2, { action: "retry", delayMs: 240_000, nextAttempt: 3 }],
    [3, { action: "skip", reason: "no retries left (2 used)" }],
  ])("retry: attempt %i failed → %o", (attempt, expected) => {
    expect(decideOnFailure({ ...retry, attempt })).toMatchObject(expected);
  });

  it("caps the retry delay at retryMaxMs", () => {
    expect(decideOnFailure({ ...retry, maxRetries: 10, attempt: 6 })).toMatchObject({ delayMs: 3_600_000 });
    expect(decideOnFailure({ ...retry, maxRetries: 100, attempt: 99 })).toMatchObject({ delayMs: 3_600_000 });
  });

  it("skip and abort act at once", () => {
    expect(decideOnFailure({ ...retry, strategy: "skip", attempt: 1 })).toEqual({
      action: "skip",
      reason: "errorStrategy is skip",
    });
    expect(decideOnFailure({ ...retry, strategy: "abort", attempt: 1 })).toEqual({
      action: "abort",
      reason: "errorStrategy is abort",
    });
  });

  it("never retries with maxRetries 0", () => {
    expect(decideOnFailure({ ...retry, maxRetries: 0, attempt: 1 }).action).toBe("skip");
  });
});

describe("trackConsecutiveFailures", () => {
  it("pauses after N failed tasks in a row; a completed task resets; other outcomes leave the count", () => {
    let count = 0;
    const steps: [Parameters<typeof trackConsecutiveFailures>[1], number, boolean][] = [
      ["failed", 1, false],
      ["timeout", 1, false],
      ["stuck", 2, false],
      ["complete", 0, false],
      ["failed", 1, false],
      ["blocked", 1, false],
      ["contradiction", 2, false],
      ["failed", 3, true],
    ];
    for (const [outcome, expected, pause] of steps) {
      const r = trackConsecutiveFailures(count, outcome, 3);
      expect([outcome, r.count, r.pause]).toEqual([outcome, expected, pause]);
      count = r.count;
    }
  });

  it("never pauses with threshold 0", () => {
    expect(trackConsecutiveFailures(99, "failed", 0)).toEqual({ count: 100, pause: false });
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

describe("transitionTask: label states", () => {
  // Every allowed transition: [from, event, to, retryDelta, freshIterations]; every other pair is refused.
  const allowed: [TaskStatus, TaskEvent["type"], TaskStatus, number, boolean][] = [
    ["ready", "dispatch", "in-progress", 0, false],
    ["in-progress", "prOpened", "review", 0, false],
    ["review", "merged", "done", 0, false],
    ["in-progress", "merged", "done", 0, false],
    ["review", "feedback", "in-progress", 0, false],
    ["in-progress", "blocked", "blocked", 0, false],
    ["review", "blocked", "blocked", 0, false],
    ["in-progress", "needsHuman", "needs-human", 0, false],
    ["review", "needsHuman", "needs-human", 0, false],
    ["in-progress", "timeout", "timeout", 0, false],
    ["in-progress", "fail", "failed", 0, false],
    ["review", "fail", "failed", 0, false],
    ["in-progress", "release", "ready", 0, false],
    // Recovery: crash → back to ready with the retry count raised; retry → fresh iteration counter, retry + 1.
    ["in-progress", "crash", "ready", 1, false],
    ["failed", "retry", "ready", 1, true],
    ["timeout", "retry", "ready", 1, true],
    ["blocked", "retry", "ready", 1, true],
    ["needs-human", "retry", "ready", 1, true],
    ...(["ready", "in-progress", "review", "blocked", "needs-human", "timeout", "failed"] as const).map(
      (from) =>
        [from, "skip", "skipped", 0, false] as [TaskStatus, TaskEvent["type"], TaskStatus, number, boolean],
    ),
    ["blocked", "unblock", "ready", 0, false],
    ["needs-human", "unblock", "ready", 0, false],
    ["done", "reopen", "ready", 0, true],
    ["skipped", "reopen", "ready", 0, true],
  ];
  const eventTypes: TaskEvent["type"][] = [
    "dispatch",
    "prOpened",
    "merged",
    "feedback",
    "blocked",
    "needsHuman",
    "timeout",
    "fail",
    "release",
    "crash",
    "retry",
    "skip",
    "unblock",
    "reopen",
  ];
  const all = TASK_STATUSES.flatMap((from) => eventTypes.map((type) => ({ from, type })));

  it.each(all)("$from + $type", ({ from, type }) => {
    const rule = allowed.find(([f, e]) => f === from && e === type);
    const result = transitionTask(from, { type } as TaskEvent);
    if (rule) {
      expect(result).toEqual({ status: rule[2], retryDelta: rule[3], freshIterations: rule[4] });
    } else {
      expect("refused" in result && result.refused).toMatch(new RegExp(`a task that is ${from}`));
    }
  });

  it("explains a refusal", () => {
    expect(transitionTask("done", { type: "dispatch" })).toEqual({
      refused: "cannot dispatch a task that is done (only from ready)",
    });
  });
});

describe("recovery actions (seed 001)", () => {
  it.each([
    ["quality_fail", "retry_iteration", ["skip"]],
    ["timeout", "mark_timeout", ["retry", "raise maxIterations / timeoutMinutes"]],
    ["blocked", "pick_next", ["unblock"]],
    ["crash", "reset_to_ready", ["debug the branch"]],
    ["failed", "apply_error_strategy", ["retry", "skip"]],
  ] as const)("%s: auto %s, manual %o", (type, auto, manual) => {
    expect(RECOVERY_ACTIONS[type]).toEqual({ auto: { action: auto }, manual });
  });

  it("makes every manual command a legal transition from the matching state", () => {
    expect(transitionTask("failed", { type: "skip" })).toMatchObject({ status: "skipped" });
    expect(transitionTask("timeout", { type: "retry" })).toMatchObject({
      status: "ready",
      freshIterations: true,
    });
    expect(transitionTask("blocked", { type: "unblock" })).toMatchObject({ status: "ready" });
    expect(transitionTask("in-progress", { type: "crash" })).toMatchObject({
      status: "ready",
      retryDelta: 1,
    });
  });
});

describe("status and labels", () => {
  const names = {
    ready: "autopilot:ready",
    inProgress: "autopilot:in-progress",
    review: "autopilot:review",
    blocked: "autopilot:blocked",
    needsHuman: "autopilot:needs-human",
    timeout: "autopilot:timeout",
    failed: "autopilot:failed",
    exclude: "autopilot:exclude",
  };
  it.each([
    [{ state: "closed" as const, labels: ["autopilot:review"] }, "done"],
    [{ state: "open" as const, labels: [] }, null],
    [{ state: "open" as const, labels: ["autopilot:ready"] }, "ready"],
    [{ state: "open" as const, labels: ["Autopilot:In-Progress"] }, "in-progress"],
    [{ state: "open" as const, labels: ["autopilot:ready", "autopilot:needs-human"] }, "needs-human"],
    [{ state: "open" as const, labels: ["autopilot:ready", "autopilot:exclude"] }, "skipped"],
  ])("%o → %s", (issue, status) => {
    expect(taskStatusFromLabels(issue, names)).toBe(status);
  });

  it("maps every status back to its label", () => {
    for (const status of TASK_STATUSES) {
      const label = labelForStatus(status, names);
      if (status === "done" || status === "skipped") expect(label).toBeNull();
      else expect(taskStatusFromLabels({ state: "open", labels: [label!] }, names)).toBe(status);
    }
  });
});
