/**
 * The recovery commands of design documents 001/002 ("FAILED recovery" R and X, "TIMEOUT recovery" +):
 * `/autopilot rollback #N`, `/autopilot cleanup #N` and `/autopilot retry #N --iterations M`, as reconciles
 * decide them: who may give them, what they change, and that a re-delivered comment changes nothing twice.
 */
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../src/core/config/config-schema.js";
import { MAX_ITERATIONS } from "../../../src/core/tasks/iteration-limit.js";
import { JobOverridesSchema } from "../../../src/core/dashboard/dashboard-state.js";
import { trustedOpenPulls } from "../../../src/core/gates/pull-trust.js";
import { discardedBranches } from "../../../src/core/reconcile/commands/rollback.js";
import { parseCommand } from "../../../src/core/tasks/commands.js";
import { recoveryAlreadyDone } from "../../../src/github/execution/task-recovery.js";
import { applyWorkerOverrides } from "../../../src/worker/settings/config-input.js";
import {
  BOT,
  check,
  comment,
  config,
  issue,
  minutes,
  only,
  pull,
  result,
  step,
  T0,
  world,
} from "../world.js";

const onTracking = { issue: 50, trackingIssue: 50 };

describe("parsing the recovery commands", () => {
  it("reads rollback, cleanup and retry --iterations, with the issue defaulting to a task issue's own", () => {
    expect(parseCommand("/autopilot rollback #7", onTracking)).toMatchObject({
      kind: "command",
      command: { name: "rollback", issue: 7 },
    });
    expect(parseCommand("/autopilot cleanup", { issue: 7, trackingIssue: 50 })).toMatchObject({
      command: { name: "cleanup", issue: 7 },
    });
    expect(parseCommand("/autopilot retry #7 --iterations 40", onTracking)).toMatchObject({
      command: { name: "retry", issue: 7, iterations: 40 },
    });
    expect(parseCommand("/autopilot retry --iterations=12", { issue: 7, trackingIssue: 50 })).toMatchObject({
      command: { name: "retry", issue: 7, iterations: 12 },
    });
    expect(parseCommand("/autopilot retry #7", onTracking)).toMatchObject({
      command: { name: "retry", issue: 7, iterations: null },
    });
  });

  it("refuses a bad limit or option with a message naming the fix", () => {
    for (const body of [
      "/autopilot retry #7 --iterations",
      "/autopilot retry #7 --iterations 0",
      "/autopilot retry #7 --iterations 501",
      "/autopilot retry #7 --iterations lots",
    ]) {
      const parsed = parseCommand(body, onTracking);
      expect(parsed?.kind).toBe("invalid");
      expect(parsed && "problem" in parsed ? parsed.problem : "").toMatch(
        /--iterations` needs a whole number from 1 to 500/,
      );
    }
    // One bound everywhere: the file's setting, the command, the task record and the worker's config input.
    const top = parseCommand(`/autopilot retry #7 --iterations ${MAX_ITERATIONS}`, onTracking);
    expect(top).toMatchObject({ command: { iterations: MAX_ITERATIONS } });
    expect(ConfigSchema.safeParse({ maxIterations: MAX_ITERATIONS }).success).toBe(true);
    expect(ConfigSchema.safeParse({ maxIterations: MAX_ITERATIONS + 1 }).success).toBe(false);
    expect(JobOverridesSchema.safeParse({ maxIterations: MAX_ITERATIONS }).success).toBe(true);
    expect(JobOverridesSchema.safeParse({ maxIterations: MAX_ITERATIONS + 1 }).success).toBe(false);
    const other = parseCommand("/autopilot retry #7 --force", onTracking);
    expect(other && "problem" in other ? other.problem : "").toMatch(/no option `--force`/);
    const noIssue = parseCommand("/autopilot rollback", onTracking);
    expect(noIssue && "problem" in noIssue ? noIssue.problem : "").toMatch(/needs an issue number/);
  });
});

describe("/autopilot retry #N --iterations M", () => {
  it("raises that task's limit for its next worker, through the worker's config input, and no other task's", () => {
    const w = world({
      issues: [issue(1, { labels: ["autopilot:timeout"] }), issue(2, { labels: ["autopilot:timeout"] })],
      comments: [
        comment(700, 1, "dev", "/autopilot retry #1 --iterations 40"),
        comment(701, 2, "dev", "/autopilot retry #2"),
      ],
    });
    const first = step(w, null, { config: config({ maxParallel: 2 }) });
    const dispatches = only(first.decision.effects, "dispatchWorker");
    const of1 = dispatches.find((d) => d.issue === 1);
    const of2 = dispatches.find((d) => d.issue === 2);
    expect(JSON.parse(of1?.inputs?.config ?? "{}")).toEqual({ maxIterations: 40 });
    expect(of2?.inputs?.config).toBeUndefined();
    expect(first.state.tasks[1]?.maxIterations).toBe(40);
  });

  it("is honoured by the worker: its config input may carry maxIterations, and nothing that loosens safety", () => {
    const applied = applyWorkerOverrides(config(), JSON.stringify({ maxIterations: 40 }));
    expect(applied.ok && applied.config.maxIterations).toBe(40);
    const refused = applyWorkerOverrides(
      config(),
      JSON.stringify({ maxIterations: 40, humanGate: { enabled: false } }),
    );
    expect(refused.ok).toBe(false);
  });
});

describe("/autopilot rollback #N", () => {
  it("of an unmerged task in review: closes its PR, deletes its branch, and puts it back in the queue", () => {
    const w = world({
      issues: [issue(3, { labels: ["autopilot:review"] })],
      pulls: [pull(3, { authorId: undefined })],
      comments: [comment(700, 3, "dev", "/autopilot rollback")],
    });
    const { decision, state } = step(w, null);
    expect(only(decision.effects, "closePull")).toEqual([{ type: "closePull", pr: 103, issue: 3 }]);
    expect(only(decision.effects, "deleteBranch").map((e) => e.branch)).toContain("autopilot/issue-3");
    // Back in the queue (and, with a free slot, dispatched again in the same reconcile).
    expect(["ready", "in-progress"]).toContain(state.tasks[3]?.label);
    expect(only(decision.effects, "react")[0]?.content).toBe("+1");
  });

  it("of a merged task: asks GitHub for the revert PR, reopens the issue in review, and says so once", () => {
    const merged = pull(4, { state: "merged", nodeId: "PR_4" });
    const w = world({
      issues: [issue(4, { state: "closed", labels: [] })],
      pulls: [merged],
      comments: [
        comment(700, 50, "dev", "/autopilot rollback #4"),
        comment(701, 50, "dev", "/autopilot rollback #4"),
      ],
      trackingIssue: { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" },
    });
    const { decision, state } = step(w, null);
    expect(only(decision.effects, "revertPull")).toHaveLength(1);
    expect(only(decision.effects, "revertPull")[0]).toMatchObject({ pr: 104, issue: 4 });
    expect(only(decision.effects, "reopenIssue")).toEqual([{ type: "reopenIssue", issue: 4 }]);
    expect(state.tasks[4]?.rollback?.merged).toBe(104);
    expect(state.tasks[4]?.label).toBe("review");
    // The second command in a row is refused: nothing is reverted twice.
    const replies = only(decision.effects, "comment").map((c) => c.body);
    expect(replies.some((b) => /already being rolled back/.test(b))).toBe(true);
  });

  it("treats GitHub's revert PR as the task's PR: its merge makes the task ready, not done", () => {
    const revert = pull(4, {
      number: 120,
      headRef: "revert-104-autopilot/issue-4",
      state: "merged",
      body: "Reverts #104",
    });
    const w = world({ issues: [issue(4, { labels: ["autopilot:review"] })], pulls: [revert] });
    const state = {
      ...step(world(), null).state,
    };
    state.tasks[4] = {
      ...(state.tasks[4] ?? {}),
      rollback: { merged: 104, at: minutes(-1).toISOString() },
    } as never;
    const { decision, state: after } = step(w, state as never);
    expect(only(decision.effects, "closeIssue")).toHaveLength(0);
    expect(after.tasks[4]?.rollback).toBeUndefined();
    expect(after.tasks[4]?.label === "ready" || after.tasks[4]?.label === "in-progress").toBe(true);
    expect(only(decision.effects, "comment").some((c) => /revert PR #120 merged/.test(c.body))).toBe(true);
  });

  it("is refused to people without write access", () => {
    const w = world({
      issues: [issue(3, { labels: ["autopilot:failed"] })],
      comments: [comment(700, 3, "reader", "/autopilot rollback")],
    });
    const { decision } = step(w, null);
    expect(only(decision.effects, "deleteBranch")).toHaveLength(0);
    expect(only(decision.effects, "react")[0]?.content).toBe("confused");
  });
});

describe("/autopilot cleanup #N", () => {
  it("deletes a timed-out task's branch and closes its PR; the task stays timed out", () => {
    const w = world({
      issues: [issue(5, { labels: ["autopilot:timeout"] })],
      pulls: [pull(5)],
      comments: [comment(700, 5, "dev", "/autopilot cleanup")],
    });
    const { decision } = step(w, null);
    expect(only(decision.effects, "deleteBranch").map((e) => e.branch)).toEqual(["autopilot/issue-5"]);
    expect(only(decision.effects, "closePull")).toHaveLength(1);
    expect(only(decision.effects, "setStateLabel")).toHaveLength(0);
  });

  it("refuses a task that still needs its branch (in review), and says what to use instead", () => {
    const w = world({
      issues: [issue(6, { labels: ["autopilot:review"] })],
      pulls: [pull(6)],
      comments: [comment(700, 6, "dev", "/autopilot cleanup")],
    });
    const { decision } = step(w, null);
    expect(only(decision.effects, "deleteBranch")).toHaveLength(0);
    expect(
      only(decision.effects, "comment").some((c) =>
        /Cannot clean up #6: it is review.*rollback/.test(c.body),
      ),
    ).toBe(true);
  });
});

describe("rollback sequences", () => {
  const BOT_ID = 7;
  const own = (n: number, extra: Parameters<typeof pull>[1] = {}) => pull(n, { authorId: BOT_ID, ...extra });
  const revertRef = "revert-104-autopilot/issue-4";

  /** Task 4's PR #104 merged; `/autopilot rollback #4` asked. */
  function rolledBack() {
    const merged = own(4, { state: "merged", nodeId: "PR_4", headBranchExists: false });
    const w = world({
      botId: BOT_ID,
      issues: [issue(4, { state: "closed", labels: [] })],
      pulls: [merged],
      comments: [comment(700, 50, "dev", "/autopilot rollback #4")],
      trackingIssue: { number: 50, body: "", updatedAt: minutes(0).toISOString(), state: "open" },
    });
    const first = step(w, null);
    expect(only(first.decision.effects, "revertPull")).toHaveLength(1);
    const reopened = structuredClone(first.world);
    reopened.comments = [];
    for (const i of reopened.issues) if (i.number === 4) i.state = "open";
    return { world: reopened, state: first.state };
  }

  function revertMergedThen() {
    const { world: w, state } = rolledBack();
    w.pulls.push(own(4, { number: 120, headRef: revertRef, state: "merged", headBranchExists: true }));
    const done = step(w, state, { now: minutes(3) });
    expect(done.state.tasks[4]?.rollback).toBeUndefined();
    expect(done.state.tasks[4]?.dropped).toContain(104);
    return done;
  }

  it("after the revert merged, the reverted PR is not the task's: a redo closed unmerged fails the task", () => {
    const done = revertMergedThen();
    const w = structuredClone(done.world);
    for (const i of w.issues) if (i.number === 4) i.labels = ["autopilot:review"];
    w.runs = [];
    w.pulls.push(own(4, { number: 130, state: "closed", headBranchExists: true }));
    const next = step(w, done.state, { now: minutes(30) });
    expect(only(next.decision.effects, "closeIssue")).toHaveLength(0);
    expect(next.state.tasks[4]?.label).toBe("failed");
  });

  it("after the revert merged, a worker reporting completion without a new PR does not finish the task", () => {
    const done = revertMergedThen();
    const record = done.state.tasks[4];
    const dispatchId = record?.dispatchId;
    expect(dispatchId).toBeDefined();
    const w = structuredClone(done.world);
    for (const r of w.runs) {
      r.status = "completed";
      r.conclusion = "success";
    }
    w.workerResults = [
      result(4, {
        dispatchId,
        attempt: record?.attempt ?? 1,
        prNumber: 104,
        updatedAt: minutes(20).toISOString(),
      }),
    ];
    const next = step(w, done.state, { now: minutes(30) });
    expect(only(next.decision.effects, "closeIssue")).toHaveLength(0);
    expect(next.state.tasks[4]?.label).not.toBe("review");
    expect(next.state.tasks[4]?.pr).not.toBe(104);
  });

  it("a revert PR closed unmerged: its branch is deleted, and a new rollback reverts the merged PR again", () => {
    const { world: w, state } = rolledBack();
    w.pulls.push(own(4, { number: 120, headRef: revertRef, state: "closed", headBranchExists: true }));
    const closed = step(w, state, { now: minutes(3) });
    expect(closed.state.tasks[4]?.label).toBe("failed");
    expect(only(closed.decision.effects, "deleteBranch").map((e) => e.branch)).toContain(revertRef);
    const again = structuredClone(closed.world);
    again.comments = [
      comment(800, 50, "dev", "/autopilot rollback #4", { createdAt: minutes(4).toISOString() }),
    ];
    const second = step(again, closed.state, { now: minutes(5) });
    expect(only(second.decision.effects, "revertPull").map((e) => e.pr)).toEqual([104]);
    expect(second.state.tasks[4]?.rollback?.merged).toBe(104);
    // The closed revert of the first rollback is not taken for the new one's.
    const waiting = step(second.world, second.state, { now: minutes(6) });
    expect(waiting.state.tasks[4]?.label).toBe("review");
    expect(waiting.state.tasks[4]?.rollback?.merged).toBe(104);
  });

  it("asks GitHub for the revert again every reconcile until a revert PR is visible", () => {
    const { world: w, state } = rolledBack();
    const next = step(w, state, { now: minutes(2) });
    expect(only(next.decision.effects, "revertPull").map((e) => e.pr)).toEqual([104]);
    w.pulls.push(own(4, { number: 120, headRef: revertRef }));
    const seen = step(w, next.state, { now: minutes(3) });
    expect(only(seen.decision.effects, "revertPull")).toHaveLength(0);
  });

  it("asks the issue's reopen again while the snapshot shows it closed", () => {
    const { world: w, state } = rolledBack();
    for (const i of w.issues) if (i.number === 4) i.state = "closed";
    const next = step(w, state, { now: minutes(2) });
    expect(only(next.decision.effects, "reopenIssue")).toEqual([{ type: "reopenIssue", issue: 4 }]);
  });

  /**
   * Anyone who can push a branch can name it `revert-<PR>-<task branch>`, and another App's bot can open a PR
   * from it: only the PR Autopilot's own account opened (by account id) is the task's revert.
   */
  const strangers = [
    { who: "a person's", author: "mallory", authorId: 666 },
    { who: "another App's bot's", author: "helper-app[bot]", authorId: 49_699_333 },
  ];
  for (const { who, author, authorId } of strangers) {
    for (const state of ["merged", "open", "closed"] as const) {
      it(`takes ${who} ${state} PR named like the revert branch for nothing: the task goes on waiting for Autopilot's revert`, () => {
        const { world: w, state: s } = rolledBack();
        const decoy = pull(4, {
          number: 121,
          headRef: revertRef,
          title: "Revert #104",
          body: "Reverts #104",
          state,
          author,
          authorId,
          // Green, mergeable and handed to auto-merge: everything a revert PR of Autopilot's would need.
          checks: [check("test", "success")],
          autoMerge: state === "open" ? { enabledBy: author, method: "squash" } : null,
          headBranchExists: state !== "closed",
        });
        w.pulls.push(decoy);
        const next = step(w, s, { now: minutes(2) });
        const record = next.state.tasks[4];
        // Still rolling back PR #104, in review, neither done, back in the queue nor failed.
        expect(record?.rollback?.merged).toBe(104);
        expect(record?.label).toBe("review");
        expect(record?.dropped ?? []).not.toContain(121);
        expect(only(next.decision.effects, "closeIssue")).toHaveLength(0);
        expect(only(next.decision.effects, "dispatchWorker")).toHaveLength(0);
        // Nothing is done to the decoy: not merged, not withdrawn, its branch not deleted, not closed.
        expect(only(next.decision.effects, "mergePr")).toHaveLength(0);
        expect(only(next.decision.effects, "withdrawMerge")).toHaveLength(0);
        expect(only(next.decision.effects, "closePull")).toHaveLength(0);
        expect(only(next.decision.effects, "deleteBranch").map((e) => e.branch)).not.toContain(revertRef);
        // GitHub is asked for the revert again, and the decoy is reported once as ignored.
        expect(only(next.decision.effects, "revertPull").map((e) => e.pr)).toEqual([104]);
        expect(next.state.ignoredPulls).toContain(121);
        // Its diff is not among those the controller reads (src/github/pull-verification.ts).
        expect(trustedOpenPulls(next.world, "autopilot/").map((t) => t.pull.number)).not.toContain(121);
        // The executor does not take it for Autopilot's revert either (src/github/execution/task-recovery.ts).
        const ask = only(next.decision.effects, "revertPull")[0];
        expect(ask && recoveryAlreadyDone({ ...next.world, botId: BOT_ID }, "autopilot/", ask)).toBeNull();
        // Many reconciles later the task is still Autopilot's to revert: no stranger ends it.
        const later = step(next.world, next.state, { now: minutes(5) });
        expect(later.state.tasks[4]?.rollback?.merged).toBe(104);
        expect(later.state.tasks[4]?.label).toBe("review");
      });
    }
  }

  it("takes Autopilot's own PR on the revert branch for the revert, beside a stranger's", () => {
    const { world: w, state } = rolledBack();
    w.pulls.push(
      pull(4, { number: 121, headRef: revertRef, state: "merged", authorId: 666, author: "mallory" }),
    );
    w.pulls.push(own(4, { number: 122, headRef: revertRef }));
    const next = step(w, state, { now: minutes(2) });
    expect(only(next.decision.effects, "revertPull")).toHaveLength(0);
    const ask = { type: "revertPull" as const, pr: 104, issue: 4, title: "Revert #104", body: "" };
    expect(recoveryAlreadyDone({ ...w, botId: BOT_ID }, "autopilot/", ask)).toBe(
      "PR #122 already reverts PR #104",
    );
    expect(recoveryAlreadyDone({ ...w, botId: null }, "autopilot/", ask)).toBeNull();
  });

  it("withdraws a revert PR's auto-merge once its head no longer passes the gates", () => {
    const { world: w, state } = rolledBack();
    w.pulls.push(
      own(4, {
        number: 120,
        headRef: revertRef,
        headSha: "rev2",
        checks: [check("test", "failure")],
        autoMerge: { enabledBy: BOT, method: "squash" },
      }),
    );
    const record = state.tasks[4];
    if (record) record.merge = { sha: "rev1", at: minutes(1).toISOString(), via: "auto-merge" };
    const next = step(w, state, { now: minutes(3) });
    expect(only(next.decision.effects, "withdrawMerge")).toMatchObject([{ pr: 120, what: "auto-merge" }]);
  });

  it("of unmerged work: deletes the branch again and starts no worker until the branch is seen gone", () => {
    const w = world({
      botId: BOT_ID,
      issues: [issue(3, { labels: ["autopilot:review"] })],
      pulls: [own(3)],
      comments: [comment(700, 3, "dev", "/autopilot rollback")],
    });
    const first = step(w, null);
    expect(only(first.decision.effects, "dispatchWorker")).toHaveLength(0);
    // The close went through; the delete did not (deferred, paused, or refused).
    const after = structuredClone(first.world);
    after.comments = [];
    for (const p of after.pulls) {
      p.state = "closed";
      p.headBranchExists = true;
    }
    const second = step(after, first.state, { now: minutes(2) });
    expect(only(second.decision.effects, "deleteBranch").map((e) => e.branch)).toEqual(["autopilot/issue-3"]);
    expect(only(second.decision.effects, "dispatchWorker")).toHaveLength(0);
    for (const p of after.pulls) p.headBranchExists = false;
    const third = step(after, second.state, { now: minutes(3) });
    expect(only(third.decision.effects, "deleteBranch")).toHaveLength(0);
    expect(only(third.decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([3]);
  });

  /** Task 3 failed with no PR ever opened on its branch; `/autopilot rollback` asked. */
  function discardedWithoutPull() {
    const w = world({
      botId: BOT_ID,
      issues: [issue(3, { labels: ["autopilot:failed"] })],
      comments: [comment(700, 3, "dev", "/autopilot rollback")],
    });
    const first = step(w, null);
    expect(only(first.decision.effects, "deleteBranch").map((e) => e.branch)).toEqual(["autopilot/issue-3"]);
    expect(only(first.decision.effects, "dispatchWorker")).toHaveLength(0);
    expect(first.state.tasks[3]?.discard).toBeDefined();
    const after = structuredClone(first.world);
    after.comments = [];
    return { world: after, state: first.state };
  }

  it("of unmerged work with no PR on the branch: the task starts as soon as the snapshot reads the branch gone", () => {
    const { world: w, state } = discardedWithoutPull();
    // The snapshot read the branch (src/github/snapshot/discarded-branches.ts): still there.
    w.branchExists = { "autopilot/issue-3": true };
    const waiting = step(w, state, { now: minutes(1) });
    expect(only(waiting.decision.effects, "deleteBranch").map((e) => e.branch)).toEqual([
      "autopilot/issue-3",
    ]);
    expect(only(waiting.decision.effects, "dispatchWorker")).toHaveLength(0);
    // GitHub answered 404: gone, one minute in, long before the SETTLE_MINUTES a branch nothing tells about waits.
    w.branchExists = { "autopilot/issue-3": false };
    const gone = step(w, waiting.state, { now: minutes(2) });
    expect(gone.state.tasks[3]?.discard).toBeUndefined();
    expect(only(gone.decision.effects, "deleteBranch")).toHaveLength(0);
    expect(only(gone.decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([3]);
  });

  it("of unmerged work with no PR on the branch: a branch the snapshot reads as there is never taken as gone", () => {
    const { world: w, state } = discardedWithoutPull();
    w.branchExists = { "autopilot/issue-3": true };
    const later = step(w, state, { now: minutes(60) });
    expect(later.state.tasks[3]?.discard).toBeDefined();
    expect(only(later.decision.effects, "deleteBranch").map((e) => e.branch)).toEqual(["autopilot/issue-3"]);
    expect(only(later.decision.effects, "dispatchWorker")).toHaveLength(0);
  });

  it("of unmerged work with no PR on the branch and no read of it: the deletion is asked for a while, then taken as done", () => {
    const { world: w, state } = discardedWithoutPull();
    const early = step(w, state, { now: minutes(2) });
    expect(only(early.decision.effects, "dispatchWorker")).toHaveLength(0);
    const late = step(w, early.state, { now: minutes(30) });
    expect(late.state.tasks[3]?.discard).toBeUndefined();
    expect(only(late.decision.effects, "dispatchWorker").map((d) => d.issue)).toEqual([3]);
  });
});

describe("the branches the snapshot reads for a rollback of unmerged work", () => {
  it("are those of open tasks still waiting for their branch to go", () => {
    const w = world({
      issues: [issue(3, { labels: ["autopilot:failed"] }), issue(5, { labels: ["autopilot:failed"] })],
      comments: [comment(700, 3, "dev", "/autopilot rollback")],
    });
    const first = step(w, null);
    const next = structuredClone(first.world);
    expect(discardedBranches(next, "autopilot/")).toEqual(["autopilot/issue-3"]);
    // Closed, the task waits for nothing: its branch is not read.
    for (const i of next.issues) if (i.number === 3) i.state = "closed";
    expect(discardedBranches(next, "autopilot/")).toEqual([]);
  });
});

describe("/autopilot retry #N --iterations M of a task waiting on its merge", () => {
  it("applies the limit and says so", () => {
    const w = world({
      issues: [issue(8, { labels: ["autopilot:review"] })],
      pulls: [pull(8)],
      comments: [comment(700, 8, "dev", "/autopilot retry --iterations 80")],
    });
    const state = step(world(), null).state;
    state.tasks[8] = {
      ...(state.tasks[8] ?? {}),
      merge: { sha: "x", at: T0.toISOString(), refused: "no" },
    } as never;
    const { decision, state: after } = step(w, state);
    expect(after.tasks[8]?.maxIterations).toBe(80);
    expect(only(decision.effects, "comment").some((c) => /80 iterations/.test(c.body))).toBe(true);
  });
});
