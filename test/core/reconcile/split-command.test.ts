/**
 * `/autopilot split #N` on the controller's side (src/core/reconcile/commands/split-command.ts): the splitting
 * run's dispatch, the proposal waiting for a writer, the approval that asks for the sub-issues until the parent
 * is their epic, and the words that never count.
 */
import { describe, expect, it } from "vitest";
import { BOT, comment, issue, minutes, only, result, step, world } from "../world.js";

const DIGEST = "a".repeat(64);

function jobPlan(effects: Parameters<typeof only>[0]): unknown {
  const dispatch = only(effects, "dispatchWorker")[0];
  const text = dispatch?.inputs?.config;
  return text ? (JSON.parse(text) as { plan?: unknown }).plan : undefined;
}

/**
 * Issue 7, no task (so not read), after `dev`'s `/autopilot split #7` on the dashboard: labeled ready, and once a
 * read shows it, dispatched as a splitting run.
 */
function asked() {
  const first = step(
    world({
      trackingIssue: { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" },
      comments: [comment(900, 50, "dev", "/autopilot split #7")],
    }),
    null,
  );
  expect(only(first.decision.effects, "setStateLabel")).toContainEqual(
    expect.objectContaining({ issue: 7, add: "autopilot:ready" }),
  );
  expect(only(first.decision.effects, "dispatchWorker")).toHaveLength(0);
  const seen = {
    ...first.world,
    issues: [...first.world.issues, issue(7, { labels: ["autopilot:ready"], readyLabeledBy: BOT })],
  };
  return step(seen, first.state, { now: minutes(1) });
}

/** After the splitting run proposed sub-issues: waiting in needs-human. */
function proposed() {
  const first = asked();
  expect(jobPlan(first.decision.effects)).toBe("split");
  const planned = {
    ...first.world,
    issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human"] })),
    runs: first.world.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
    workerResults: [
      result(7, {
        result: "needs_human",
        reason: "sub-issues proposed",
        plan: { digest: DIGEST },
        updatedAt: minutes(3).toISOString(),
      }),
    ],
  };
  return step(planned, first.state, { now: minutes(4) });
}

describe("/autopilot split", () => {
  it("labels an issue that is no task ready for a writer's split, then dispatches a splitting run", () => {
    const { state, decision } = asked();
    expect(state.splits?.[7]).toMatchObject({ by: "dev" });
    expect(jobPlan(decision.effects)).toBe("split");
    expect(state.tasks[7]?.planRun).toBe(state.tasks[7]?.dispatchId);
  });

  it("refuses a split from someone without write access, and dispatches nothing", () => {
    const { state, decision } = step(
      world({
        trackingIssue: { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" },
        comments: [comment(900, 50, "stranger", "/autopilot split #7")],
      }),
      null,
    );
    expect(state.splits).toBeUndefined();
    expect(only(decision.effects, "dispatchWorker")).toHaveLength(0);
    expect(only(decision.effects, "comment")[0]?.body).toMatch(
      /only takes commands from people with write access/,
    );
  });

  it("keeps the proposal waiting for a writer, its reason saying so", () => {
    const { state, decision } = proposed();
    expect(state.tasks[7]?.reason).toMatch(
      /sub-issues proposed: waiting for a writer's `\/autopilot approve #7`/,
    );
    expect(only(decision.effects, "dispatchWorker")).toHaveLength(0);
  });

  it("reports a proposal nobody approved in time as timed out, in the words of a split", () => {
    const waiting = proposed();
    const late = step(waiting.world, waiting.state, { now: minutes(4 + 73 * 60) });
    const alert = only(late.decision.effects, "comment").find((c) => /timed out/.test(c.body));
    expect(alert?.body).toMatch(/The approval of #7's proposed sub-issues timed out/);
    expect(late.state.tasks[7]?.reason).toMatch(/^sub-issues proposed: approval timed out/);
  });

  it("a writer's approve asks for the sub-issues, again on each reconcile until the parent is their epic", () => {
    const waiting = proposed();
    const approved = step(
      {
        ...waiting.world,
        comments: [...waiting.world.comments, comment(901, 7, "dev", "/autopilot approve")],
      },
      waiting.state,
      { now: minutes(6) },
    );
    expect(approved.state.splits?.[7]?.approved).toMatchObject({ digest: DIGEST, by: "dev" });
    const create = only(approved.decision.effects, "createSplitIssues");
    expect(create).toEqual([
      expect.objectContaining({ parent: 7, digest: DIGEST, approvedBy: "dev", ready: "autopilot:ready" }),
    ]);
    expect(create[0]?.remove).toContain("autopilot:needs-human");
    expect(only(approved.decision.effects, "dispatchWorker")).toHaveLength(0);
    // The creation did not finish (a restart, a lost answer): the next reconcile asks for it again, once.
    const again = step(approved.world, approved.state, { now: minutes(7) });
    expect(only(again.decision.effects, "createSplitIssues")).toHaveLength(1);
    expect(only(again.decision.effects, "dispatchWorker")).toHaveLength(0);
    // Still no epic an hour after the approval (the proposal comment edited since, GitHub refusing): a person decides.
    const late = step(again.world, again.state, { now: minutes(67) });
    expect(only(late.decision.effects, "createSplitIssues")).toHaveLength(0);
    expect(late.state.splits).toBeUndefined();
    expect(late.state.tasks[7]?.reason).toMatch(/not all created within 1 hour[\s\S]*`\/autopilot split #7`/);
    expect(late.state.incidents.map((i) => i.kind)).toContain("split");
  });

  it("records the parent as an epic approved by the writer once it holds the created sub-issues", () => {
    const waiting = proposed();
    const approved = step(
      {
        ...waiting.world,
        comments: [...waiting.world.comments, comment(901, 7, "dev", "/autopilot approve")],
      },
      waiting.state,
      { now: minutes(6) },
    );
    const marker = (i: number) =>
      `<!-- autopilot:split-item parent=7 digest=${DIGEST.slice(0, 16)} item=${i} -->`;
    const created = {
      ...approved.world,
      issues: [
        issue(7, { labels: ["autopilot:ready"], subIssues: [8, 9], readyLabeledBy: BOT, edits: [] }),
        issue(8, {
          labels: ["autopilot:ready"],
          body: `Do A.\n${marker(1)}`,
          readyLabeledBy: BOT,
          edits: [],
        }),
        issue(9, {
          labels: ["autopilot:ready"],
          body: `Do B.\n\nDepends on #8\n${marker(2)}`,
          readyLabeledBy: BOT,
          edits: [],
        }),
      ],
    };
    const after = step(created, approved.state, { now: minutes(8) });
    expect(after.state.splits).toBeUndefined();
    expect(after.state.epics?.[7]).toMatchObject({ by: "dev", pooled: [8, 9] });
    expect(only(after.decision.effects, "createSplitIssues")).toHaveLength(0);
    // #8 is worked first; #9 waits for it.
    expect(only(after.decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([8]);
  });
});
