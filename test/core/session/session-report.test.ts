import { describe, expect, it } from "vitest";
import { commandHelp, parseCommand } from "../../../src/core/tasks/commands.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { GITHUB_BODY_LIMIT } from "../../../src/core/text/github-body-limit.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import {
  REPORT_CAP,
  REPORT_OUTCOMES,
  type ReportTask,
  renderSessionReport,
  reportRoomBeside,
  type SessionReport,
} from "../../../src/core/session/session-report.js";
import { computeStatistics } from "../../../src/core/session/stats.js";
import {
  applyEffects,
  check,
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
  T0,
  world,
} from "../world.js";

const HOSTILE_TITLE =
  "Fix it <!-- autopilot:state --> @everyone | col | [click](https://evil.example) </details>\n## Injected heading";
const HOSTILE_REASON =
  "I need the key --> <img src=x onerror=alert(1)> ping @octocat, see [here](https://evil.example)\n- [ ] fake checkbox";

function task(issueNumber: number, extra: Partial<ReportTask> = {}): ReportTask {
  return {
    issue: issueNumber,
    title: `Task ${issueNumber}`,
    outcome: "done",
    attempts: 1,
    iterations: 3,
    elapsedMs: 125_000,
    tokens: 1500,
    costUsd: 0.05,
    pr: 100 + issueNumber,
    wait: null,
    ...extra,
  };
}

function report(tasks: ReportTask[], extra: Partial<SessionReport> = {}): SessionReport {
  return {
    session: { status: "running", since: T0.toISOString(), startedAt: T0.toISOString() },
    statistics: computeStatistics(
      tasks.map((t) => ({
        issue: t.issue,
        status: t.outcome === "waiting" ? "ready" : t.outcome === "closed" ? "done" : t.outcome,
        iterations: t.iterations,
        tokens: { input: t.tokens, output: 0 },
        costUsd: t.costUsd,
      })),
      minutes(30),
      { sessionStartedAt: T0 },
    ),
    tasks,
    inHistoryComments: 0,
    occasion: { kind: "command", by: "dev" },
    now: minutes(30),
    ...extra,
  };
}

/** The cells of a Markdown table row, split on the pipes that are not backslash-escaped. */
function cells(row: string): string[] {
  return row
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** The cells of the table row of task #n, or null when the table does not list it. */
function rowOf(text: string, n: number): string[] | null {
  const row = text.split("\n").find((l) => l.startsWith(`| #${n} `));
  return row ? cells(row) : null;
}

/** The line of the "what waits for whom" list that names task #n, or null when the list does not name it. */
function waitLineOf(text: string, n: number): string | null {
  return text.split("\n").find((l) => l.startsWith(`- #${n} `)) ?? null;
}

/** Checks that `line` exists and holds each of `parts` (the facts a person reads in it), in any wording around them. */
function expectLine(line: string | null, ...parts: (string | RegExp)[]): void {
  expect(line).not.toBeNull();
  for (const part of parts) {
    if (typeof part === "string") expect(line).toContain(part);
    else expect(line).toMatch(part);
  }
}

describe("the session report's rendering", () => {
  it("gives each task its outcome, attempts, iterations, time, tokens and cost", () => {
    const text = renderSessionReport(
      report([
        task(3, { attempts: 2, iterations: 7, elapsedMs: 3_723_000, tokens: 48_200, costUsd: 1.234 }),
        task(4, { outcome: "in-progress", pr: null, elapsedMs: 42_000 }),
      ]),
    );
    expect(text).toContain("## Autopilot session report");
    expect(text).toContain("`@dev`");
    expect(rowOf(text, 3)).toEqual(["#3 Task 3", "done (PR #103)", "2", "7", "1h 02m", "48.2k", "$1.23"]);
    expect(rowOf(text, 4)).toEqual(["#4 Task 4", "in progress", "1", "3", "42s", "1.5k", "$0.05"]);
    expect(text).toMatch(/\*\*Tasks:\*\* 2 — 1 done, 1 in progress\./);
  });

  it("says what waits for whom: reviews, questions, blockers, dependencies and limits with their reset time", () => {
    const text = renderSessionReport(
      report([
        task(5, {
          outcome: "review",
          wait: { who: "its pull request's gates", why: "waiting for 2 checks: test, lint" },
        }),
        task(6, {
          outcome: "needs-human",
          pr: null,
          wait: { who: "an answer", why: "Before or after tax?", since: minutes(10).toISOString() },
        }),
        task(7, {
          outcome: "waiting",
          pr: null,
          wait: { who: "the tasks it depends on", why: "waiting on #5" },
        }),
        task(8, {
          outcome: "waiting",
          pr: null,
          wait: { who: "the agent's rate limit to reset", why: "429", until: minutes(90).toISOString() },
        }),
      ]),
    );
    const waits = text.slice(text.indexOf("### What waits for whom"), text.indexOf("### Tasks"));
    // Each line names the task, whom or what it waits for, since or until when, and why.
    expectLine(waitLineOf(waits, 6), "Task 6", "an answer", "2026-11-22 10:10 UTC", "Before or after tax?");
    expectLine(
      waitLineOf(waits, 5),
      "PR #105",
      "its pull request's gates",
      "waiting for 2 checks: test, lint",
    );
    expectLine(waitLineOf(waits, 7), "the tasks it depends on", "waiting on #5");
    expectLine(waitLineOf(waits, 8), "the agent's rate limit to reset", "2026-11-22 11:30 UTC", "429");
    // People first: the question comes before the review, the review before the dependency.
    expect(waits.indexOf("#6")).toBeLessThan(waits.indexOf("#5"));
    expect(waits.indexOf("#5")).toBeLessThan(waits.indexOf("#7"));
  });

  it("keeps hostile titles and reasons inert: no hidden marker, no mention, no extra cell, line or link", () => {
    const text = renderSessionReport(
      report([
        task(9, { title: HOSTILE_TITLE }),
        task(10, {
          title: HOSTILE_TITLE,
          outcome: "needs-human",
          wait: { who: "an answer", why: HOSTILE_REASON },
        }),
      ]),
    );
    expect(text).not.toContain("<!--");
    expect(text).not.toContain("-->");
    expect(text).not.toContain("<img");
    expect(text).not.toContain("</details>");
    expect(text).not.toMatch(/@everyone|@octocat/);
    // Brackets are escaped, so no link renders.
    expect(text).not.toMatch(/(?<!\\)\]\(https:\/\/evil/);
    expect(text.split("\n").filter((l) => /^#+ /.test(l))).toEqual([
      "## Autopilot session report",
      "### What waits for whom",
      "### Tasks",
    ]);
    expect(text).not.toMatch(/^- \[ \]/m);
    const rows = text.split("\n").filter((l) => l.startsWith("| #"));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(cells(row)).toHaveLength(7);
  });

  it("stays within GitHub's comment limit at thousands of tasks, and says what it left out", () => {
    // Wide titles: every character escaped or several bytes long.
    const wide = "<>|*_🚀".repeat(20);
    const tasks: ReportTask[] = [];
    for (let n = 1; n <= 5000; n++) {
      const outcome = REPORT_OUTCOMES[n % REPORT_OUTCOMES.length]!;
      const waits = ["needs-human", "review", "blocked", "failed", "timeout", "waiting"].includes(outcome);
      tasks.push(
        task(n, {
          title: `${wide} ${n}`,
          outcome,
          wait: waits ? { who: "someone with write access", why: `${wide} reason ${n}` } : null,
        }),
      );
    }
    const text = renderSessionReport(report(tasks, { inHistoryComments: 1234 }));
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(REPORT_CAP);
    expect(text.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(text).toMatch(/\*\*Tasks:\*\* 5,000 — /);
    // The waits list stops within its share and counts the rest: listed + counted = every waiting task.
    const waitsListed = text.split("\n").filter((l) => /^- #\d+ /.test(l)).length;
    const waitsLeft = text.match(/^- _… and ([\d,]+) more\b/m);
    expect(waitsLeft).not.toBeNull();
    expect(waitsListed + Number(waitsLeft![1]!.replace(/,/g, ""))).toBe(
      tasks.filter((t) => t.wait !== null).length,
    );
    const rows = text.split("\n").filter((l) => l.startsWith("| #"));
    expect(rows.length).toBeGreaterThan(50);
    const left = text.match(/^_([\d,]+) more tasks\b[^\n(]*\bnot listed\b[^\n(]*\(([^)]*)\)/m);
    expect(left).not.toBeNull();
    expect(rows.length + Number(left![1]!.replace(/,/g, ""))).toBe(5000);
    expect(left![2]).toMatch(/\d+ done/);
    // What needs people is listed first.
    expect(cells(rows[0]!)[1]).toBe("needs a human (PR #111)");
    expect(text).toMatch(/^_1,234 finished tasks\b[^\n]*\bhistory comments\b/m);
  });

  it("shares the completion comment with the notice and the history within the limit", () => {
    const history = `\n\n**Autopilot history**\n${"- #1 done 🚀🚀🚀🚀 <> merged PR #2 · 3 iterations\n".repeat(600)}`;
    const tasks = Array.from({ length: 3000 }, (_, i) => task(i + 1, { title: "🚀<>|".repeat(30) }));
    const notice = "Autopilot completed: no ready task is left.";
    const text = renderSessionReport(report(tasks), reportRoomBeside(notice + history));
    const comment = `${notice}\n\n${text}${history}`;
    expect(Buffer.byteLength(comment, "utf8")).toBeLessThanOrEqual(REPORT_CAP);
    expect(text).toMatch(/more tasks are not listed/);
  });

  it("says so when the session has no task yet", () => {
    expect(renderSessionReport(report([]))).toContain("_No task in this session yet._");
  });
});

describe("`/autopilot report`", () => {
  it("is a command, listed in the help", () => {
    expect(parseCommand("/autopilot report", { issue: 1, trackingIssue: 1 })).toMatchObject({
      kind: "command",
      command: { name: "report" },
    });
    expect(parseCommand("/autopilot REPORT", { issue: 7, trackingIssue: 1 })).toMatchObject({
      command: { name: "report" },
    });
    expect(commandHelp()).toContain("`/autopilot report`");
  });

  /** #7 in review (a check pending), #8 asks a hostile question, #9 waits on #7, #6 done; the tracking issue is #1. */
  function session() {
    const cfg = config({ maxParallel: 3 });
    const first = step(
      world({
        issues: [issue(6), issue(7, { title: HOSTILE_TITLE }), issue(8), issue(9, { body: "Depends on #7" })],
      }),
      null,
      { config: cfg },
    );
    const w = first.world;
    w.runs = [
      run(90, 7, { status: "completed", conclusion: "success" }),
      run(91, 8, { status: "completed", conclusion: "success" }),
      run(92, 6, { status: "completed", conclusion: "success" }),
    ];
    w.workerResults = [
      result(7, { iterations: 4, tokens: { input: 30_000, output: 2_000 }, costUsd: 0.42 }),
      result(8, { result: "needs_human", reason: HOSTILE_REASON, prNumber: undefined, iterations: 2 }),
      result(6, { iterations: 1 }),
    ];
    w.pulls = [pull(7, { checks: [check("test", null)] }), pull(6)];
    const second = step(w, first.state, { config: cfg, now: minutes(25) });
    return { world: second.world, state: second.state, cfg };
  }

  it("replies to a writer with the report of what the controller persisted, once per command comment", () => {
    const { world: w, state, cfg } = session();
    w.comments = [comment(500, 1, "dev", "/autopilot report")];
    const d = decide({ ...input(w), state, config: cfg, now: minutes(30) });
    expect(only(d.effects, "react")).toEqual([{ type: "react", commentId: 500, content: "+1" }]);
    const replies = only(d.effects, "comment").filter((c) => c.key === "reply-500");
    expect(replies).toHaveLength(1);
    const body = replies[0]!.body;
    expect(body).toContain("## Autopilot session report");
    expect(rowOf(body, 6)!.slice(1, 4)).toEqual(["done (PR #106)", "1", "1"]);
    expect(rowOf(body, 7)!.slice(1)).toEqual(["in review (PR #107)", "1", "4", "30m 00s", "32.0k", "$0.42"]);
    // #8 waits for a writer's answer, with its (escaped) question; #9 waits on #7.
    expectLine(waitLineOf(body, 8), "answer the question", "write access", "I need the key --&gt;");
    expectLine(waitLineOf(body, 9), "the tasks it depends on", "waiting on #7");
    expect(waitLineOf(body, 6)).toBeNull();
    expect(body).not.toContain("<!--");
    expect(body).not.toMatch(/@everyone|@octocat/);

    // The same delivery again (or the next reconcile) with the resulting state: no second report.
    const again = decide({ ...input(w), state: d.state, config: cfg, now: minutes(31) });
    expect(only(again.effects, "comment").filter((c) => c.key === "reply-500")).toEqual([]);
    expect(only(again.effects, "react")).toEqual([]);
  });

  it("fits GitHub's comment limit in a repository of thousands of tasks with hostile titles", () => {
    const titles = (n: number) => `<!-- x --> @everyone | 🚀🚀 ${"[]<>*_".repeat(12)} ${n}`;
    const issues = Array.from({ length: 2500 }, (_, i) =>
      issue(i + 2, {
        title: titles(i + 2),
        labels: [i % 3 === 0 ? "autopilot:blocked" : i % 3 === 1 ? "autopilot:failed" : "autopilot:ready"],
      }),
    );
    const first = step(world({ issues }), null);
    const w = first.world;
    w.comments = [comment(500, 1, "dev", "/autopilot report")];
    const d = decide({ ...input(w), state: first.state, now: minutes(1) });
    const body = only(d.effects, "comment").find((c) => c.key === "reply-500")!.body;
    expect(body.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(body).toMatch(/\*\*Tasks:\*\* 2,500 — /);
    const left = body.match(/^_([\d,]+) more tasks\b[^\n(]*\bnot listed\b[^\n(]*\(([^)]*)\)/m);
    expect(left).not.toBeNull();
    expect(left![2]).toMatch(/[\d,]+ blocked, [\d,]+ failed/);
    expect(body).not.toContain("<!--");
    expect(body).not.toContain("@everyone");
  });

  it("refuses someone without write access, and answers a task issue's command there", () => {
    const { world: w, state, cfg } = session();
    w.comments = [
      comment(500, 1, "reader", "/autopilot report"),
      comment(501, 8, "dev", "/autopilot report"),
    ];
    const d = decide({ ...input(w), state, config: cfg, now: minutes(30) });
    expect(only(d.effects, "react")).toEqual([
      { type: "react", commentId: 500, content: "confused" },
      { type: "react", commentId: 501, content: "+1" },
    ]);
    const comments = only(d.effects, "comment");
    expect(comments.find((c) => c.key === "reply-500")!.body).toContain(
      "only takes commands from people with write access",
    );
    expect(comments.find((c) => c.key === "reply-500")!.body).not.toContain("session report");
    expect(comments.find((c) => c.key === "reply-501")).toMatchObject({ issue: 8 });
    expect(comments.find((c) => c.key === "reply-501")!.body).toContain("## Autopilot session report");
  });

  it("joins the one comment a completed session posts on the tracking issue, listing each finished task once", () => {
    const cfg = config({ maxParallel: 2 });
    const first = step(world({ issues: [issue(6), issue(7)] }), null, { config: cfg });
    const w = first.world;
    w.runs = [
      run(90, 6, { status: "completed", conclusion: "success" }),
      run(91, 7, { status: "completed", conclusion: "success" }),
    ];
    w.workerResults = [
      result(6, { iterations: 2, costUsd: 0.1 }),
      result(7, { result: "blocked", reason: "no credentials", prNumber: undefined, iterations: 5 }),
    ];
    w.pulls = [pull(6)];
    // #6's PR merges; #7 is blocked: nothing is left to do and the session completes.
    let s = step(w, first.state, { config: cfg, now: minutes(25) });
    s = step(s.world, s.state, { config: cfg, now: minutes(26) });
    expect(s.state.session.status).toBe("completed");
    const reports = only(s.decision.effects, "comment").filter((c) =>
      c.key?.startsWith("session-completed-"),
    );
    expect(reports).toHaveLength(1);
    expect(reports[0]!.issue).toBe(1);
    const body = reports[0]!.body;
    const notice = body.indexOf("Autopilot completed");
    const head = body.indexOf("## Autopilot session report");
    const history = body.indexOf("**Autopilot history**");
    expect(notice).toBe(0);
    expect(head).toBeGreaterThan(notice);
    expect(history).toBeGreaterThan(head);
    expect(body).toContain("The session completed.");
    // #6 finished: the history below lists it, so the report counts it instead of listing it a second time.
    expect(rowOf(body, 6)).toBeNull();
    expect(body.slice(history)).toContain("#6");
    expect(body.slice(head, history)).toMatch(/(?<!\d)1 finished task\b[^\n]*\bhistory below\b/);
    expect(body).toMatch(/\*\*Tasks:\*\* 2 — 1 done/);
    // #7 is blocked: it waits for a writer, and the line names the command that puts it back, and why.
    expect(rowOf(body, 7)![1]).toBe("blocked");
    expectLine(waitLineOf(body, 7), "write access", "`/autopilot retry #7`", "no credentials");

    // Deciding again on the world that produced brings no second report.
    const world2 = applyEffects(s.world, s.decision.effects, minutes(40));
    const state2 = parseDashboard(world2.trackingIssue!.body).state;
    const again = decide({ ...input(world2), state: state2, config: cfg, now: minutes(41) });
    expect(only(again.effects, "comment").filter((c) => c.key?.startsWith("session-completed-"))).toEqual([]);
  });
});

describe("what the report says a queued task waits for", () => {
  /** The report a writer's `/autopilot report` gets after a first reconcile of `issues` with `cfg`. */
  function reportOf(
    issues: ReturnType<typeof issue>[],
    cfg = config(),
    more: (w: ReturnType<typeof world>) => void = () => {},
  ) {
    const first = step(world({ issues }), null, { config: cfg });
    const w = first.world;
    more(w);
    const second = step(w, first.state, { config: cfg, now: minutes(5) });
    second.world.comments = [comment(500, 1, "dev", "/autopilot report")];
    const d = decide({ ...input(second.world), state: second.state, config: cfg, now: minutes(6) });
    const body = only(d.effects, "comment").find((c) => c.key === "reply-500")!.body;
    const row = (n: number) => cells(body.split("\n").find((l) => l.startsWith(`| #${n} `))!);
    const wait = (n: number) => body.split("\n").find((l) => l.startsWith(`- #${n} `)) ?? null;
    return { body, row, wait };
  }

  it("does not call a task a stranger labeled ready queued: it waits for a writer's label", () => {
    const r = reportOf([issue(2), issue(3, { readyLabeledBy: "triager" })], config({ maxParallel: 1 }));
    expect(r.row(3)[1]).toBe("waiting");
    expect(r.wait(3)).toContain("write access");
    expect(r.wait(3)).toContain("`autopilot:ready`");
    expect(r.wait(3)).toContain("triager");
  });

  it("in semi-auto, names the command a writer gives to start each queued task", () => {
    const r = reportOf([issue(2), issue(3)], config({ mode: "semi-auto" }));
    expect(r.row(2)[1]).toBe("queued");
    expect(r.wait(2)).toContain("`/autopilot run #2`");
    expect(r.wait(3)).toContain("`/autopilot run #3`");
  });

  it("with session.autoStart false, says the queue waits for /autopilot start", () => {
    const r = reportOf([issue(2)], config({ session: { autoStart: false } }));
    expect(r.row(2)[1]).toBe("queued");
    expect(r.wait(2)).toContain("`/autopilot start`");
  });

  it("says a task retried after its agent's quota ran out waits for its backoff, not for a reset", () => {
    const r = reportOf([issue(2)], config({ maxParallel: 1 }), (w) => {
      w.runs = [run(90, 2, { status: "completed", conclusion: "success" })];
      w.workerResults = [
        result(2, { result: "quota", reason: "credit balance too low", prNumber: undefined }),
      ];
    });
    expect(r.row(2)[1]).toBe("waiting");
    expect(r.wait(2)).toMatch(/backoff/);
    expect(r.wait(2)).not.toMatch(/reset/);
  });
});
