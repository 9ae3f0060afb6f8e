import { describe, expect, it } from "vitest";
import {
  describeReason,
  initialSessionState,
  isDispatching,
  reduceSession,
  SESSION_REASONS,
  SESSION_STATUSES,
  type SessionEvent,
  type SessionEventType,
  type SessionReason,
  type SessionState,
  type SessionStatus,
} from "../../../src/core/session/session.js";

const t0 = Date.parse("2026-03-01T10:00:00Z");
const now = new Date("2026-03-01T11:00:00Z");

function state(status: SessionStatus, reason: SessionReason = "user_start", actor = "alice"): SessionState {
  return { status, since: new Date(t0).toISOString(), reason, actor, startedAt: new Date(t0).toISOString() };
}

const events: Record<SessionEventType, SessionEvent> = {
  start: { type: "start", actor: "bob" },
  pause: { type: "pause", actor: "bob" },
  resume: { type: "resume", actor: "bob" },
  stop: { type: "stop", actor: "bob" },
  workersCheckpointed: { type: "workersCheckpointed" },
  allTasksDone: { type: "allTasksDone" },
  consecutiveFailures: { type: "consecutiveFailures", count: 3, issues: [4, 7, 9] },
  budgetExhausted: { type: "budgetExhausted", detail: "session USD budget 20 used" },
  abort: { type: "abort", issue: 7 },
  newWork: { type: "newWork", issues: [12] },
};

// Every (status, event) pair: the next status and reason code, or "refused".
type Expect = [SessionStatus, SessionReason] | "refused";
const R = "refused" as const;
const table: Record<SessionEventType, Record<SessionStatus, Expect>> = {
  start: {
    idle: ["running", "user_start"],
    running: R,
    pausing: R,
    paused: R,
    stopping: R,
    completed: ["running", "user_start"],
  },
  pause: { idle: R, running: ["pausing", "user_pause"], pausing: R, paused: R, stopping: R, completed: R },
  resume: {
    idle: R,
    running: R,
    pausing: ["running", "user_resume"],
    paused: ["running", "user_resume"],
    stopping: R,
    completed: R,
  },
  stop: {
    idle: R,
    running: ["stopping", "user_stop"],
    pausing: ["stopping", "user_stop"],
    paused: ["idle", "user_stop"],
    stopping: R,
    completed: R,
  },
  workersCheckpointed: {
    idle: R,
    running: R,
    pausing: ["paused", "user_pause"], // keeps the reason of the pause (the fixture's pausing state)
    paused: R,
    stopping: ["idle", "user_stop"],
    completed: R,
  },
  allTasksDone: {
    idle: R,
    running: ["completed", "all_done"],
    pausing: R,
    paused: R,
    stopping: R,
    completed: R,
  },
  consecutiveFailures: {
    idle: R,
    running: ["pausing", "consecutive_failures"],
    pausing: R,
    paused: R,
    stopping: R,
    completed: R,
  },
  budgetExhausted: {
    idle: R,
    running: ["pausing", "budget_exhausted"],
    pausing: R,
    paused: R,
    stopping: R,
    completed: R,
  },
  abort: {
    idle: R,
    running: ["stopping", "error_abort"],
    pausing: ["stopping", "error_abort"],
    paused: R,
    stopping: R,
    completed: R,
  },
  newWork: { idle: R, running: R, pausing: R, paused: R, stopping: R, completed: ["running", "new_work"] },
};

// A realistic state for each status (pausing was asked by a user, stopping too, etc.).
const fixtures: Record<SessionStatus, SessionState> = {
  idle: { ...state("idle", "initial", "autopilot"), startedAt: null },
  running: state("running", "user_start"),
  pausing: state("pausing", "user_pause"),
  paused: state("paused", "user_pause"),
  stopping: state("stopping", "user_stop"),
  completed: state("completed", "all_done", "autopilot"),
};

const cases = SESSION_STATUSES.flatMap((status) =>
  (Object.keys(table) as SessionEventType[]).map((type) => ({ status, type, expected: table[type][status] })),
);

describe("reduceSession: every status × event", () => {
  it("covers all 60 pairs", () => {
    expect(cases).toHaveLength(SESSION_STATUSES.length * 10);
  });

  it.each(cases)("$status + $type → $expected", ({ status, type, expected }) => {
    const before = fixtures[status];
    const result = reduceSession(before, events[type], now);
    if (expected === "refused") {
      expect(result.refused?.reason).toMatch(/\w{3,}/);
      expect(result.state).toBe(before); // unchanged, the very same object
      expect(result.effects).toEqual([]);
      return;
    }
    expect(result.refused).toBeUndefined();
    expect([result.state.status, result.state.reason]).toEqual(expected);
    expect(result.state.since).toBe(now.toISOString());
    expect(result.effects.some((e) => e.type === "notify")).toBe(true);
  });

  it("refuses with readable reasons", () => {
    expect(reduceSession(fixtures.running, events.start, now).refused?.reason).toBe(
      "Autopilot is already running.",
    );
    expect(reduceSession(fixtures.paused, events.start, now).refused?.reason).toBe(
      "Autopilot is paused; use resume to continue.",
    );
    expect(reduceSession(fixtures.idle, events.pause, now).refused?.reason).toBe(
      "Autopilot is not running; there is nothing to pause.",
    );
    expect(reduceSession(fixtures.running, events.workersCheckpointed, now).refused?.reason).toBe(
      "No pause or stop is in progress (session is running).",
    );
  });
});

describe("reduceSession: the lifecycle idle → running → pausing → paused → running → stopping → idle", () => {
  it("walks the whole cycle with actors, times and effects", () => {
    const at = (minutes: number) => t0 + minutes * 60_000;
    let s = initialSessionState(at(0));
    expect(s).toMatchObject({ status: "idle", reason: "initial", startedAt: null });
    expect(isDispatching(s.status)).toBe(false);

    let r = reduceSession(s, { type: "start", actor: "alice" }, at(1));
    expect(r.state).toMatchObject({ status: "running", reason: "user_start", actor: "alice" });
    expect(r.state.startedAt).toBe(new Date(at(1)).toISOString());
    expect(r.effects).toEqual([
      { type: "startDispatching" },
      { type: "notify", level: "info", message: "Autopilot started by @alice." },
    ]);
    expect(isDispatching(r.state.status)).toBe(true);
    s = r.state;

    r = reduceSession(s, { type: "pause", actor: "bob" }, at(5));
    expect(r.state).toMatchObject({ status: "pausing", reason: "user_pause", actor: "bob" });
    expect(r.effects.map((e) => e.type)).toEqual(["stopDispatching", "checkpointWorkers", "notify"]);
    s = r.state;

    r = reduceSession(s, { type: "workersCheckpointed" }, at(7));
    expect(r.state).toMatchObject({ status: "paused", reason: "user_pause", actor: "bob" });
    expect(r.state.since).toBe(new Date(at(7)).toISOString());
    s = r.state;

    r = reduceSession(s, { type: "resume", actor: "carol" }, at(20));
    expect(r.state).toMatchObject({ status: "running", reason: "user_resume", actor: "carol" });
    expect(r.state.startedAt).toBe(new Date(at(1)).toISOString()); // the session's start is kept
    expect(r.effects[0]).toEqual({ type: "startDispatching" });
    s = r.state;

    r = reduceSession(s, { type: "stop", actor: "dave" }, at(30));
    expect(r.state).toMatchObject({ status: "stopping", reason: "user_stop", actor: "dave" });
    expect(r.effects.map((e) => e.type)).toEqual(["stopDispatching", "checkpointWorkers", "notify"]);
    s = r.state;

    r = reduceSession(s, { type: "workersCheckpointed" }, at(31));
    expect(r.state).toMatchObject({ status: "idle", reason: "user_stop", actor: "dave" });
  });

  it("completes when no work is left and runs again when new work appears", () => {
    const done = reduceSession(fixtures.running, { type: "allTasksDone" }, now).state;
    expect(done).toMatchObject({ status: "completed", reason: "all_done", actor: "autopilot" });
    const again = reduceSession(done, { type: "newWork", issues: [12], actor: "erin" }, now);
    expect(again.state).toMatchObject({ status: "running", reason: "new_work", actor: "erin" });
    expect(again.effects).toContainEqual({
      type: "notify",
      level: "info",
      message: "New ready tasks (#12): Autopilot is running again.",
    });
  });

  it("pauses itself after consecutive failures, keeps the reason through paused, resets the counter on resume", () => {
    const pausing = reduceSession(fixtures.running, events.consecutiveFailures, now);
    expect(pausing.state).toMatchObject({
      status: "pausing",
      reason: "consecutive_failures",
      actor: "autopilot",
      detail: "3 consecutive tasks failed: #4, #7, #9",
    });
    expect(pausing.effects).toContainEqual({ type: "checkpointWorkers", reason: "consecutive_failures" });
    expect(pausing.effects.find((e) => e.type === "notify")).toMatchObject({ level: "warning" });

    const paused = reduceSession(pausing.state, { type: "workersCheckpointed" }, now).state;
    expect(paused).toMatchObject({ status: "paused", reason: "consecutive_failures", actor: "autopilot" });
    expect(paused.detail).toBe("3 consecutive tasks failed: #4, #7, #9");

    const resumed = reduceSession(paused, { type: "resume", actor: "alice" }, now);
    expect(resumed.effects).toContainEqual({ type: "resetConsecutiveFailures" });
    expect(resumed.state.detail).toBeUndefined();
  });

  it("pauses on an exhausted budget with the detail", () => {
    const r = reduceSession(fixtures.running, events.budgetExhausted, now);
    expect(r.state).toMatchObject({
      status: "pausing",
      reason: "budget_exhausted",
      detail: "session USD budget 20 used",
    });
  });

  it("stops on abort with the failed task named", () => {
    const r = reduceSession(fixtures.running, events.abort, now);
    expect(r.state).toMatchObject({ status: "stopping", reason: "error_abort", detail: "task #7 failed" });
    const idle = reduceSession(r.state, { type: "workersCheckpointed" }, now).state;
    expect(idle).toMatchObject({ status: "idle", reason: "error_abort", detail: "task #7 failed" });
  });

  it("skips the wait when no worker is running", () => {
    const cases: [SessionEvent, SessionStatus, SessionReason][] = [
      [{ type: "pause", actor: "bob", activeWorkers: 0 }, "paused", "user_pause"],
      [{ type: "stop", actor: "bob", activeWorkers: 0 }, "idle", "user_stop"],
      [{ type: "consecutiveFailures", count: 3, activeWorkers: 0 }, "paused", "consecutive_failures"],
      [{ type: "budgetExhausted", activeWorkers: 0 }, "paused", "budget_exhausted"],
      [{ type: "abort", activeWorkers: 0 }, "idle", "error_abort"],
    ];
    for (const [event, status, reason] of cases) {
      const r = reduceSession(fixtures.running, event, now);
      expect([r.state.status, r.state.reason]).toEqual([status, reason]);
      expect(r.effects.map((e) => e.type)).not.toContain("checkpointWorkers");
    }
    // With workers still running the wait stays.
    expect(reduceSession(fixtures.running, { type: "pause", activeWorkers: 2 }, now).state.status).toBe(
      "pausing",
    );
  });

  it("cancels a pause in progress on resume", () => {
    const r = reduceSession(fixtures.pausing, { type: "resume", actor: "bob" }, now);
    expect(r.state.status).toBe("running");
    expect(r.effects).toContainEqual({
      type: "notify",
      level: "info",
      message: "Pause cancelled by @bob; Autopilot keeps running.",
    });
  });

  it("accepts epoch milliseconds as now", () => {
    expect(reduceSession(fixtures.idle, events.start, t0).state.since).toBe("2026-03-01T10:00:00.000Z");
  });

  it("describes every reason code", () => {
    for (const reason of SESSION_REASONS) expect(describeReason(reason)).toMatch(/\w/);
  });
});
