/**
 * Attacks on `/autopilot run #N` (run-command.ts, judged in pool-dispatch.ts), decided by reconcile on test
 * worlds: whoever cannot start a task with it, whatever a comment hides it in, and whichever task it may not
 * start. In `mode: semi-auto` the command is the only way a task starts, so a run that slips through is a start
 * nobody with write access asked for.
 */
import { describe, expect, it } from "vitest";
import type { Decision } from "../../../src/core/reconcile/decide.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import type { CommentNode, IssueNode } from "../../../src/core/world.js";
import { BOT, comment, config, input, issue, only, step, world } from "../world.js";

const semiAuto = config({ mode: "semi-auto" });

/**
 * A running session (the tracking issue is #1) over `issues` after its first reconcile; by default a semi-auto one
 * (nothing dispatched) where #2 and #3 are ready (labeled by a maintainer) and #4 depends on #2.
 */
function session(
  issues: IssueNode[] = [issue(2), issue(3), issue(4, { body: "Depends on #2" })],
  cfg = semiAuto,
) {
  const first = step(world({ issues }), null, { config: cfg });
  expect(first.state.session.status).toBe("running");
  if (cfg.mode === "semi-auto") expect(only(first.decision.effects, "dispatchWorker")).toEqual([]);
  return { ...first, cfg };
}

/** The decision on the session's world with `comments` new. */
function withComments(s: ReturnType<typeof session>, comments: CommentNode[]): Decision {
  return decide({ ...input({ ...s.world, comments }, { config: s.cfg }), state: s.state });
}

/** Nothing started: no worker dispatched, no task labeled or recorded in progress (beyond those already). */
function expectNothingStarted(d: Decision, cfg = semiAuto, before: readonly number[] = []): void {
  expect(only(d.effects, "dispatchWorker")).toEqual([]);
  expect(only(d.effects, "setStateLabel").filter((e) => e.add === cfg.labels.inProgress)).toEqual([]);
  const inProgress = Object.entries(d.state.tasks).filter(([, t]) => t.label === "in-progress");
  expect(inProgress.map(([n]) => Number(n))).toEqual([...before]);
}

/** What the reply to comment `id` says (under the command line it quotes), or null when there is none. */
function replyTo(d: Decision, id: number): string | null {
  const body = only(d.effects, "comment").find((c) => c.key === `reply-${id}`)?.body;
  return body === undefined ? null : body.slice(body.indexOf("\n\n") + 2);
}

describe("/autopilot run from someone without write access", () => {
  it.each(["triager", "reader", "outsider", "a-login-with-no-permission-at-all"])(
    "starts nothing when %s asks, on the tracking issue or on the task issue",
    (login) => {
      const s = session();
      const d = withComments(s, [
        comment(500, 1, login, "/autopilot run #2"),
        comment(501, 3, login, "/autopilot run"),
      ]);
      expectNothingStarted(d);
      expect(only(d.effects, "react")).toEqual([
        { type: "react", commentId: 500, content: "confused" },
        { type: "react", commentId: 501, content: "confused" },
      ]);
      // One refusal per login, and it says commands come from people with write access.
      expect(replyTo(d, 500)).toContain("write access");
      // Asked again later (the refusal already given): still nothing starts, and no second reply.
      const again = decide({
        ...input({ ...s.world, comments: [comment(502, 1, login, "/autopilot run #3")] }, { config: s.cfg }),
        state: d.state,
      });
      expectNothingStarted(again);
      expect(replyTo(again, 502)).toBeNull();
    },
  );

  it("starts nothing for a bot or Autopilot's own account, even one that quotes a writer's command at a line start", () => {
    const s = session();
    const d = withComments(s, [
      comment(500, 1, BOT, "/autopilot run #2"),
      comment(501, 1, "dependabot[bot]", "/autopilot run #2"),
      comment(502, 1, "helper", "/autopilot run #3", { authorIsBot: true }),
      comment(503, 1, "ghost", "/autopilot run #3", { author: null }),
    ]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([]);
    expect(only(d.effects, "comment")).toEqual([]);
  });

  it("does not let a writer's command in the same batch start what a stranger asked for", () => {
    const s = session();
    const d = withComments(s, [
      comment(500, 1, "triager", "/autopilot run #3"),
      comment(501, 1, "dev", "/autopilot run #2"),
    ]);
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
  });
});

describe("/autopilot run hidden in a comment", () => {
  it.each<[string, string]>([
    ["a block quote", "> /autopilot run #2"],
    ["a nested block quote", "> > /autopilot run #2"],
    ["a fenced code block", "Try this:\n```\n/autopilot run #2\n```"],
    ["a tilde fence", "~~~text\n/autopilot run #2\n~~~"],
    ["an unclosed fence", "```\n/autopilot run #2"],
    ["indented code", "Example:\n\n    /autopilot run #2"],
    ["an HTML comment", "<!--\n/autopilot run #2\n-->"],
    ["an inline code span", "`/autopilot run #2`"],
    ["the middle of a line", "Maybe someone should /autopilot run #2 later."],
  ])("is ignored in %s, even from a writer", (_where, body) => {
    const s = session();
    const d = withComments(s, [comment(500, 1, "dev", body)]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([]);
    expect(only(d.effects, "comment")).toEqual([]);
    // Read once, and never read again.
    expect(d.state.processed).toContain(500);
  });

  it("is ignored when a stranger quotes a writer's earlier command", () => {
    const s = session();
    const d = withComments(s, [
      comment(500, 1, "outsider", "As dev said:\n\n> /autopilot run #2\n\nplease?"),
    ]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([]);
  });

  it("counts nothing edited into a comment already read, by its stranger author or by a writer", () => {
    const s = session();
    const read = withComments(s, [
      comment(500, 1, "outsider", "Looks good to me."),
      comment(501, 3, "dev", "I will look at this."),
    ]);
    expectNothingStarted(read);
    expect(read.state.processed).toEqual(expect.arrayContaining([500, 501]));
    // The same comments, edited to a command afterwards: the ids were read, the edit counts for nothing.
    const edited = decide({
      ...input(
        {
          ...s.world,
          comments: [
            comment(500, 1, "outsider", "/autopilot run #2"),
            comment(501, 3, "dev", "/autopilot run"),
          ],
        },
        { config: s.cfg },
      ),
      state: read.state,
    });
    expectNothingStarted(edited);
    expect(only(edited.effects, "react")).toEqual([]);
    expect(only(edited.effects, "comment")).toEqual([]);
  });

  it("is not taken from a comment on an issue that is not an Autopilot task", () => {
    const s = session([issue(2), issue(20, { labels: ["bug"] })]);
    const d = withComments(s, [comment(500, 20, "dev", "/autopilot run")]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([]);
  });
});

describe("/autopilot run of a task that may not start", () => {
  it.each<[string, IssueNode]>([
    ["labeled ready by a triager", issue(5, { readyLabeledBy: "triager" })],
    ["labeled ready by someone without any permission", issue(5, { readyLabeledBy: "outsider" })],
    ["labeled ready by nobody known", issue(5, { readyLabeledBy: null })],
    ["not labeled at all", issue(5, { labels: [] })],
    ["labeled with something else", issue(5, { labels: ["bug", "critical"] })],
    ["excluded", issue(5, { labels: ["autopilot:ready", "autopilot:exclude"] })],
  ])("does not dispatch a task %s, and says why", (_what, task) => {
    const s = session([issue(2), task]);
    const d = withComments(s, [comment(500, 1, "dev", "/autopilot run #5")]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "confused" }]);
    expect(replyTo(d, 500)).toContain("#5");
  });

  it("names the stranger who labeled it, and the label a writer gives", () => {
    const s = session([issue(2), issue(5, { readyLabeledBy: "triager" })]);
    const d = withComments(s, [comment(500, 1, "dev", "/autopilot run #5")]);
    expect(replyTo(d, 500)).toContain("triager");
    expect(replyTo(d, 500)).toContain("`autopilot:ready`");
  });

  it("does not dispatch a closed issue, even one still labeled ready, nor one Autopilot cannot see", () => {
    const s = session([issue(2), issue(5, { state: "closed" })]);
    const d = withComments(s, [
      comment(500, 1, "dev", "/autopilot run #5"),
      comment(501, 1, "dev", "/autopilot run #999"),
    ]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([
      { type: "react", commentId: 500, content: "confused" },
      { type: "react", commentId: 501, content: "confused" },
    ]);
  });

  it.each<[string, IssueNode[]]>([
    ["an open task", [issue(2), issue(5, { body: "Depends on #2" })]],
    [
      "an open issue that is not a task",
      [issue(30, { labels: ["bug"] }), issue(5, { body: "Depends on #30" })],
    ],
    [
      "a task that depends on it in turn (a cycle)",
      [issue(5, { body: "Depends on #6" }), issue(6, { body: "Depends on #5" })],
    ],
  ])("does not dispatch a task that depends on %s", (_on, issues) => {
    const s = session([issue(40), ...issues]);
    const d = withComments(s, [comment(500, 1, "dev", "/autopilot run #5")]);
    expectNothingStarted(d);
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "confused" }]);
  });

  it("does not dispatch a dependent in the same batch that starts its dependency", () => {
    const s = session();
    const d = withComments(s, [
      comment(500, 1, "dev", "/autopilot run #2"),
      comment(501, 1, "dev", "/autopilot run #4"),
    ]);
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
    expect(replyTo(d, 501)).toContain("#2");
  });

  it("starts a task once however many writers ask for it in one batch", () => {
    const s = session();
    const d = withComments(s, [
      comment(500, 1, "dev", "/autopilot run #2"),
      comment(501, 2, "maintainer", "/autopilot run"),
      comment(502, 1, "lead", "/autopilot run #2"),
    ]);
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
  });

  it("with mode: auto, does not let a run start what the pool would not, with slots free", () => {
    const auto = config({ maxParallel: 3 });
    const s = session(
      [
        issue(2),
        issue(5, { readyLabeledBy: "triager" }),
        issue(6, { state: "closed" }),
        issue(7, { body: "Depends on #8" }),
        issue(8, { labels: ["bug"] }),
      ],
      auto,
    );
    // The first reconcile started #2, the only task in the pool; two slots are free.
    expect(only(s.decision.effects, "dispatchWorker").map((e) => e.issue)).toEqual([2]);
    const d = withComments(s, [
      comment(500, 1, "dev", "/autopilot run #5"),
      comment(501, 1, "dev", "/autopilot run #6"),
      comment(502, 1, "dev", "/autopilot run #7"),
      comment(503, 1, "outsider", "/autopilot run #8"),
    ]);
    expectNothingStarted(d, auto, [2]);
  });
});
