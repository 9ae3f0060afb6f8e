import { describe, expect, it } from "vitest";
import {
  checkInvariants,
  type InvariantInput,
  type InvariantPush,
  type InvariantRun,
  invariantsHold,
} from "../../sandbox/scenario/checks/invariants.js";
import { reviewMergeable } from "../../sandbox/scenario/checks/invariant-recorder.js";

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const sha = (c: string) => c.repeat(40);

function run(over: Partial<InvariantRun> & { id: number }): InvariantRun {
  return {
    issue: 1,
    attempt: 1,
    dispatchId: `1-1-${over.id}`,
    status: "completed",
    conclusion: "success",
    createdAt: t(0),
    startedAt: t(1),
    completedAt: t(10),
    ...over,
  };
}

function push(over: Partial<InvariantPush>): InvariantPush {
  return {
    ref: "refs/heads/autopilot/issue-1",
    before: sha("0"),
    after: sha("a"),
    forced: false,
    pusher: "autopilot[bot]",
    commits: [sha("a")],
    at: t(5),
    ...over,
  };
}

function input(over: Partial<InvariantInput> = {}): InvariantInput {
  return {
    runs: [run({ id: 1 })],
    pushes: [push({})],
    reachable: new Set([sha("a")]),
    tasks: [{ number: 1, state: "done", dependsOn: [], readyByWriter: true, excluded: false }],
    maxParallel: 2,
    sessionStatus: "completed",
    branchPrefix: "autopilot/",
    now: t(60),
    ...over,
  };
}

describe("checkInvariants", () => {
  it("holds for a clean run", () => {
    const report = checkInvariants(input());
    expect(report).toMatchObject({ lostCommits: 0, doubleDispatches: 0, stuckTasks: 0 });
    expect(report.checked).toEqual({ commits: 1, runs: 1, tasks: 1 });
    expect(invariantsHold(report)).toBe(true);
  });

  it("counts a task-branch commit reachable from nothing as lost", () => {
    const report = checkInvariants(
      input({
        pushes: [push({}), push({ before: sha("a"), after: sha("b"), commits: [sha("b")], at: t(8) })],
        reachable: new Set([sha("a")]),
      }),
    );
    expect(report.lostCommits).toBe(1);
    expect(report.details[0]).toMatchObject({ kind: "lost-commit", issue: 1 });
    expect(invariantsHold(report)).toBe(false);
  });

  it("counts commits dropped by a forced push as lost unless Autopilot's rewrite is exempted", () => {
    const pushes = [
      push({}),
      push({ before: sha("a"), after: sha("c"), forced: true, commits: [sha("c")], at: t(9) }),
    ];
    const reachable = new Set([sha("c")]);
    const lost = checkInvariants(input({ pushes, reachable }));
    expect(lost.lostCommits).toBe(1);
    expect(lost.details[0]!.message).toContain("forced push");
    const exempt = checkInvariants(input({ pushes, reachable, exemptForcePush: (p) => p.forced }));
    expect(exempt.lostCommits).toBe(0);
    expect(exempt.details[0]!.kind).toBe("note");
  });

  it("ignores pushes to branches that are not task branches", () => {
    const report = checkInvariants(
      input({ pushes: [push({ ref: "refs/heads/feature", commits: [sha("f")] })], reachable: new Set() }),
    );
    expect(report.lostCommits).toBe(0);
  });

  it("counts overlapping runs of one task as a double dispatch", () => {
    const report = checkInvariants(
      input({
        runs: [
          run({ id: 1, startedAt: t(1), completedAt: t(10) }),
          run({ id: 2, attempt: 2, createdAt: t(4), startedAt: t(5), completedAt: t(12) }),
        ],
      }),
    );
    expect(report.doubleDispatches).toBe(1);
    expect(report.details[0]!.kind).toBe("double-dispatch");
  });

  it("counts a second dispatch of the same attempt queued before the first ended", () => {
    const report = checkInvariants(
      input({
        runs: [
          run({ id: 1, startedAt: t(1), completedAt: t(10) }),
          // queued behind the concurrency group: never overlapping, still a duplicate
          run({ id: 2, createdAt: t(3), startedAt: t(11), completedAt: t(20) }),
        ],
      }),
    );
    expect(report.doubleDispatches).toBe(1);
  });

  it("treats a later dispatch of the same attempt after a lost run as a resume", () => {
    const report = checkInvariants(
      input({
        runs: [
          run({ id: 1, conclusion: "failure", startedAt: t(1), completedAt: t(10) }),
          run({ id: 2, createdAt: t(15), startedAt: t(16), completedAt: t(30) }),
          run({ id: 3, issue: 2, createdAt: t(2), startedAt: t(3), completedAt: t(30) }),
        ],
        tasks: [
          { number: 1, state: "done", dependsOn: [], readyByWriter: true, excluded: false },
          { number: 2, state: "done", dependsOn: [], readyByWriter: true, excluded: false },
        ],
      }),
    );
    expect(report.doubleDispatches).toBe(0);
    expect(report.details.some((d) => d.kind === "note")).toBe(true);
  });

  it("counts a still-running run as live until the end", () => {
    const report = checkInvariants(
      input({
        runs: [
          run({ id: 1, status: "in_progress", completedAt: null }),
          run({ id: 2, attempt: 2, createdAt: t(40), startedAt: t(41), completedAt: t(50) }),
        ],
      }),
    );
    expect(report.doubleDispatches).toBe(1);
  });

  it("counts an in-progress task without a live run as stuck", () => {
    const report = checkInvariants(
      input({
        tasks: [{ number: 1, state: "in-progress", dependsOn: [], readyByWriter: true, excluded: false }],
      }),
    );
    expect(report.stuckTasks).toBe(1);
    const live = checkInvariants(
      input({
        runs: [run({ id: 1, status: "in_progress", completedAt: null })],
        tasks: [{ number: 1, state: "in-progress", dependsOn: [], readyByWriter: true, excluded: false }],
      }),
    );
    expect(live.stuckTasks).toBe(0);
  });

  it("counts a dispatchable ready task left behind with free slots as stuck", () => {
    const tasks = [
      { number: 1, state: "done", dependsOn: [], readyByWriter: true, excluded: false },
      { number: 2, state: "ready", dependsOn: [1], readyByWriter: true, excluded: false },
    ];
    expect(checkInvariants(input({ tasks })).stuckTasks).toBe(1);
    // not stuck: waiting for a dependency, labeled by someone without write access, excluded, paused
    const waiting = [
      { number: 1, state: "blocked", dependsOn: [], readyByWriter: true, excluded: false },
      { number: 2, state: "ready", dependsOn: [1], readyByWriter: true, excluded: false },
      { number: 3, state: "ready", dependsOn: [], readyByWriter: false, excluded: false },
      { number: 4, state: "ready", dependsOn: [], readyByWriter: true, excluded: true },
    ];
    expect(checkInvariants(input({ tasks: waiting })).stuckTasks).toBe(0);
    expect(checkInvariants(input({ tasks, sessionStatus: "paused" })).stuckTasks).toBe(0);
    // the dashboard waits for a person's `/autopilot start` or `/autopilot run #N` (semi-auto): not stuck
    expect(checkInvariants(input({ tasks, awaitingCommand: true })).stuckTasks).toBe(0);
    // every slot busy: not stuck
    const busy = [
      run({ id: 1, issue: 5, status: "in_progress", completedAt: null }),
      run({ id: 2, issue: 6, status: "queued", startedAt: null, completedAt: null }),
    ];
    expect(checkInvariants(input({ tasks, runs: busy })).stuckTasks).toBe(0);
  });

  it("counts a mergeable task left in review as stuck, not one waiting for people", () => {
    const task = (review: { mergeable: boolean; idleSeconds: number }) => [
      { number: 1, state: "review", dependsOn: [], readyByWriter: true, excluded: false, review },
    ];
    expect(checkInvariants(input({ tasks: task({ mergeable: true, idleSeconds: 45 }) })).stuckTasks).toBe(1);
    expect(checkInvariants(input({ tasks: task({ mergeable: true, idleSeconds: 5 }) })).stuckTasks).toBe(0);
    expect(checkInvariants(input({ tasks: task({ mergeable: false, idleSeconds: 45 }) })).stuckTasks).toBe(0);
  });
});

describe("a task in review waiting on the human gate", () => {
  const head = sha("a");
  const base = {
    checks: "success" as const,
    head,
    reviews: [] as { user: string; state: string; commitId: string }[],
    body: "Closes #1",
    gateRules: [] as string[],
  };

  it("is not one Autopilot could merge while the controller's gate waits for an approval of the head", () => {
    // The worker's marker said nothing fired; the controller's own diff gate recorded a rule in its state.
    expect(reviewMergeable({ ...base, gateRules: ["migration"] })).toBe(false);
    expect(
      reviewMergeable({ ...base, body: 'Closes #1 <!-- autopilot:human-gate {"fired":true,"rules":[]} -->' }),
    ).toBe(false);
    // An approval of an older commit does not count.
    const old = [{ user: "alice", state: "APPROVED", commitId: sha("b") }];
    expect(reviewMergeable({ ...base, gateRules: ["migration"], reviews: old })).toBe(false);
  });

  it("becomes one once the head is approved, or when no gate fired", () => {
    const approved = [{ user: "alice", state: "APPROVED", commitId: head }];
    expect(reviewMergeable({ ...base, gateRules: ["migration"], reviews: approved })).toBe(true);
    expect(reviewMergeable(base)).toBe(true);
    expect(reviewMergeable({ ...base, checks: "pending" })).toBe(false);
  });
});
