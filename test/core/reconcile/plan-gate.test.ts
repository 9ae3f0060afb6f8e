/**
 * The controller's side of the plan gate (src/core/reconcile/commands/plan-approval.ts): which dispatches are
 * planning runs, a proposed plan waiting for a writer, the approval, an answer that asks for a new plan.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseCommand } from "../../../src/core/tasks/commands.js";
import { planDigest } from "../../../src/core/tasks/task-plan.js";
import { comment, config, issue, minutes, only, result, step, world } from "../world.js";

const PLAN = "1. Add greet() in src/greet.js.";
const DIGEST = planDigest(PLAN);
// The gate for labeled tasks only (its default): every test labels the tasks it gates.
const gated = config({ planGate: { ...DEFAULT_CONFIG.planGate, enabled: false } });

function jobPlan(effects: Parameters<typeof only>[0]): unknown {
  const dispatch = only(effects, "dispatchWorker")[0];
  const text = dispatch?.inputs?.config;
  return text ? (JSON.parse(text) as { plan?: unknown }).plan : undefined;
}

/** Task 7 (labeled for the gate) after its planning run proposed a plan. */
function proposed() {
  const first = step(world({ issues: [issue(7, { labels: ["autopilot:ready", "autopilot:plan"] })] }), null, {
    config: gated,
  });
  expect(jobPlan(first.decision.effects)).toBe("propose");
  const planned = {
    ...first.world,
    issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human", "autopilot:plan"] })),
    runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
    workerResults: [
      result(7, {
        result: "needs_human",
        reason: "plan proposed",
        plan: { digest: DIGEST },
        updatedAt: minutes(3).toISOString(),
      }),
    ],
  };
  const after = step(planned, first.state, { now: minutes(4), config: gated });
  return after;
}

describe("the plan gate", () => {
  it("makes a labeled task's first dispatch a planning run, and leaves other tasks alone", () => {
    const other = step(world({ issues: [issue(8)] }), null, { config: gated });
    expect(jobPlan(other.decision.effects)).toBeUndefined();
    const everyTask = step(world({ issues: [issue(8)] }), null, {
      config: config({ planGate: { enabled: true, label: "autopilot:plan" } }),
    });
    expect(jobPlan(everyTask.decision.effects)).toBe("propose");
  });

  it("keeps a proposed plan waiting on a person, and dispatches nothing meanwhile", () => {
    const { state, decision } = proposed();
    expect(state.tasks[7]?.plan).toMatchObject({ digest: DIGEST });
    expect(state.tasks[7]?.plan?.approvedBy).toBeUndefined();
    expect(state.tasks[7]?.label).toBe("needs-human");
    expect(state.tasks[7]?.reason).toMatch(/\/autopilot approve #7/);
    expect(only(decision.effects, "dispatchWorker")).toHaveLength(0);
    // The alert says what to do about a plan: approve it, or answer with changes.
    const alert = only(decision.effects, "comment").find((c) =>
      /has a plan waiting for approval/.test(c.body),
    );
    expect(alert?.body).toMatch(/`\/autopilot approve #7`/);
  });

  it("a writer's approve sends the task to a worker that implements the approved plan", () => {
    const waiting = proposed();
    const approved = step(
      {
        ...waiting.world,
        comments: [...waiting.world.comments, comment(900, 7, "dev", "/autopilot approve")],
      },
      waiting.state,
      { now: minutes(6), config: gated },
    );
    expect(approved.state.tasks[7]?.plan?.approvedBy).toBe("dev");
    expect(jobPlan(approved.decision.effects)).toBe(DIGEST);
  });

  it("takes an approval given before the planning run's result is in, for the plan its comment shows", () => {
    const first = step(
      world({ issues: [issue(7, { labels: ["autopilot:ready", "autopilot:plan"] })] }),
      null,
      {
        config: gated,
      },
    );
    // The run posted its plan and moved the task to needs-human; its result is not written yet.
    const posting = {
      ...first.world,
      issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human", "autopilot:plan"] })),
    };
    // A snapshot that shows the label but not yet the run's marker naming its plan approves nothing.
    const early = step(
      {
        ...posting,
        comments: [comment(900, 7, "dev", "/autopilot approve", { createdAt: minutes(3).toISOString() })],
      },
      first.state,
      { now: minutes(3), config: gated },
    );
    expect(early.state.tasks[7]?.plan).toBeUndefined();
    // The run's marker, still running, names the plan it posted: that is the plan approved.
    const approved = step(
      {
        ...posting,
        comments: [comment(901, 7, "dev", "/autopilot approve", { createdAt: minutes(4).toISOString() })],
        workerResults: [
          result(7, {
            status: "running",
            result: undefined,
            plan: { digest: DIGEST },
            updatedAt: minutes(3.5).toISOString(),
          }),
        ],
      },
      early.state,
      { now: minutes(4), config: gated },
    );
    expect(approved.state.tasks[7]?.plan).toMatchObject({ digest: DIGEST, approvedBy: "dev" });
    // Then the run's result arrives, for that plan: the approval stands and the implementation starts.
    const resulted = step(
      {
        ...approved.world,
        runs: approved.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
        workerResults: [
          result(7, { result: "needs_human", plan: { digest: DIGEST }, updatedAt: minutes(5).toISOString() }),
        ],
      },
      approved.state,
      { now: minutes(6), config: gated },
    );
    expect(resulted.state.tasks[7]?.plan?.approvedBy).toBe("dev");
    expect(resulted.state.tasks[7]?.label).not.toBe("needs-human");
    const next = step(resulted.world, resulted.state, { now: minutes(7), config: gated });
    const dispatched = [
      ...only(resulted.decision.effects, "dispatchWorker"),
      ...only(next.decision.effects, "dispatchWorker"),
    ];
    expect(dispatched.map((e) => jobPlan([e]))).toContain(DIGEST);
  });

  it("does not take an approval written before the plan it would approve was posted (a revision it never saw)", () => {
    const first = step(
      world({ issues: [issue(7, { labels: ["autopilot:ready", "autopilot:plan"] })] }),
      null,
      { config: gated },
    );
    // The planning run posted its plan at minute 5 (its comment's created_at); a writer's approve of minute 4,
    // written while that run was still at work, is read with the run's result in one snapshot.
    const posted = {
      ...first.world,
      issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human", "autopilot:plan"] })),
      runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
      comments: [comment(902, 7, "dev", "/autopilot approve", { createdAt: minutes(4).toISOString() })],
      workerResults: [
        result(7, {
          result: "needs_human",
          reason: "plan proposed",
          plan: { digest: DIGEST, postedAt: minutes(5).toISOString() },
          updatedAt: minutes(5).toISOString(),
        }),
      ],
    };
    const read = step(posted, first.state, { now: minutes(6), config: gated });
    expect(read.state.tasks[7]?.plan?.approvedBy).toBeUndefined();
    expect(only(read.decision.effects, "dispatchWorker")).toEqual([]);
    expect(
      only(read.decision.effects, "comment")
        .map((c) => c.body)
        .join("\n"),
    ).toMatch(/revised after this approval was written/);
    // An approve written once the plan was posted is taken.
    const again = step(
      {
        ...read.world,
        comments: [comment(903, 7, "dev", "/autopilot approve", { createdAt: minutes(7).toISOString() })],
      },
      read.state,
      { now: minutes(7), config: gated },
    );
    expect(again.state.tasks[7]?.plan).toMatchObject({ digest: DIGEST, approvedBy: "dev" });
  });

  it("refuses an approval from someone without write access, and one with no plan waiting", () => {
    const waiting = proposed();
    const stranger = step(
      {
        ...waiting.world,
        comments: [...waiting.world.comments, comment(900, 7, "reader", "/autopilot approve")],
      },
      waiting.state,
      { now: minutes(6), config: gated },
    );
    expect(stranger.state.tasks[7]?.plan?.approvedBy).toBeUndefined();
    expect(only(stranger.decision.effects, "dispatchWorker")).toHaveLength(0);
    const none = step(
      world({ issues: [issue(8)], comments: [comment(900, 8, "dev", "/autopilot approve")] }),
      null,
      { config: gated },
    );
    expect(
      only(none.decision.effects, "comment").some((c) => /no plan waiting for approval/.test(c.body)),
    ).toBe(true);
  });

  it("a writer's other comment asks for a new plan with their words", () => {
    const waiting = proposed();
    const answered = step(
      {
        ...waiting.world,
        comments: [
          comment(900, 7, "dev", "Cover the empty case too.", { createdAt: minutes(5).toISOString() }),
        ],
      },
      waiting.state,
      { now: minutes(6), config: gated },
    );
    expect(jobPlan(answered.decision.effects)).toBe("propose");
  });

  it("does not approve a plan that no longer waits: a writer answered it and a later worker asked a question", () => {
    const waiting = proposed();
    // The gate's label is taken off and a writer answers: the next worker implements without a plan.
    const unlabeled = (w: typeof waiting.world) => ({
      ...w,
      issues: w.issues.map((i) => ({ ...i, labels: i.labels.filter((l) => l !== "autopilot:plan") })),
    });
    const answered = step(
      {
        ...unlabeled(waiting.world),
        comments: [
          comment(900, 7, "dev", "Skip the plan, just do it.", { createdAt: minutes(5).toISOString() }),
        ],
      },
      waiting.state,
      { now: minutes(6), config: gated },
    );
    const sent = only(answered.decision.effects, "dispatchWorker")[0];
    expect(sent && jobPlan([sent])).toBeUndefined();
    // That worker asks a question instead of finishing.
    const asked = step(
      {
        ...answered.world,
        issues: answered.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human"] })),
        runs: answered.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
        workerResults: [
          result(7, {
            attempt: sent!.attempt,
            dispatchId: sent!.dispatchId,
            result: "needs_human",
            reason: "which currency?",
            updatedAt: minutes(9).toISOString(),
          }),
        ],
      },
      answered.state,
      { now: minutes(10), config: gated },
    );
    const alert = only(asked.decision.effects, "comment").find(
      (c) => /#7/.test(c.body) && /needs/.test(c.body),
    );
    expect(alert?.body ?? "").not.toMatch(/plan waiting for approval/);
    const approve = step(
      {
        ...asked.world,
        comments: [comment(901, 7, "dev", "/autopilot approve", { createdAt: minutes(11).toISOString() })],
      },
      asked.state,
      { now: minutes(12), config: gated },
    );
    expect(approve.state.tasks[7]?.plan?.approvedBy).toBeUndefined();
    expect(only(approve.decision.effects, "dispatchWorker")).toHaveLength(0);
  });

  it("parses approve with the task defaulting to the issue it is on", () => {
    expect(parseCommand("/autopilot approve", { issue: 7, trackingIssue: 50 })).toMatchObject({
      command: { name: "approve", issue: 7 },
    });
    expect(parseCommand("/autopilot approve #7", { issue: 50, trackingIssue: 50 })).toMatchObject({
      command: { name: "approve", issue: 7 },
    });
  });
});
