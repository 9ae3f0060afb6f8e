import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyConfigOverrides, DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { type DecideInput, decide } from "../../../src/core/reconcile/decide.js";
import type { Fixture } from "../../fixtures/snapshots/build.js";
import {
  applyEffects,
  comment,
  config,
  input,
  issue,
  minutes,
  only,
  pull,
  result,
  run,
  step,
  world,
} from "../world.js";

const fixtureDir = join(import.meta.dirname, "../../fixtures/snapshots");
const fixtures = readdirSync(fixtureDir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => ({
    name: f.replace(/\.json$/, ""),
    ...(JSON.parse(readFileSync(join(fixtureDir, f), "utf8")) as Fixture),
  }));

function fixtureInput(f: Fixture): DecideInput {
  const cfg = f.config ? applyConfigOverrides(structuredClone(DEFAULT_CONFIG), f.config) : null;
  if (cfg && !cfg.ok) throw cfg.error;
  return {
    snapshot: f.snapshot,
    state: f.snapshot.trackingIssue ? parseDashboard(f.snapshot.trackingIssue.body).state : null,
    config: cfg ? cfg.config : structuredClone(DEFAULT_CONFIG),
    now: new Date(f.now),
    dispatchIdSeed: "seed",
  };
}

describe("reconcile decisions from recorded snapshots", () => {
  it("has fixtures to replay", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(15);
  });

  describe.each(fixtures)("$name", (f) => {
    it(f.description, () => {
      const d = decide(fixtureInput(f));
      expect(d.effects.map((e) => e.type)).toEqual(f.expect.effects.map((e) => e.type));
      d.effects.forEach((effect, i) => {
        expect(effect).toMatchObject(f.expect.effects[i]!);
      });
      expect(d.state.session.status).toBe(f.expect.session);
      for (const line of f.expect.log ?? []) expect(d.log).toContain(line);
    });

    it("decides nothing new when the same snapshot comes again with the resulting state (duplicate delivery)", () => {
      const base = fixtureInput(f);
      const first = decide(base);
      const again = decide({ ...base, state: first.state });
      expect(again.effects).toEqual([]);
      expect(again.state).toEqual(first.state);
    });

    it("decides nothing new on the world its effects produced, the second time", () => {
      const base = fixtureInput(f);
      const first = decide(base);
      const world2 = applyEffects(f.snapshot, first.effects, base.now);
      const state2 = world2.trackingIssue ? parseDashboard(world2.trackingIssue.body).state : first.state;
      const second = decide({ ...base, snapshot: world2, state: state2 });
      const world3 = applyEffects(world2, second.effects, base.now);
      const state3 = world3.trackingIssue ? parseDashboard(world3.trackingIssue.body).state : second.state;
      const third = decide({ ...base, snapshot: world3, state: state3 });
      expect(third.effects).toEqual([]);
    });
  });
});

describe("pool and dispatch", () => {
  it("fills free slots only: live runs count as busy, and a task with a live run is never dispatched again", () => {
    const first = step(world({ issues: [issue(1), issue(2), issue(3)] }), null);
    expect(only(first.decision.effects, "dispatchWorker").map((e) => e.issue)).toEqual([1, 2]);
    // 5 minutes later: #1's run is going, #2's has not appeared yet (dispatch within the grace period).
    const w = first.world;
    w.runs = w.runs.filter((r) => r.issue === 1).map((r) => ({ ...r, status: "in_progress" as const }));
    const d = decide({ ...input(w), state: first.state, now: minutes(5) });
    // #3 waits; #2's dispatch is only sent once more under its own id (its run should have shown by now).
    expect(only(d.effects, "dispatchWorker")).toEqual([
      expect.objectContaining({ issue: 2, attempt: 1, dispatchId: "2-1-seed" }),
    ]);
    expect(decide({ ...input(w), state: d.state, now: minutes(6) }).effects).not.toContainEqual(
      expect.objectContaining({ type: "dispatchWorker" }),
    );
  });

  it("treats a dispatch whose run never appeared as lost after the grace period, and dispatches again", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    const w = { ...first.world, runs: [] };
    const d = decide({
      ...input(w),
      state: first.state,
      now: minutes(11),
      config: config({ retryBaseMs: 0 }),
    });
    expect(d.log).toContain("#1: the worker run never appeared within 10 minutes of the dispatch");
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
    expect(d.state.tasks["1"]).toMatchObject({ retries: 1, failures: 1 });
  });

  it("waits a little for the result of a run that succeeded before counting it as a crash", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    const ended = {
      ...first.world,
      runs: first.world.runs.map((r) => ({
        ...r,
        status: "completed" as const,
        conclusion: "success",
        updatedAt: minutes(5).toISOString(),
      })),
      // The comments were read from a replica that has not seen the worker's last write yet.
      workerResults: [
        result(1, { status: "running", result: undefined, updatedAt: minutes(4).toISOString() }),
      ],
    };
    const soon = decide({ ...input(ended), state: first.state, now: minutes(6) });
    expect(soon.log).toContain(`#1: run ${ended.runs[0]!.id} succeeded; waiting for its result to show`);
    expect(only(soon.effects, "setStateLabel")).toEqual([]);
    expect(soon.state.tasks["1"]).toMatchObject({ retries: 0, failures: 0 });
    const later = decide({ ...input(ended), state: first.state, now: minutes(8) });
    expect(later.log).toContain("#1: the worker run ended (success) without a result");
    expect(later.state.tasks["1"]).toMatchObject({ retries: 1, failures: 1 });
  });

  it("holds the free slots for the tasks a merge it requests unblocks, so the critical one is not overtaken", () => {
    const w = world({
      issues: [
        issue(1, { labels: ["autopilot:review"] }),
        issue(2, { body: "Depends on #1", labels: ["autopilot:ready", "critical"] }),
        issue(3),
      ],
      pulls: [pull(1)],
    });
    const merge = step(w, null);
    expect(only(merge.decision.effects, "mergePr")).toEqual([expect.objectContaining({ issue: 1 })]);
    expect(only(merge.decision.effects, "dispatchWorker")).toEqual([]);
    // The merge closed #1: the critical task and the other one take the two slots.
    const next = step(merge.world, merge.state, { now: minutes(1) });
    expect(only(next.decision.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2, 3]);
  });

  it("leaves out issues labeled ready by someone without write access, and says so on the dashboard", () => {
    const w = world({
      issues: [
        issue(1, { readyLabeledBy: "triager" }),
        issue(2, { readyLabeledBy: null }),
        issue(3, { readyLabeledBy: "dev" }),
      ],
    });
    const d = decide(input(w));
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([3]);
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("### Not in the pool (2)");
    expect(body).toMatch(/added by `@\u200d?triager`, who has no write access/);
  });

  it("leaves a task too thin for the definition of ready out of the pool, saying what it lacks, and refuses to run it", () => {
    const w = world({
      issues: [
        issue(1, { body: "Fix it." }),
        issue(2, {
          body: "### Goal\nFormat prices as dollars on the cart page.\n\n### Acceptance criteria\n1234 shows as $12.34.",
        }),
      ],
    });
    const definitionOfReady = { minWords: 8, sections: ["Goal", "Acceptance criteria"] };
    const d = decide(input(w, { config: config({ definitionOfReady }) }));
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("### Not in the pool (1)");
    expect(body).toMatch(/#1 .* too thin to act on: its body has 2 words, fewer than 8; no "Goal" section/);
    // Off (the default), the same task is dispatched.
    expect(only(decide(input(w)).effects, "dispatchWorker").map((e) => e.issue)).toEqual([1, 2]);
  });

  it("honours the exclude label and reports dependency cycles while the others proceed", () => {
    const w = world({
      issues: [
        issue(1, { body: "Depends on #2" }),
        issue(2, { body: "Blocked by #1" }),
        issue(3, { labels: ["autopilot:ready", "autopilot:exclude"] }),
        issue(4),
      ],
    });
    const d = decide(input(w));
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([4]);
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("### Dependency cycles (1)");
    expect(body).toContain("#1 → #2 → #1");
  });

  it("skips tasks that wait for a reset time until it has passed", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [
        result(1, { result: "rate_limited", resumeAt: minutes(60).toISOString(), prNumber: undefined }),
      ],
    });
    const d1 = decide(input(w, { now: minutes(21) }));
    expect(only(d1.effects, "dispatchWorker")).toEqual([]);
    expect(d1.state.tasks["1"]!.waitUntil).toBe(minutes(60).toISOString());
    const w2 = applyEffects(w, d1.effects, minutes(21));
    const d2 = decide({
      ...input(w2),
      state: parseDashboard(w2.trackingIssue!.body).state,
      now: minutes(61),
    });
    expect(only(d2.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
  });

  it("penalises earlier retries in the score", () => {
    const first = step(world({ issues: [issue(1, { labels: ["autopilot:failed"] }), issue(2)] }), null, {
      config: config({ maxParallel: 1 }),
    });
    // #2 (no retries) runs; now retry #1 and add #3: #3 beats #1 (1 earlier retry) despite #1 being older.
    const w = { ...first.world, issues: [...first.world.issues, issue(3)], runs: [] };
    w.comments = [comment(800, 1, "dev", "/autopilot retry #1")];
    const d = decide({
      ...input(w),
      state: first.state,
      now: minutes(1),
      config: config({ maxParallel: 2 }),
    });
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([3]);
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toMatch(/\| 1 \| #1 Task 1 \| -15 \| 1 earlier retry \(−15\) \|/);
  });
});

describe("worker results", () => {
  const outcomes: [string, string, Partial<Parameters<typeof result>[1]>?][] = [
    ["blocked", "autopilot:blocked"],
    ["needs_human", "autopilot:needs-human"],
    ["timeout", "autopilot:timeout"],
    ["budget_exceeded", "autopilot:failed"],
    ["rate_limited", "autopilot:ready", { resumeAt: minutes(90).toISOString() }],
  ];
  it.each(outcomes)("%s → %s", (outcome, label, extra) => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: outcome as never, reason: "why", prNumber: undefined, ...extra })],
    });
    const d = decide(input(w, { now: minutes(30) }));
    expect(only(d.effects, "setStateLabel")[0]).toMatchObject({ issue: 1, add: label });
  });

  it("paused (a checkpoint for a pause that is over) → straight back to a worker from its branch", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "paused", prNumber: undefined })],
    });
    const d = decide(input(w, { now: minutes(30) }));
    // in-progress → ready → in-progress within one reconcile: no label change at all.
    expect(only(d.effects, "setStateLabel")).toEqual([]);
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 2 })]);
    expect(d.state.tasks["1"]).toMatchObject({ retries: 0, failures: 0 });
  });

  it("applies the error strategy to a failed task: retry with backoff, then failed after maxRetries", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "failed", reason: "exit 1", prNumber: undefined })],
    });
    const d = decide(input(w, { now: minutes(30) }));
    expect(only(d.effects, "setStateLabel")[0]).toMatchObject({ add: "autopilot:ready" });
    // retryBaseMs 60 s × 2^1 = 2 minutes.
    expect(d.state.tasks["1"]!.waitUntil).toBe(minutes(32).toISOString());
    expect(d.state.tasks["1"]).toMatchObject({ failures: 1, retries: 1 });

    const exhausted = {
      ...d.state,
      tasks: { "1": { ...d.state.tasks["1"]!, failures: 2, handled: undefined, label: undefined } },
    };
    const w2 = {
      ...w,
      workerResults: [
        result(1, { attempt: 3, dispatchId: "1-3-seed", result: "failed", prNumber: undefined }),
      ],
    };
    const d2 = decide({ ...input(w2), state: exhausted, now: minutes(60) });
    expect(only(d2.effects, "setStateLabel")[0]).toMatchObject({ add: "autopilot:failed" });
  });

  it("aborts the session with errorStrategy abort", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] }), issue(2)],
      workerResults: [result(1, { result: "auth", prNumber: undefined })],
    });
    const d = decide(input(w, { now: minutes(30), config: config({ errorStrategy: "abort" }) }));
    expect(d.state.session).toMatchObject({ status: "idle", reason: "error_abort" });
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });

  it("acts on a finished result once (the dispatch id is remembered)", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      workerResults: [result(1, { result: "blocked", reason: "needs an API key", prNumber: undefined })],
    });
    const first = step(w, null, { now: minutes(30) });
    const d = decide({ ...input(first.world), state: first.state, now: minutes(31) });
    expect(d.effects).toEqual([]);
  });

  it("returns an in-progress task without any worker to ready without a penalty", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:in-progress"] })],
      trackingIssue: null,
    });
    const d = decide(input(w, { config: config({ maxParallel: 1 }) }));
    expect(d.log).toContain("#1: in progress without a worker run; back to ready");
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1, attempt: 1 })]);
  });

  it("follows the run of another controller that won the attempt's dispatch lock, instead of re-sending or cancelling", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    // Our dispatch (1-1-seed) lost the lock: the only run of attempt 1 carries the rival's id.
    const w = { ...first.world, runs: [run(95, 1, { dispatchId: "1-1-rival" })] };
    const d = decide({ ...input(w), state: first.state, now: minutes(5) });
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
    expect(only(d.effects, "cancelRun")).toEqual([]);
    expect(d.log).toContain("#1: attempt 1 runs as 1-1-rival (dispatched by another controller)");
    expect(d.state.tasks["1"]).toMatchObject({ dispatchId: "1-1-rival" });
    // The rival's worker finishes: its result is ours.
    const done = {
      ...w,
      runs: [run(95, 1, { dispatchId: "1-1-rival", status: "completed" as const, conclusion: "success" })],
      workerResults: [
        result(1, { dispatchId: "1-1-rival", result: "blocked", reason: "needs a key", prNumber: undefined }),
      ],
    };
    const after = decide({ ...input(done), state: d.state, now: minutes(8) });
    expect(after.log.join("\n")).not.toContain("without a result");
    expect(only(after.effects, "setStateLabel")).toEqual([
      expect.objectContaining({ issue: 1, add: "autopilot:blocked" }),
    ]);
  });

  it("cancels a second live run for the same task", () => {
    const first = step(world({ issues: [issue(1)] }), null);
    const w = first.world;
    w.runs = [run(90, 1, { dispatchId: "1-1-seed" }), run(91, 1, { dispatchId: "1-1-other" })];
    const d = decide({ ...input(w), state: first.state, now: minutes(2) });
    expect(only(d.effects, "cancelRun")).toEqual([{ type: "cancelRun", runId: 91, issue: 1 }]);
  });
});
