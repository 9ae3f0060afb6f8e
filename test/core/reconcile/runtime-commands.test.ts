/**
 * The design documents' run-time commands (issue 34, item 8): `/autopilot go` starts a session (004),
 * `/autopilot mode auto|semi-auto` switches who starts tasks while the session runs (001/002's toggle), and
 * `/autopilot abort` cancels running workers at once, their pushed work kept (000 §4.2).
 */
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../../src/core/tasks/commands.js";
import { applyEffects, comment, config, issue, minutes, only, run, step, world } from "../world.js";

const TRACKING = { number: 1, body: "", updatedAt: minutes(0).toISOString(), state: "open" as const };
const onTracking = { issue: 1, trackingIssue: 1 };

describe("/autopilot go", () => {
  it("is `start`", () => {
    expect(parseCommand("/autopilot go", onTracking)).toMatchObject({ command: { name: "start" } });
  });

  it("starts a session that waits for a person", () => {
    const w = world({ issues: [issue(2)], trackingIssue: TRACKING });
    const waiting = step(w, null, { config: config({ session: { autoStart: false } }) });
    expect(waiting.state.session.status).not.toBe("running");
    const go = step({ ...w, comments: [comment(700, 1, "dev", "/autopilot go")] }, waiting.state, {
      config: config({ session: { autoStart: false } }),
      now: minutes(2),
    });
    expect(go.state.session.status).toBe("running");
    expect(only(go.decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([2]);
  });
});

describe("/autopilot mode", () => {
  it("reads auto and semi-auto, and explains anything else", () => {
    expect(parseCommand("/autopilot mode semi-auto", onTracking)).toMatchObject({
      command: { name: "mode", mode: "semi-auto" },
    });
    const bad = parseCommand("/autopilot mode fast", onTracking);
    expect(bad?.kind).toBe("invalid");
    expect(bad && "problem" in bad ? bad.problem : "").toMatch(/`auto`.*`semi-auto`/);
  });

  it("semi-auto: a running session dispatches nothing more until a person runs a task", () => {
    const w = world({ issues: [issue(2), issue(3)], trackingIssue: TRACKING });
    const auto = config({ maxParallel: 1 });
    const first = step(w, null, { config: auto });
    expect(only(first.decision.effects, "dispatchWorker").map((d) => d.issue)).toHaveLength(1);
    // The slot frees (the first task's worker is gone, its issue closed); the writer switched to semi-auto.
    const started = only(first.decision.effects, "dispatchWorker")[0]!.issue;
    const other = started === 2 ? 3 : 2;
    const switched = step(
      {
        ...w,
        issues: [issue(started, { state: "closed", labels: [] }), issue(other)],
        comments: [comment(700, 1, "dev", "/autopilot mode semi-auto")],
      },
      first.state,
      { config: auto, now: minutes(5) },
    );
    expect(switched.state.mode).toBe("semi-auto");
    expect(only(switched.decision.effects, "dispatchWorker")).toEqual([]);
    const reply = only(switched.decision.effects, "comment").find((c) => c.key === "reply-700");
    expect(reply?.body).toMatch(/Now `semi-auto`.*says `auto`; `\/autopilot mode auto` goes back/s);
  });

  it("auto over a semi-auto file: ready tasks start by score", () => {
    const w = world({
      issues: [issue(2)],
      trackingIssue: TRACKING,
      comments: [comment(700, 1, "dev", "/autopilot mode auto")],
    });
    const { decision, state } = step(w, null, { config: config({ mode: "semi-auto" }) });
    expect(state.mode).toBe("auto");
    expect(only(decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([2]);
  });

  it("back to the file's mode forgets the switch", () => {
    const w = world({ issues: [], trackingIssue: TRACKING });
    const first = step({ ...w, comments: [comment(700, 1, "dev", "/autopilot mode semi-auto")] }, null);
    expect(first.state.mode).toBe("semi-auto");
    const back = step({ ...w, comments: [comment(701, 1, "dev", "/autopilot mode auto")] }, first.state, {
      now: minutes(2),
    });
    expect(back.state.mode).toBeNull();
  });

  it("from someone without write access changes nothing", () => {
    const w = world({
      issues: [issue(2)],
      trackingIssue: TRACKING,
      comments: [comment(700, 1, "reader", "/autopilot mode semi-auto")],
    });
    const { decision, state } = step(w, null);
    expect(state.mode).toBeNull();
    expect(only(decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([2]);
  });
});

describe("/autopilot abort", () => {
  /** A running session: #2's worker was dispatched and runs (its run live on GitHub). */
  function working() {
    const w = world({ issues: [issue(2)], trackingIssue: TRACKING });
    const first = step(w, null);
    const dispatch = only(first.decision.effects, "dispatchWorker")[0]!;
    const live = run(900, 2, { dispatchId: dispatch.dispatchId, attempt: dispatch.attempt });
    const next = applyEffects(w, first.decision.effects, minutes(1));
    return { world: { ...next, runs: [live] }, state: first.state };
  }

  it("cancels running workers at once, puts their tasks back to ready with the branch kept, and stops", () => {
    const { world: w, state } = working();
    const { decision, state: after } = step(
      { ...w, comments: [comment(700, 1, "dev", "/autopilot abort")] },
      state,
      { now: minutes(3) },
    );
    expect(only(decision.effects, "cancelRun")).toEqual([{ type: "cancelRun", runId: 900, issue: 2 }]);
    expect(after.session.status).toBe("idle");
    expect(after.tasks[2]?.label).toBe("ready");
    expect(after.tasks[2]?.handled).toBe(after.tasks[2]?.dispatchId);
    expect(only(decision.effects, "deleteBranch")).toEqual([]);
    expect(only(decision.effects, "dispatchWorker")).toEqual([]);
    const reply = only(decision.effects, "comment").find((c) => c.key === "reply-700");
    expect(reply?.body).toMatch(/1 worker run of #2 cancelled now/);
  });

  it("where `stop` waits for the iteration boundary and cancels nothing", () => {
    const { world: w, state } = working();
    const { decision, state: after } = step(
      { ...w, comments: [comment(700, 1, "dev", "/autopilot stop")] },
      state,
      { now: minutes(3) },
    );
    expect(only(decision.effects, "cancelRun")).toEqual([]);
    expect(after.session.status).toBe("stopping");
  });

  it("with nothing running says so; from someone without write access changes nothing", () => {
    const idle = step(
      world({ trackingIssue: TRACKING, comments: [comment(700, 1, "dev", "/autopilot abort")] }),
      null,
    );
    const reply = only(idle.decision.effects, "comment").find((c) => c.key === "reply-700");
    expect(reply?.body).toMatch(/Nothing to abort/);
    const { world: w, state } = working();
    const refused = step({ ...w, comments: [comment(701, 1, "reader", "/autopilot abort")] }, state, {
      now: minutes(3),
    });
    expect(only(refused.decision.effects, "cancelRun")).toEqual([]);
    expect(refused.state.session.status).toBe("running");
  });
});
