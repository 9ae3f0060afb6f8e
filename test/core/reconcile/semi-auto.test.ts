/**
 * `mode: semi-auto`, `/autopilot run #N` and `session.autoStart: false`, decided by reconcile on test worlds
 * (the scenario scenarios/semi-auto.yml runs the same on the sandbox).
 */
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../../src/core/tasks/commands.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { type RunFacts, runVerdict } from "../../../src/core/reconcile/commands/run-command.js";
import {
  applyEffects,
  comment,
  config,
  input,
  issue,
  minutes,
  only,
  run,
  step,
  T0,
  world,
} from "../world.js";

const semiAuto = config({ mode: "semi-auto" });

/** A running semi-auto session (the tracking issue is #1) with three ready tasks; #3 is critical, #4 waits on #2. */
function semiAutoSession() {
  const first = step(
    world({
      issues: [
        issue(2),
        issue(3, { labels: ["autopilot:ready", "critical"] }),
        issue(4, { body: "Depends on #2" }),
      ],
    }),
    null,
    { config: semiAuto },
  );
  return first;
}

function dashboard(d: ReturnType<typeof decide>): string {
  return only(d.effects, "writeTrackingIssue")[0]?.body ?? "";
}

/** What a reply says under the command line it quotes. */
function said(body: string): string {
  return body.slice(body.indexOf("\n\n") + 2);
}

/** The line of `text` that holds `marker`, or "" when none does. */
function lineWith(text: string, marker: string): string {
  return text.split("\n").find((l) => l.includes(marker)) ?? "";
}

describe("mode: semi-auto", () => {
  it("starts the session but dispatches nothing, and names the next task with its score and why", () => {
    const first = semiAutoSession();
    expect(first.state.session.status).toBe("running");
    expect(only(first.decision.effects, "dispatchWorker")).toEqual([]);
    const body = dashboard(first.decision);
    // The next task by score, its score and why; the command a writer gives to start it.
    const next = lineWith(body, "next: #3 Task 3");
    expect(next).toMatch(/\b50\b/);
    expect(next).toContain("critical");
    expect(lineWith(body, "`/autopilot run #3`")).toContain("write access");
    // A later reconcile with nothing new still dispatches nothing, and the session does not complete.
    const again = decide({ ...input(first.world, { config: semiAuto }), state: first.state });
    expect(only(again.effects, "dispatchWorker")).toEqual([]);
    expect(again.state.session.status).toBe("running");
  });

  it("starts the task a writer names with /autopilot run, once, with a reaction", () => {
    const first = semiAutoSession();
    const w = { ...first.world, comments: [comment(500, 1, "dev", "/autopilot run #2")] };
    const d = decide({ ...input(w, { config: semiAuto }), state: first.state });
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 2, attempt: 1 })]);
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "+1" }]);
    const dispatched = d.log.filter((l) => l.startsWith("#2: dispatch"));
    expect(dispatched).toHaveLength(1);
    expect(dispatched[0]).toContain("dev");
    expect(dispatched[0]).toContain("/autopilot run");
    // The same delivery again (the state it produced), and a reconcile of the world it produced: no second start.
    const duplicate = decide({ ...input(w, { config: semiAuto }), state: d.state });
    expect(only(duplicate.effects, "dispatchWorker")).toEqual([]);
    const after = applyEffects(w, d.effects, T0);
    const next = decide({ ...input(after, { config: semiAuto }), state: d.state });
    expect(only(next.effects, "dispatchWorker")).toEqual([]);
  });

  it("answers /autopilot status with the task it waits to be told to run", () => {
    const first = semiAutoSession();
    const w = { ...first.world, comments: [comment(500, 1, "dev", "/autopilot status")] };
    const d = decide({ ...input(w, { config: semiAuto }), state: first.state });
    const status = said(only(d.effects, "comment")[0]!.body);
    expect(status).toContain("`/autopilot run #3`");
    expect(status).not.toContain("`/autopilot run #2`");
  });

  it("on a task issue, /autopilot run starts that issue", () => {
    const first = semiAutoSession();
    const w = { ...first.world, comments: [comment(500, 3, "dev", "/autopilot run")] };
    const d = decide({ ...input(w, { config: semiAuto }), state: first.state });
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([3]);
  });

  it("refuses a run from someone without write access, and starts nothing", () => {
    const first = semiAutoSession();
    const w = { ...first.world, comments: [comment(500, 1, "triager", "/autopilot run #3")] };
    const d = decide({ ...input(w, { config: semiAuto }), state: first.state });
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "confused" }]);
    expect(said(only(d.effects, "comment")[0]!.body)).toContain("write access");
  });

  it("refuses a task that waits on a dependency, naming it", () => {
    const first = semiAutoSession();
    const w = { ...first.world, comments: [comment(500, 1, "dev", "/autopilot run #4")] };
    const d = decide({ ...input(w, { config: semiAuto }), state: first.state });
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
    expect(only(d.effects, "react")[0]).toMatchObject({ content: "confused" });
    expect(only(d.effects, "comment")[0]).toMatchObject({ issue: 1, key: "reply-500" });
    expect(said(only(d.effects, "comment")[0]!.body)).toContain("waiting on #2");
  });

  it("refuses while the session is paused, and when every slot is busy", () => {
    const first = semiAutoSession();
    const paused = {
      ...first.world,
      comments: [comment(500, 1, "dev", "/autopilot pause"), comment(501, 1, "dev", "/autopilot run #3")],
    };
    const d = decide({ ...input(paused, { config: semiAuto }), state: first.state });
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
    const pausedReply = said(only(d.effects, "comment").find((c) => c.key === "reply-501")!.body);
    expect(pausedReply).toContain("paused");
    expect(pausedReply).toContain("`/autopilot resume`");

    const one = config({ mode: "semi-auto", maxParallel: 1 });
    const started = step(
      { ...first.world, comments: [comment(500, 1, "dev", "/autopilot run #2")] },
      first.state,
      { config: one },
    );
    started.world.runs = [run(90, 2, { dispatchId: "2-1-seed" })];
    const full = { ...started.world, comments: [comment(501, 1, "dev", "/autopilot run #3")] };
    const d2 = decide({ ...input(full, { config: one }), state: started.state });
    expect(only(d2.effects, "dispatchWorker")).toEqual([]);
    // The refusal names the task holding the one slot and the setting that sets how many there are.
    const fullReply = said(only(d2.effects, "comment")[0]!.body);
    expect(fullReply).toContain("#2");
    expect(fullReply).toContain("`maxParallel`");
  });

  it("never re-dispatches a task back in the queue by itself (a crash's retry waits for a person too)", () => {
    const first = semiAutoSession();
    const ran = step(
      { ...first.world, comments: [comment(500, 1, "dev", "/autopilot run #3")] },
      first.state,
      { config: config({ mode: "semi-auto", retryBaseMs: 0 }) },
    );
    // The run vanished: the task goes back to ready; nothing starts it again.
    const later = decide({
      ...input({ ...ran.world, runs: [] }, { config: config({ mode: "semi-auto", retryBaseMs: 0 }) }),
      state: ran.state,
      now: minutes(60),
    });
    expect(only(later.effects, "setStateLabel")).toEqual([
      expect.objectContaining({ issue: 3, add: "autopilot:ready" }),
    ]);
    expect(only(later.effects, "dispatchWorker")).toEqual([]);
  });
});

describe("/autopilot run with mode: auto", () => {
  it("starts the named task ahead of the score order, and the free slots left go by score", () => {
    const fresh = step(
      world({
        issues: [issue(2), issue(3, { labels: ["autopilot:ready", "critical"] }), issue(4)],
        comments: [comment(500, 4, "dev", "/autopilot run")],
      }),
      null,
      { config: config({ maxParallel: 2 }) },
    );
    expect(only(fresh.decision.effects, "dispatchWorker").map((e) => e.issue)).toEqual([4, 3]);
  });
});

describe("session.autoStart: false", () => {
  const manual = config({ session: { autoStart: false } });

  it("does not start when work is ready; the dashboard says it waits for /autopilot start", () => {
    const first = step(world({ issues: [issue(2), issue(3)] }), null, { config: manual });
    expect(first.state.session.status).toBe("idle");
    expect(only(first.decision.effects, "dispatchWorker")).toEqual([]);
    const waits = lineWith(dashboard(first.decision), "`/autopilot start`");
    expect(waits).toMatch(/(?<!\d)2 ready tasks\b/);
    expect(waits).toContain("`session.autoStart`");
    // A writer's run is refused with the way forward; a writer's start starts the session and the work.
    const asked = { ...first.world, comments: [comment(500, 1, "dev", "/autopilot run #2")] };
    const refused = decide({ ...input(asked, { config: manual }), state: first.state });
    expect(only(refused.effects, "dispatchWorker")).toEqual([]);
    expect(said(only(refused.effects, "comment")[0]!.body)).toContain("`/autopilot start`");
    const started = { ...first.world, comments: [comment(501, 1, "dev", "/autopilot start")] };
    const d = decide({ ...input(started, { config: manual }), state: first.state });
    expect(d.state.session).toMatchObject({ status: "running", actor: "dev" });
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2, 3]);
  });

  it("a completed session does not come back by itself when new work is labeled", () => {
    const first = step(world({ issues: [] }), null, { config: manual });
    const done = {
      ...first.state,
      session: { ...first.state.session, status: "completed" as const, reason: "all_done" as const },
    };
    const d = decide({ ...input({ ...first.world, issues: [issue(5)] }, { config: manual }), state: done });
    expect(d.state.session.status).toBe("completed");
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
    expect(dashboard(d)).toContain("Waiting for `/autopilot start`");
  });
});

describe("parsing /autopilot run", () => {
  const tracking = { issue: 1, trackingIssue: 1 };
  it("takes an issue number, or the task issue it is written on", () => {
    expect(parseCommand("/autopilot run #12", tracking)).toMatchObject({
      kind: "command",
      command: { name: "run", issue: 12 },
    });
    expect(parseCommand("/autopilot run", { issue: 7, trackingIssue: 1 })).toMatchObject({
      command: { name: "run", issue: 7 },
    });
    expect(parseCommand("/autopilot run", tracking)).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("`/autopilot run #N`"),
    });
    expect(parseCommand("/autopilot run next", tracking)).toMatchObject({ kind: "invalid" });
  });
});

describe("runVerdict", () => {
  const ready: RunFacts = {
    issue: 5,
    open: true,
    session: "running",
    configHeld: false,
    status: "ready",
    epic: null,
    live: false,
    waiting: null,
    notInPool: null,
    waitUntil: null,
    candidate: true,
    maxParallel: 2,
    busy: [],
    readyLabel: "autopilot:ready",
  };
  // Each refusal names what a person needs to know or do next: the facts, the command or the setting.
  it.each<[string, Partial<RunFacts>, string[]]>([
    ["closed", { open: false }, ["#5", "open"]],
    ["no label", { status: null, candidate: false }, ["#5", "`autopilot:ready`"]],
    ["running", { live: true }, ["#5", "in progress"]],
    ["failed", { status: "failed", candidate: false }, ["#5", "failed", "`/autopilot retry #5`"]],
    ["in review", { status: "review", candidate: false }, ["#5", "review"]],
    [
      "labeled by a stranger",
      {
        notInPool: "the `autopilot:ready` label was added by mallory, who has no write access",
        candidate: false,
      },
      ["#5", "the `autopilot:ready` label was added by mallory, who has no write access"],
    ],
    [
      "backoff",
      { waitUntil: { at: "10:30 UTC", why: "crashed" }, candidate: false },
      ["#5", "10:30 UTC", "crashed", "`/autopilot retry #5`"],
    ],
    ["stopped", { session: "idle" }, ["#5", "session", "`/autopilot start`"]],
    ["stopping", { session: "stopping" }, ["#5", "stopping", "`/autopilot start`"]],
    ["no config", { configHeld: true }, ["#5", "`.github/autopilot.yml`"]],
    ["slots full", { busy: [2, 3] }, ["#2, #3", "`maxParallel`"]],
  ])("refuses: %s", (_name, facts, parts) => {
    const verdict = runVerdict({ ...ready, ...facts });
    expect(verdict.start).toBe(false);
    const reason = verdict.start ? "" : verdict.reason;
    for (const part of parts) expect(reason).toContain(part);
  });
  it("starts a ready candidate with a free slot in a running session", () => {
    expect(runVerdict({ ...ready, busy: [2] })).toEqual({ start: true });
  });
});
