/**
 * The simulation's invariant on the plan gate (sandbox/simulation/sim-plan-invariants.ts), on worlds built by
 * hand: it reports a plan-gated task implemented with no plan, or on a plan no writer approved after it was
 * posted, and stays quiet on a writer's approval.
 */
import { describe, expect, it } from "vitest";
import { planGatedWorkOnlyOnWritersApproval } from "../../sandbox/simulation/sim-plan-invariants.js";
import { planComment, planDigest } from "../../src/core/tasks/task-plan.js";
import { BOT, dispatch, REPO, world } from "./simulation-world.js";

const names = (found: { invariant: string }[]) => found.map((v) => v.invariant);
const LABEL_GATE = { enabled: false, label: "autopilot:plan" };
const PLAN = "1. Change src/task-1.js.";

/** A task labeled for the plan gate, with Autopilot's plan posted on it. */
function planned() {
  const made = world();
  made.store.createIssue(REPO, {
    title: "Task",
    labels: ["autopilot:ready", "autopilot:plan"],
    author: "alice",
  });
  made.store.createComment(REPO, 1, planComment(1, PLAN), BOT);
  return made;
}
const implementing = (plan: string | null) => ({ ...dispatch(1, 20), plan });

describe("planGatedWorkOnlyOnWritersApproval", () => {
  it("a planning run may go before any approval; implementing takes a writer's approval after the plan", () => {
    const { store, o } = planned();
    expect(planGatedWorkOnlyOnWritersApproval(o, implementing("propose"), LABEL_GATE)).toEqual([]);
    const digest = planDigest(PLAN);
    expect(names(planGatedWorkOnlyOnWritersApproval(o, implementing(digest), LABEL_GATE))).toEqual([
      "planGatedWorkOnlyOnWritersApproval",
    ]);
    store.createComment(REPO, 1, "/autopilot approve", "alice");
    expect(planGatedWorkOnlyOnWritersApproval(o, implementing(digest), LABEL_GATE)).toEqual([]);
  });

  it("a non-writer's approval never counts, nor a writer's given before the plan was posted", () => {
    const { store, o } = world();
    store.createIssue(REPO, {
      title: "Task",
      labels: ["autopilot:ready", "autopilot:plan"],
      author: "alice",
    });
    store.createComment(REPO, 1, "/autopilot approve #1", "alice");
    store.createComment(REPO, 1, planComment(1, PLAN), BOT);
    store.createComment(REPO, 1, "/autopilot approve", "tina");
    const found = planGatedWorkOnlyOnWritersApproval(o, implementing(planDigest(PLAN)), LABEL_GATE);
    expect(names(found)).toEqual(["planGatedWorkOnlyOnWritersApproval"]);
    expect(found[0]!.detail).toContain("approved by tina, not writers");
  });

  it("a gated task implemented with no plan, or on a plan Autopilot never posted, is reported", () => {
    const { store, o } = planned();
    store.createComment(REPO, 1, "/autopilot approve", "alice");
    expect(names(planGatedWorkOnlyOnWritersApproval(o, implementing(null), LABEL_GATE))).toEqual([
      "planGatedWorkOnlyOnWritersApproval",
    ]);
    expect(
      names(planGatedWorkOnlyOnWritersApproval(o, implementing(planDigest("another plan")), LABEL_GATE)),
    ).toEqual(["planGatedWorkOnlyOnWritersApproval"]);
  });

  it("the gate applies to every task when enabled, and to no unlabeled task otherwise", () => {
    const { store, o } = world();
    store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    expect(planGatedWorkOnlyOnWritersApproval(o, implementing(null), LABEL_GATE)).toEqual([]);
    expect(
      names(planGatedWorkOnlyOnWritersApproval(o, implementing(null), { ...LABEL_GATE, enabled: true })),
    ).toEqual(["planGatedWorkOnlyOnWritersApproval"]);
  });
});
