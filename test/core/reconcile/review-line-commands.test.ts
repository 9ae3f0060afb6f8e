/**
 * Commands in a pull-request review's line comments (issue 34, item 5): a writer's `/autopilot` command written on
 * a line of a task PR's diff is acted on or answered, with a reaction on the line comment and the reply in the PR's
 * conversation. GitHub numbers line comments apart from issue comments, so they are remembered apart too.
 */
import { describe, expect, it } from "vitest";
import type { DashboardState } from "../../../src/core/dashboard/index.js";
import { evaluatePullRequest } from "../../../src/core/gates/gates.js";
import { comment, issue, minutes, only, pull, step, world } from "../world.js";

const TRACKING = { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" as const };

/** Task 3 in review on PR #103 (a human gate holds it), and these comments new. */
function inReview(...comments: ReturnType<typeof comment>[]) {
  return world({
    issues: [issue(3, { labels: ["autopilot:review"] })],
    pulls: [pull(3, { checks: [] })],
    comments,
    trackingIssue: TRACKING,
  });
}

/** The state after a first reconcile at T0, which starts reading line comments. */
function started(): DashboardState {
  return step(inReview(), null).state;
}

const later = { now: minutes(30) };
const line = (id: number, author: string, body: string, at = minutes(25)) =>
  comment(id, 103, author, body, { review: true, createdAt: at.toISOString() });

describe("a command in a line comment of a task PR's review", () => {
  it("is answered: a reaction on the line comment and the reply in the PR's conversation", () => {
    const { decision } = step(inReview(line(500, "dev", "/autopilot status")), started(), later);
    expect(only(decision.effects, "react")).toEqual([
      { type: "react", commentId: 500, content: "+1", review: true },
    ]);
    const reply = only(decision.effects, "comment").find((c) => c.key === "reply-review-500");
    expect(reply?.issue).toBe(103);
    expect(reply?.body).toMatch(/^> \/autopilot status/);
  });

  it("is acted on once: the next reconcile does not answer it again", () => {
    const w = inReview(line(500, "dev", "/autopilot status"));
    const first = step(w, started(), later);
    const again = step(w, first.state, { now: minutes(31) });
    expect(only(again.decision.effects, "react")).toEqual([]);
    expect(only(again.decision.effects, "comment").filter((c) => c.key === "reply-review-500")).toEqual([]);
  });

  it("is not mistaken for an issue comment of the same number that was processed", () => {
    const state = started();
    state.cursor = { id: 900, at: minutes(1).toISOString() };
    state.processed = [500];
    const { decision } = step(inReview(line(500, "dev", "/autopilot status")), state, later);
    expect(only(decision.effects, "react")).toEqual([
      expect.objectContaining({ commentId: 500, review: true }),
    ]);
  });

  it("written before Autopilot read line comments is left alone", () => {
    const { decision } = step(inReview(line(500, "dev", "/autopilot status", minutes(-5))), started(), later);
    expect(only(decision.effects, "react")).toEqual([]);
  });

  it("by a non-writer changes nothing and is answered with the reason", () => {
    const { decision } = step(inReview(line(500, "reader", "/autopilot skip")), started(), later);
    expect(only(decision.effects, "react")).toEqual([
      { type: "react", commentId: 500, content: "confused", review: true },
    ]);
    expect(only(decision.effects, "comment").map((c) => c.body)).toEqual([
      expect.stringMatching(/only takes commands from people with write access/),
    ]);
  });

  it("`fix` there is answered with where to write it, and asks nothing of a worker", () => {
    const { decision, state } = step(
      inReview(line(500, "dev", "/autopilot fix use hello")),
      started(),
      later,
    );
    expect(only(decision.effects, "react")[0]).toMatchObject({ content: "confused", review: true });
    const reply = only(decision.effects, "comment").find((c) => c.key === "reply-review-500");
    expect(reply?.body).toMatch(/read from the pull request's conversation/);
    expect(state.tasks[3]?.fixAsked).toBeUndefined();
  });
});

describe("review feedback", () => {
  const gateOptions = {
    requiredChecks: [],
    botLogin: "autopilot[bot]",
    permissions: { dev: "write" as const },
    humanGateRules: [],
    feedbackSha: null,
    autoMerge: true,
    now: minutes(30),
    checksTimeoutMinutes: 30,
  };
  const threads = (body: string) => [
    { path: "src/a.js", comments: [{ author: "dev", body, createdAt: minutes(25).toISOString() }] },
  ];

  it("a conversation that is only a command for the controller is not feedback for the agent", () => {
    const { verdict } = evaluatePullRequest(
      pull(3, { openThreads: threads("/autopilot status") }),
      gateOptions,
    );
    expect(verdict).toMatchObject({ action: "merge" });
  });

  it("a writer's words on a line are feedback, as before", () => {
    const { verdict } = evaluatePullRequest(pull(3, { openThreads: threads("Rename this.") }), gateOptions);
    expect(verdict).toMatchObject({ action: "feedback", kinds: ["threads"] });
  });
});
