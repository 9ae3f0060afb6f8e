import { describe, expect, it } from "vitest";
import { commandLines, commentAuthority, parseCommand } from "../../../src/core/tasks/commands.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import {
  BOT,
  comment,
  input,
  issue,
  only,
  PERMISSIONS,
  result,
  run,
  step,
  T0,
  types,
  world,
} from "../world.js";

const onTracking = { issue: 1, trackingIssue: 1 };
const onTask = { issue: 7, trackingIssue: 1 };

describe("parseCommand", () => {
  it.each([
    ["/autopilot start", { name: "start" }],
    ["/autopilot pause", { name: "pause" }],
    ["/autopilot resume", { name: "resume" }],
    ["/autopilot stop", { name: "stop" }],
    ["/autopilot help", { name: "help" }],
    ["/autopilot status", { name: "status", issue: null }],
    ["/autopilot status #12", { name: "status", issue: 12 }],
    ["/autopilot retry #12", { name: "retry", issue: 12 }],
    ["/autopilot retry 12", { name: "retry", issue: 12 }],
    ["/autopilot skip #3.", { name: "skip", issue: 3 }],
    ["/Autopilot PAUSE", { name: "pause" }],
    ["   /autopilot pause please", { name: "pause" }],
  ])("reads %j on the tracking issue", (body, command) => {
    expect(parseCommand(body, onTracking)).toMatchObject({ kind: "command", command });
  });

  it("defaults retry, skip and status to the task issue it is written on", () => {
    expect(parseCommand("/autopilot retry", onTask)).toMatchObject({ command: { name: "retry", issue: 7 } });
    expect(parseCommand("/autopilot skip", onTask)).toMatchObject({ command: { name: "skip", issue: 7 } });
    expect(parseCommand("/autopilot status", onTask)).toMatchObject({
      command: { name: "status", issue: 7 },
    });
    expect(parseCommand("/autopilot retry #9", onTask)).toMatchObject({
      command: { name: "retry", issue: 9 },
    });
  });

  it("asks for an issue number when retry or skip on the tracking issue has none", () => {
    expect(parseCommand("/autopilot retry", onTracking)).toMatchObject({ kind: "invalid" });
    expect(parseCommand("/autopilot skip now", onTracking)).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("not an issue number"),
    });
  });

  it("reads split with the issue it is written on, or the one named on the tracking issue", () => {
    expect(parseCommand("/autopilot split", onTask)).toMatchObject({ command: { name: "split", issue: 7 } });
    expect(parseCommand("/autopilot split #12", onTracking)).toMatchObject({
      command: { name: "split", issue: 12 },
    });
    expect(parseCommand("/autopilot split", onTracking)).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("/autopilot split #N"),
    });
    expect(parseCommand("/autopilot splt #12", onTracking)).toMatchObject({
      problem: expect.stringContaining("did you mean `/autopilot split`"),
    });
  });

  it("calls anything else after /autopilot an unknown command", () => {
    expect(parseCommand("/autopilot deploy", onTracking)).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("unknown command"),
    });
    expect(parseCommand("/autopilot", onTracking)).toMatchObject({ kind: "invalid" });
  });

  it("names the command a typo most likely meant, and none when nothing is near", () => {
    expect(parseCommand("/autopilot pasue", onTracking)).toMatchObject({
      kind: "invalid",
      problem: "unknown command `pasue`; did you mean `/autopilot pause`?",
    });
    expect(parseCommand("/autopilot rollbak #3", onTracking)).toMatchObject({
      problem: expect.stringContaining("did you mean `/autopilot rollback`?"),
    });
    expect(parseCommand("/autopilot deploy", onTracking)).toMatchObject({
      problem: "unknown command `deploy`",
    });
  });

  it("finds no command in ordinary text, mid-line mentions or look-alike words", () => {
    expect(parseCommand("Thanks! I think we should /autopilot pause soon.", onTracking)).toBeNull();
    expect(parseCommand("/autopilotx start", onTracking)).toBeNull();
    expect(parseCommand("/autopilot:ready is the label", onTracking)).toBeNull();
    expect(parseCommand("`/autopilot stop`", onTracking)).toBeNull();
  });

  it("ignores commands in fenced code, indented code, block quotes and HTML comments", () => {
    const body = [
      "Here is what the bot said:",
      "```",
      "/autopilot stop",
      "```",
      "~~~text",
      "/autopilot stop",
      "~~~",
      "",
      "    /autopilot stop",
      "",
      "> /autopilot stop",
      "<!--",
      "/autopilot stop",
      "-->",
    ].join("\n");
    expect(parseCommand(body, onTracking)).toBeNull();
    expect(commandLines(body)).not.toContain("/autopilot stop");
  });

  it("takes the first command when a comment has several", () => {
    expect(parseCommand("/autopilot pause\n/autopilot stop", onTracking)).toMatchObject({
      command: { name: "pause" },
    });
    expect(parseCommand("> /autopilot stop\n\n/autopilot resume", onTracking)).toMatchObject({
      command: { name: "resume" },
    });
  });
});

describe("commentAuthority", () => {
  it.each([
    ["maintainer", true],
    ["lead", true],
    ["dev", true],
    ["DEV", true],
    ["triager", false],
    ["reader", false],
    ["outsider", false],
    ["stranger", false],
  ])("%s may steer Autopilot: %s", (login, authorized) => {
    expect(commentAuthority({ author: login }, BOT, PERMISSIONS)).toEqual({ ignored: false, authorized });
  });

  it("ignores Autopilot's own comments and other bots", () => {
    expect(commentAuthority({ author: BOT }, BOT, PERMISSIONS).ignored).toBe(true);
    expect(commentAuthority({ author: "autopilot" }, BOT, PERMISSIONS).ignored).toBe(true);
    expect(commentAuthority({ author: "renovate[bot]" }, BOT, PERMISSIONS).ignored).toBe(true);
    expect(commentAuthority({ author: "dev", authorIsBot: true }, BOT, PERMISSIONS).ignored).toBe(true);
    expect(commentAuthority({ author: null }, BOT, PERMISSIONS).ignored).toBe(true);
  });
});

/** A world with a running session, its tracking issue #1, and task #7 in progress. */
function running() {
  const first = step(
    world({ issues: [issue(7), issue(8, { labels: ["autopilot:blocked"], readyLabeledBy: null })] }),
    null,
  );
  // The worker run for #7 is going.
  first.world.runs = [run(90, 7, { dispatchId: "7-1-seed" })];
  return { world: first.world, state: first.state };
}

describe("commands in a reconcile", () => {
  it("pauses on a maintainer's command: reaction, a reply about the running worker, no new dispatch", () => {
    const { world: w, state } = running();
    w.issues.push(issue(9));
    w.comments = [comment(500, 1, "maintainer", "/autopilot pause")];
    const d = decide({ ...input(w), state });
    expect(d.state.session).toMatchObject({ status: "pausing", actor: "maintainer", reason: "user_pause" });
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "+1" }]);
    expect(only(d.effects, "comment")[0]).toMatchObject({ issue: 1, key: "reply-500" });
    expect(only(d.effects, "comment")[0]!.body).toContain("next iteration boundary");
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });

  it("refuses someone without write access once, politely, and changes nothing", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, "reader", "/autopilot stop"), comment(501, 7, "reader", "/autopilot skip")];
    const d = decide({ ...input(w), state });
    expect(d.state.session.status).toBe("running");
    expect(only(d.effects, "react").map((r) => r.commentId)).toEqual([500, 501]);
    const replies = only(d.effects, "comment");
    expect(replies).toHaveLength(1);
    expect(replies[0]!.body).toContain("only takes commands from people with write access");
    expect(only(d.effects, "setStateLabel")).toEqual([]);
    expect(only(d.effects, "cancelRun")).toEqual([]);

    // A later command from the same person: acknowledged, no second refusal.
    const again = { ...w, comments: [comment(502, 1, "reader", "/autopilot pause")] };
    const d2 = decide({ ...input(again), state: d.state });
    expect(types(d2.effects).filter((t) => t !== "writeTrackingIssue")).toEqual(["react"]);
    expect(d2.state.session.status).toBe("running");
  });

  it("never takes a command from a triager (labels yes, commands no)", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, "triager", "/autopilot stop")];
    expect(decide({ ...input(w), state }).state.session.status).toBe("running");
  });

  it("ignores Autopilot's own comments, even ones that quote a command at a line start", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, BOT, "/autopilot stop")];
    const d = decide({ ...input(w), state });
    expect(d.state.session.status).toBe("running");
    expect(only(d.effects, "react")).toEqual([]);
  });

  it("answers an unknown command with the help", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, "dev", "/autopilot deploy everything")];
    const d = decide({ ...input(w), state });
    expect(only(d.effects, "react")[0]).toMatchObject({ content: "confused" });
    expect(only(d.effects, "comment")[0]!.body).toContain("unknown command `deploy`");
    expect(only(d.effects, "comment")[0]!.body).toContain("/autopilot retry #N");
  });

  it("replies to status on a task issue with that task's status", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 7, "dev", "/autopilot status")];
    const d = decide({ ...input(w), state });
    const reply = only(d.effects, "comment")[0]!;
    expect(reply).toMatchObject({ issue: 7, key: "reply-500" });
    expect(reply.body).toContain("#7 is **in-progress**");
    expect(reply.body).toContain("Autopilot is **running**");
  });

  it("retries a blocked task named on the tracking issue, and refuses to retry one that is in progress", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, "dev", "/autopilot retry #8"), comment(501, 7, "dev", "/autopilot retry")];
    const d = decide({ ...input(w), state });
    // Back in the queue, and into the free slot at once.
    expect(only(d.effects, "setStateLabel")).toContainEqual(
      expect.objectContaining({ issue: 8, add: "autopilot:in-progress" }),
    );
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 8, attempt: 1 })]);
    expect(d.state.tasks["8"]).toMatchObject({ retries: 1, result: "retry" });
    expect(only(d.effects, "react")).toEqual([
      { type: "react", commentId: 500, content: "+1" },
      { type: "react", commentId: 501, content: "confused" },
    ]);
    expect(only(d.effects, "comment").find((c) => c.key === "reply-501")!.body).toContain("in-progress");
  });

  it("skips a task: exclude label, its run cancelled, it leaves the state", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 7, "lead", "/autopilot skip")];
    const d = decide({ ...input(w), state });
    expect(only(d.effects, "setStateLabel")).toContainEqual(
      expect.objectContaining({ issue: 7, add: "autopilot:exclude" }),
    );
    expect(only(d.effects, "cancelRun")).toEqual([{ type: "cancelRun", runId: 90, issue: 7 }]);
    expect(d.state.tasks["7"]).toBeUndefined();
    expect(d.state.history.skipped).toBe(1);
  });

  it("ignores commands on issues that are not Autopilot's", () => {
    const { world: w, state } = running();
    w.issues.push(issue(20, { labels: ["bug"] }));
    w.comments = [comment(500, 20, "maintainer", "/autopilot stop")];
    const d = decide({ ...input(w), state });
    expect(d.state.session.status).toBe("running");
    expect(only(d.effects, "react")).toEqual([]);
  });

  it("processes each comment once: the cursor and the reaction both remember it", () => {
    const { world: w, state } = running();
    w.comments = [comment(500, 1, "maintainer", "/autopilot pause")];
    const d = decide({ ...input(w), state });
    expect(d.state.cursor).toEqual({ id: 500, at: w.comments[0]!.createdAt });
    // Same snapshot, resulting state: nothing new.
    expect(decide({ ...input(w), state: d.state }).effects).toEqual([]);
    // State lost (rebuilt), but the comment carries Autopilot's reaction: still not processed twice.
    const acknowledged = { ...w, comments: [{ ...w.comments[0]!, acknowledged: true }] };
    expect(only(decide({ ...input(acknowledged), state: d.state }).effects, "react")).toEqual([]);
  });

  it("resumes a needs-human task when someone with write access answers after the question", () => {
    const w = world({
      issues: [issue(5, { labels: ["autopilot:needs-human"] })],
      workerResults: [result(5, { result: "needs_human", reason: "Which database?", prNumber: undefined })],
    });
    const first = step(w, null);
    const later = {
      ...first.world,
      comments: [comment(600, 5, "outsider", "Use Postgres!", { createdAt: "2026-11-22T10:30:00Z" })],
    };
    // An answer from someone without write access does nothing.
    const d1 = decide({ ...input(later), state: first.state });
    expect(only(d1.effects, "setStateLabel")).toEqual([]);
    const answered = {
      ...later,
      comments: [comment(601, 5, "dev", "Use Postgres.", { createdAt: "2026-11-22T10:31:00Z" })],
    };
    const d2 = decide({ ...input(answered), state: d1.state });
    expect(only(d2.effects, "setStateLabel")[0]).toMatchObject({ issue: 5, add: "autopilot:in-progress" });
    expect(d2.log).toContain("#5: answered by dev; back in the queue");
    expect(only(d2.effects, "react")).toEqual([{ type: "react", commentId: 601, content: "+1" }]);
    expect(only(d2.effects, "dispatchWorker")[0]).toMatchObject({ issue: 5, attempt: 2 });
  });
});

describe("dashboard checkboxes", () => {
  function withTicked(editor: string) {
    const first = step(
      world({
        issues: [issue(3, { labels: ["autopilot:failed"] }), issue(4, { labels: ["autopilot:timeout"] })],
      }),
      null,
      { now: T0 },
    );
    const body = first.world.trackingIssue!.body;
    expect(body).toContain("- [ ] <!-- autopilot:retry #3 --> retry #3");
    const ticked = body
      .replace("- [ ] <!-- autopilot:retry #3 -->", "- [x] <!-- autopilot:retry #3 -->")
      .replace("  - [ ] <!-- autopilot:skip #4 -->", "  - [x] <!-- autopilot:skip #4 -->");
    const w = {
      ...first.world,
      trackingIssue: { ...first.world.trackingIssue!, body: ticked, lastEditedBy: editor },
    };
    return { w, state: parseDashboard(ticked).state };
  }

  it("act when ticked by someone with write access, and the rewrite unticks them", () => {
    const { w, state } = withTicked("dev");
    const d = decide({ ...input(w), state });
    // #3 goes back to ready and straight to a worker: one label change, from failed to in-progress.
    expect(only(d.effects, "setStateLabel")).toEqual([
      expect.objectContaining({ issue: 4, add: "autopilot:exclude" }),
      expect.objectContaining({ issue: 3, add: "autopilot:in-progress" }),
    ]);
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 3, attempt: 1 })]);
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(parseDashboard(body).checkedBoxes).toEqual([]);
    // Deciding again on the same (still ticked) body with the new state changes nothing.
    expect(decide({ ...input(w), state: d.state }).effects).toEqual([]);
  });

  it("do nothing when the last editor has no write access (noted on the dashboard)", () => {
    const { w, state } = withTicked("triager");
    const d = decide({ ...input(w), state });
    expect(only(d.effects, "setStateLabel")).toEqual([]);
    expect(d.state.incidents.at(-1)).toMatchObject({ kind: "checkbox_refused" });
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("only people with write access can steer Autopilot");
    expect(parseDashboard(body).checkedBoxes).toEqual([]);
  });
});
