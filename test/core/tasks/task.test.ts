import { describe, expect, it } from "vitest";
import {
  decideOnFailure,
  decideOnWorkerOutcome,
  labelForStatus,
  TASK_STATUSES,
  type TaskEvent,
  type TaskStatus,
  taskStatusFromLabels,
  trackConsecutiveFailures,
  transitionTask,
} from "../../../src/core/tasks/task.js";
import { WORKER_OUTCOMES } from "../../../src/core/tasks/worker-result.js";

describe("decideOnWorkerOutcome: signal handling", () => {
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
    expect(later).toEqual(["paused", "rate_limited", "usage_limited", "config_refused"]);
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

describe("what a person can do after each kind of error", () => {
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
