import { GITHUB_BODY_LIMIT } from "../../src/core/text/github-body-limit.js";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configDigest, parseConfig } from "../../src/core/config/index.js";
import {
  BODY_CAP,
  compactState,
  DashboardStateSchema,
  emptyState,
  HISTORY_BATCH,
  newTaskRecord,
  parseDashboard,
  rebuildState,
  renderDashboard,
  renderStateBlock,
  STATE_CAP,
  TRACKING_MARKER,
  utf8Length,
} from "../../src/core/dashboard/index.js";
import { stateBlockLength } from "../../src/core/dashboard/compact-state.js";
import { decide } from "../../src/core/reconcile/decide.js";
import { OPEN_NETWORK_ACCESS } from "../../src/core/tasks/worker-result.js";
import type { WorldSnapshot } from "../../src/core/world.js";
import {
  check,
  comment,
  emptyView,
  config,
  input,
  issue,
  minutes,
  only,
  pull,
  result,
  review,
  run,
  step,
  T0,
  world,
} from "./world.js";

const fixtureDir = join(import.meta.dirname, "../fixtures/dashboard");
const UPDATE = process.env.UPDATE_DASHBOARD_FIXTURES === "1";

function writtenBody(d: ReturnType<typeof decide>): string {
  const write = only(d.effects, "writeTrackingIssue")[0];
  if (!write) throw new Error("no tracking issue write");
  return write.body;
}

/** A session in full swing: every section of the dashboard has something in it. */
function richWorld(): { w: WorldSnapshot; state: ReturnType<typeof step>["state"] } {
  const first = step(
    world({
      issues: [
        issue(10, { title: "Add the login form", labels: ["autopilot:ready", "critical"] }),
        issue(11, { title: "Password reset | by e-mail", body: "Depends on #10" }),
        issue(12, { title: "Dark mode" }),
      ],
    }),
    null,
    { config: config({ maxParallel: 3 }) },
  );
  const w = first.world;
  w.runs = w.runs.map((r) => ({
    ...r,
    status: "in_progress" as const,
    url: `https://github.com/acme/app/actions/runs/${r.id}`,
  }));
  w.workerResults = [
    result(10, {
      status: "running",
      result: undefined,
      iterations: 4,
      dispatchId: "10-1-seed",
      updatedAt: minutes(12).toISOString(),
    }),
  ];
  w.issues.push(
    issue(13, { title: "Rate-limit the API", body: "Depends on #12" }),
    issue(14, { title: "Cache <script> tags @everyone", labels: ["autopilot:ready", "quick-win"] }),
    issue(15, { title: "Upgrade the ORM", labels: ["autopilot:review"] }),
    issue(16, { title: "Pick a font", labels: ["autopilot:needs-human"] }),
    issue(17, { title: "Migrate the billing tables", labels: ["autopilot:blocked"] }),
    issue(18, { title: "Rewrite the parser", labels: ["autopilot:timeout"] }),
    issue(19, { title: "Flaky e2e suite", labels: ["autopilot:failed"] }),
    issue(20, { title: "Spam issue", readyLabeledBy: "outsider" }),
    issue(21, { title: "Chicken", body: "Depends on #22" }),
    issue(22, { title: "Egg", body: "Depends on #21" }),
  );
  w.workerResults.push(
    result(15, {
      prNumber: 115,
      humanGate: {
        fired: true,
        rules: [{ rule: "migrations", where: "path", match: "db/migrate/3.sql", neverAutoApprove: false }],
      },
    }),
    result(16, { result: "needs_human", reason: "Serif or sans-serif?", prNumber: undefined }),
    result(17, {
      result: "blocked",
      reason: "The billing API key is missing from the secrets.",
      prNumber: undefined,
    }),
    result(18, {
      result: "timeout",
      reason: "reached max iterations (25)",
      iterations: 25,
      prNumber: undefined,
    }),
    result(19, {
      result: "failed",
      reason: "agent exited with code 1 (no retries left)",
      prNumber: undefined,
    }),
  );
  w.pulls = [
    pull(15, {
      checks: [check("test", "success"), check("build", null)],
      reviews: [review("dev", "COMMENTED", "sha15a")],
    }),
  ];
  w.comments = [comment(300, 1, "dev", "/autopilot status")];
  const after = step(w, first.state, { now: minutes(15), config: config({ maxParallel: 3 }) });
  return { w: after.world, state: after.state };
}

function compareWithFixture(name: string, body: string): void {
  const file = join(fixtureDir, name);
  if (UPDATE) {
    mkdirSync(fixtureDir, { recursive: true });
    writeFileSync(file, body);
  }
  // A missing fixture fails: writing it here would make the comparison pass whatever the body is.
  if (!existsSync(file)) throw new Error(`${file} is missing; UPDATE_DASHBOARD_FIXTURES=1 writes it`);
  expect(body).toBe(readFileSync(file, "utf8"));
}

describe("whole-body fixtures (UPDATE_DASHBOARD_FIXTURES=1 rewrites them)", () => {
  it("a session in full swing", () => {
    const { w } = richWorld();
    compareWithFixture("running.md", w.trackingIssue!.body);
  });

  it("a paused session with a bad config file and an incident", () => {
    const bad = parseConfig("maxParallel: 0\nlabels: { ready: '' }\nmerge: { method: yolo }\n");
    if (bad.ok) throw new Error("expected a bad config");
    const first = step(world({ issues: [issue(1), issue(2, { labels: ["autopilot:failed"] })] }), null);
    const w = { ...first.world, comments: [comment(5, 1, "maintainer", "/autopilot pause")], runs: [] };
    const lastGoodConfig = { digest: configDigest("maxParallel: 1\n"), commit: "c0ffee".padEnd(40, "0") };
    const d = decide({
      ...input(w),
      state: first.state,
      now: minutes(11),
      configError: bad.error,
      lastGoodConfig,
    });
    compareWithFixture("paused-config-error.md", writtenBody(d));
  });

  it("a completed session with its history", () => {
    const w = world({ issues: [issue(1, { labels: ["autopilot:review"] })], pulls: [pull(1)] });
    const merging = step(w, null, { now: minutes(40) });
    const merged = { ...merging.world, runs: [] };
    const d = decide({ ...input(merged), state: merging.state, now: minutes(41) });
    compareWithFixture("completed.md", writtenBody(d));
  });
});

describe("render and parse", () => {
  it("round-trips the state", () => {
    const { w, state } = richWorld();
    const parsed = parseDashboard(w.trackingIssue!.body);
    expect(parsed).toMatchObject({
      corrupt: false,
      checkedBoxes: [],
      visibleStatus: "running",
      hasMarker: true,
    });
    expect(parsed.state).toEqual(state);
    expect(DashboardStateSchema.parse(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it("survives a person's edits to the visible part", () => {
    const { w, state } = richWorld();
    const body = w.trackingIssue!.body;
    const edited = [
      "Note from the team: please don't touch #17 until Monday.",
      "",
      body
        .replace("### Queue", "### Queue (edited)")
        .replace(/### Statistics[\s\S]*?(?=<details>)/, "")
        .replace(TRACKING_MARKER, `${TRACKING_MARKER}\n> quoted <!-- autopilot:state v0 {} -->`),
    ].join("\n");
    const parsed = parseDashboard(edited);
    expect(parsed.corrupt).toBe(false);
    expect(parsed.state).toEqual(state);
    // Windows line endings from a browser edit are fine too.
    expect(parseDashboard(edited.replace(/\n/g, "\r\n")).state).toEqual(state);
  });

  it("reads ticked checkboxes, once each, and only from the visible part", () => {
    const { w } = richWorld();
    const body = w.trackingIssue!.body;
    expect(body).toContain("- [ ] <!-- autopilot:retry #17 --> retry #17");
    expect(body).toContain("  - [ ] <!-- autopilot:skip #19 --> skip #19");
    const ticked = body
      .replace("- [ ] <!-- autopilot:retry #17 -->", "- [x] <!-- autopilot:retry #17 -->")
      .replace("  - [ ] <!-- autopilot:skip #19 -->", "  - [X] <!-- autopilot:skip #19 -->");
    expect(parseDashboard(ticked).checkedBoxes).toEqual([
      { action: "retry", issue: 17 },
      { action: "skip", issue: 19 },
    ]);
    expect(parseDashboard(`${ticked}\n- [x] <!-- autopilot:retry #17 --> again`).checkedBoxes).toHaveLength(
      2,
    );
  });

  it("calls a missing, malformed or invalid state block corrupt", () => {
    const { w } = richWorld();
    const body = w.trackingIssue!.body;
    const cases = [
      body.replace(/<!-- autopilot:state v1[\s\S]*$/, ""),
      body.replace(/"revision":\d+/, '"revision":-1'),
      body.replace(/"status":"running"/, '"status":"dancing"'),
      body.replace(/\n-->\n$/, "\n"),
      body.replace("<!-- autopilot:state v1\n{", "<!-- autopilot:state v1\n{{"),
      "",
    ];
    for (const broken of cases) {
      expect(parseDashboard(broken)).toMatchObject({ state: null, corrupt: true });
    }
    // The visible status survives a lost state block.
    expect(parseDashboard(cases[0]!).visibleStatus).toBe("running");
  });

  it("keeps untrusted text from closing the hidden state or pinging people", () => {
    const state = emptyState(T0);
    state.incidents.push({
      at: T0.toISOString(),
      kind: "x",
      message: "evil --> <!-- autopilot:state v1 {} --> @octocat",
    });
    state.tasks["5"] = { ...DashboardStateSchema.shape.tasks.parse({ "5": {} })["5"]!, reason: "--> @here" };
    const body = renderDashboard(state, emptyView(), T0);
    expect(parseDashboard(body).state).toEqual(state);
    const visible = body.slice(0, body.lastIndexOf("<!-- autopilot:state v1"));
    expect(visible).toContain("evil --&gt; &lt;!-- autopilot:state v1");
    expect(visible).not.toMatch(/@octocat|@here/);
    // Inside the hidden block the JSON escapes < and > so it cannot end the comment.
    expect(body.slice(body.lastIndexOf("<!-- autopilot:state v1") + 4)).not.toMatch(/-->[\s\S]*-->/);
  });
});

/**
 * A repository with `n` tasks in every state, long titles in several scripts, long reasons, a big history:
 * what a 5,000-task backlog looks like to the tracking issue.
 */
function bigWorld(n: number): {
  w: WorldSnapshot;
  state: NonNullable<ReturnType<typeof parseDashboard>["state"]>;
} {
  const longTitle = (i: number) =>
    `Task ${i}: ${"Überarbeite die Anmeldung — 登录页面重构 — ".repeat(4)}${"x".repeat(40)} <b>@team</b> | pipe`;
  const states = [
    "autopilot:ready",
    "autopilot:ready",
    "autopilot:ready",
    "autopilot:blocked",
    "autopilot:failed",
    "autopilot:timeout",
    "autopilot:needs-human",
    "autopilot:review",
  ];
  const issues = [];
  const results = [];
  const pulls = [];
  for (let i = 1; i <= n; i++) {
    const label = states[i % states.length]!;
    issues.push(
      issue(i, {
        title: longTitle(i),
        labels: [label, ...(i % 13 === 0 ? ["critical"] : [])],
        body: i % 3 === 0 && i > 3 ? `Depends on #${i - 3}` : "",
        readyLabeledBy: i % 17 === 0 ? "outsider" : "maintainer",
      }),
    );
    if (label !== "autopilot:ready") {
      results.push(
        result(i, {
          result:
            label === "autopilot:review"
              ? "complete"
              : label === "autopilot:needs-human"
                ? "needs_human"
                : label === "autopilot:blocked"
                  ? "blocked"
                  : label === "autopilot:timeout"
                    ? "timeout"
                    : "failed",
          reason: `A long reason number ${i}: ${"the agent explains at length what went wrong and why; ".repeat(6)}`,
          dispatchId: `${i}-1-seed`,
        }),
      );
    }
    if (label === "autopilot:review") pulls.push(pull(i, { checks: [check("test", null)] }));
  }
  const w = world({ issues, workerResults: results, pulls, runs: [run(1, 1), run(2, 2)] });
  // Start from a state rebuilt from all of it (the worst case: a record for every off-ramped task).
  const state = rebuildState(w, T0, config());
  state.session = { ...state.session, status: "running", reason: "user_start" };
  state.history.completed = n * 3;
  state.history.comments = Math.floor((n * 3) / HISTORY_BATCH);
  state.pendingHistory = Array.from({ length: HISTORY_BATCH - 1 }, (_, k) => ({
    issue: n + 1 + k,
    title: longTitle(n + 1 + k).slice(0, 80),
    outcome: "done" as const,
    at: T0.toISOString(),
    iterations: 7,
    tokens: 123_456,
    costUsd: 1.23,
    attempts: 2,
    pr: 9000 + k,
  }));
  state.processed = Array.from({ length: 300 }, (_, k) => 1_000_000 + k);
  state.refused = Array.from({ length: 100 }, (_, k) => `someone-with-a-long-login-${k}`);
  state.incidents = Array.from({ length: 10 }, (_, k) => ({
    at: T0.toISOString(),
    kind: "x",
    message: `incident ${k} ${"…".repeat(100)}`,
  }));
  return { w, state: DashboardStateSchema.parse(JSON.parse(JSON.stringify(state))) };
}

describe("GitHub's 65,536-character body limit", () => {
  it.each([100, 1_000, 5_000])("holds at %i tasks, and the body still parses", (n) => {
    const { w, state } = bigWorld(n);
    const started = performance.now();
    const d = decide({ ...input(w), state, now: minutes(5) });
    const ms = Math.round(performance.now() - started);
    const body = writtenBody(d);
    const parsed = parseDashboard(body);
    const stateChars = body.length - body.lastIndexOf("<!-- autopilot:state v1");
    console.log(
      `${n} tasks: body ${body.length} characters (${utf8Length(body)} UTF-8 bytes), state block ${stateChars}, ` +
        `${Object.keys(d.state.tasks).length} task records, decided in ${ms} ms`,
    );
    expect(body.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(utf8Length(body)).toBeLessThanOrEqual(BODY_CAP);
    expect(parsed.corrupt).toBe(false);
    expect(parsed.state).toEqual(d.state);
    expect(body).toContain(TRACKING_MARKER);
    if (n >= 1_000) expect(body).toMatch(/…and [\d,]+ more/);
    expect(ms).toBeLessThan(5_000);
  });

  it("trims the lists, then the state, when even small lists do not fit", () => {
    const { w, state } = bigWorld(1_000);
    const d = decide({ ...input(w), state, now: minutes(5) });
    const huge = { ...d.state, tasks: { ...d.state.tasks } };
    for (let i = 0; i < 3_000; i++) {
      huge.tasks[String(100_000 + i)] = {
        ...huge.tasks[Object.keys(huge.tasks)[0]!]!,
        dispatchId: `${100_000 + i}-1-x`,
        handled: undefined,
        reason: "r".repeat(300),
      };
    }
    const view = emptyView();
    const body = renderDashboard(huge, view, T0);
    expect(utf8Length(body)).toBeLessThanOrEqual(BODY_CAP);
    expect(parseDashboard(body).corrupt).toBe(false);
  });
});

describe("compaction", () => {
  it("measures the state block exactly as long as its rendering, record by record", () => {
    const state = emptyState(T0);
    state.processed = [1, 2, 3];
    state.incidents = [
      { kind: "x", message: "a <b> tag & </script> in text", at: T0.toISOString() },
    ] as never;
    for (let n = 1; n <= 40; n++) {
      state.tasks[String(n)] = {
        ...newTaskRecord(),
        attempt: n % 3,
        ...(n % 2 ? { reason: `fails with <${n}> and -->` } : {}),
        ...(n % 5 === 0 ? { notices: [`gate-${n}`] } : {}),
      };
    }
    const sizes = new Map();
    expect(stateBlockLength(state, sizes)).toBe(renderStateBlock(state).length);
    // Measured again with the records' sizes known (what compaction does after each trimming step).
    expect(stateBlockLength({ ...state, processed: [] }, sizes)).toBe(
      renderStateBlock({ ...state, processed: [] }).length,
    );
    expect(stateBlockLength(emptyState(T0))).toBe(renderStateBlock(emptyState(T0)).length);
  });

  it("writes out a full batch of finished tasks, keeping the counters", () => {
    const state = emptyState(T0);
    state.pendingHistory = Array.from({ length: HISTORY_BATCH }, (_, i) => ({
      issue: i + 1,
      title: `T${i}`,
      outcome: "done" as const,
      at: T0.toISOString(),
      iterations: 1,
      tokens: 0,
      costUsd: 0,
      attempts: 1,
    }));
    const c = compactState(state);
    expect(c.flush).toHaveLength(HISTORY_BATCH);
    expect(c.state.pendingHistory).toEqual([]);
    expect(c.state.history.comments).toBe(1);
    expect(compactState({ ...state, pendingHistory: state.pendingHistory.slice(0, 3) }).flush).toEqual([]);
  });

  it("drops settled records (oldest first) when the state is too big, never a live dispatch", () => {
    const state = emptyState(T0);
    for (let i = 1; i <= 400; i++) {
      state.tasks[String(i)] = DashboardStateSchema.shape.tasks.parse({
        "1": {
          attempt: 1,
          dispatchId: `${i}-1-s`,
          handled: `${i}-1-s`,
          dispatchedAt: minutes(i).toISOString(),
          reason: "r".repeat(300),
        },
      })["1"]!;
    }
    state.tasks["999"] = {
      ...state.tasks["1"]!,
      dispatchId: "999-1-s",
      handled: undefined,
      dispatchedAt: T0.toISOString(),
    };
    const c = compactState(state);
    expect(renderStateBlock(c.state).length).toBeLessThanOrEqual(STATE_CAP);
    expect(c.state.tasks["999"]).toBeDefined();
    expect(c.state.tasks["400"]).toBeDefined();
    expect(c.state.tasks["1"]).toBeUndefined();
  });
});

describe("trimming the state keeps the tasks still on their way", () => {
  it("drops off-ramped records before the record of a task in review, with its feedback rounds and notices", () => {
    const state = emptyState(T0);
    const record = (i: number, label: string) =>
      DashboardStateSchema.shape.tasks.parse({
        "1": {
          attempt: 1,
          dispatchId: `${i}-1-s`,
          handled: `${i}-1-s`,
          dispatchedAt: minutes(i).toISOString(),
          reason: "r".repeat(300),
          label,
        },
      })["1"]!;
    for (let i = 2; i <= 400; i++) state.tasks[String(i)] = record(i, "blocked");
    // The oldest record of all is a task in review, on its second feedback round.
    state.tasks["1"] = {
      ...record(1, "review"),
      feedbackRounds: 2,
      feedbackSha: "abc",
      notices: ["gate-101"],
    };
    const c = compactState(state);
    expect(renderStateBlock(c.state).length).toBeLessThanOrEqual(STATE_CAP);
    expect(c.state.tasks["1"]).toMatchObject({
      feedbackRounds: 2,
      feedbackSha: "abc",
      notices: ["gate-101"],
    });
    expect(c.state.tasks["2"]).toBeUndefined();
  });
});

describe("rebuildState", () => {
  it("recovers attempts, dispatches, runs, results and the human gate from GitHub", () => {
    const w = world({
      issues: [
        issue(1, { labels: ["autopilot:in-progress"] }),
        issue(2, { labels: ["autopilot:review"] }),
        issue(3, { labels: ["autopilot:needs-human"] }),
        issue(4),
        issue(5, { labels: ["bug"] }),
      ],
      runs: [run(90, 1, { dispatchId: "1-3-seed", attempt: 3 })],
      workerResults: [
        result(2, {
          attempt: 2,
          dispatchId: "2-2-x",
          humanGate: {
            fired: true,
            rules: [{ rule: "secrets", where: "diff", match: "API_KEY", neverAutoApprove: false }],
          },
        }),
        result(3, { result: "needs_human", reason: "Which port?", updatedAt: minutes(3).toISOString() }),
      ],
    });
    const state = rebuildState(w, T0, config());
    expect(Object.keys(state.tasks).sort()).toEqual(["1", "2", "3"]);
    expect(state.tasks["1"]).toMatchObject({ attempt: 3, dispatchId: "1-3-seed", runId: 90 });
    expect(state.tasks["2"]).toMatchObject({ attempt: 2, handled: "2-2-x", gate: ["secrets"], pr: 102 });
    expect(state.tasks["3"]).toMatchObject({ reason: "Which port?", since: minutes(3).toISOString() });
    expect(state.session.status).toBe("running");
  });
});

describe("the agent's network on the dashboard", () => {
  it("names `network: open` and what it lets the agent reach; says nothing of the default allow-list", () => {
    const w = world({ issues: [issue(1)] });
    const open = writtenBody(decide({ ...input(w), config: config({ network: "open" }), now: minutes(1) }));
    expect(open).toContain(`**Agent network:** ${OPEN_NETWORK_ACCESS}`);
    const listed = writtenBody(decide({ ...input(w), now: minutes(1) }));
    expect(listed).not.toContain("Agent network");
  });
});
