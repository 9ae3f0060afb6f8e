import { describe, expect, it } from "vitest";
import {
  checkInvariants,
  type InvariantInput,
  type InvariantPush,
  type InvariantRun,
  invariantsHold,
} from "../../sandbox/scenario/checks/invariants.js";
import { InvariantRecorder, reviewMergeable } from "../../sandbox/scenario/checks/invariant-recorder.js";
import { SandboxStore } from "../../sandbox/emulator/store.js";
import { emptyState, renderStateBlock, TRACKING_MARKER } from "../../src/core/dashboard/index.js";

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
    expect(report).toMatchObject({
      lostCommits: 0,
      doubleDispatches: 0,
      unaskedDispatches: 0,
      stuckTasks: 0,
    });
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

describe("the recorder's facts", () => {
  const REPO = "demo/shop";
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

  /** A store with issue #1 (labeled ready by alice, a writer) and a tracking issue #2 in `session` state. */
  function world(session: { status: "running" | "idle" | "completed"; reason?: string }, trackingText = "") {
    const store = new SandboxStore();
    store.createRepo({ owner: "demo", name: "shop", defaultBranch: "main" });
    store.addUser("alice", { permission: "admin" });
    store.addUser("mallory", { permission: "triage" });
    const recorder = new InvariantRecorder(store, REPO, "autopilot:ready");
    store.onEvent((e) => recorder.onEvent(e));
    const task = store.createIssue(REPO, { title: "One", labels: ["autopilot:ready"], author: "alice" });
    const state = emptyState(at(0));
    state.session = {
      ...state.session,
      status: session.status,
      reason: (session.reason ??
        { running: "user_start", idle: "initial", completed: "all_done" }[session.status]) as never,
    };
    const tracking = store.createIssue(REPO, {
      title: "Autopilot",
      body: `${TRACKING_MARKER}\n${trackingText}\n${renderStateBlock(state)}`,
      author: `${store.app.slug}[bot]`,
    });
    return { store, recorder, task, tracking };
  }

  function collect(
    w: ReturnType<typeof world>,
    over: Partial<Parameters<InvariantRecorder["collect"]>[0]> = {},
    runs: unknown[] = [],
  ) {
    return w.recorder.collect({
      git: { remote: { listRefs: async () => [], repoPath: () => "" } } as never,
      actions: { listRuns: () => runs } as never,
      tasks: [{ number: 1, state: "ready", dependsOn: [], issue: w.task }],
      labels: { ready: "autopilot:ready", exclude: "autopilot:exclude" },
      maxParallel: 2,
      branchPrefix: "autopilot/",
      tracking: w.tracking,
      mode: "auto",
      autoStart: true,
      ...over,
    });
  }

  it("counts a ready task as stuck in auto mode whatever an issue title writes on the dashboard", async () => {
    // A title rendered on the dashboard spells the line a waiting session shows; it exempts nothing.
    const hostile = "> 👉 **Semi-auto — next: #1 Waiting for `/autopilot run #1` from somebody";
    const w = world({ status: "running" }, hostile);
    expect((await collect(w)).stuckTasks).toBe(1);
    expect((await collect(w, { mode: "semi-auto" })).stuckTasks).toBe(0);
    expect((await collect(world({ status: "running" }, "Waiting for `/autopilot start`"))).stuckTasks).toBe(
      1,
    );
  });

  it("exempts a ready task only when the configuration and session wait for a person", async () => {
    const running = world({ status: "running" });
    expect((await collect(running, { mode: "semi-auto" })).stuckTasks).toBe(0);
    const idle = world({ status: "idle", reason: "initial" });
    expect((await collect(idle, { autoStart: false })).stuckTasks).toBe(0);
    expect((await collect(idle)).stuckTasks).toBe(1);
    // A stopped session waits for `/autopilot start` whatever `session.autoStart` says.
    expect((await collect(world({ status: "idle", reason: "user_stop" }))).stuckTasks).toBe(0);
    expect((await collect(world({ status: "completed" }))).stuckTasks).toBe(1);
    expect((await collect(world({ status: "completed" }), { autoStart: false })).stuckTasks).toBe(0);
  });

  it("in semi-auto, counts a dispatch no writer's /autopilot run of the task came before", async () => {
    const w = world({ status: "running" });
    const runOf = (id: number, dispatchId: string, s: number) => ({
      id,
      repo: REPO,
      inputs: { issue: "1", attempt: dispatchId.split("-")[1], "dispatch-id": dispatchId },
      status: "completed",
      conclusion: "success",
      createdAt: at(s),
      startedAt: at(s + 1),
      completedAt: at(s + 5),
      workflowPath: ".github/workflows/autopilot-worker.yml",
    });
    w.store.createComment(REPO, 2, "/autopilot run #1", "mallory", at(5));
    const unasked = await collect(w, { mode: "semi-auto" }, [runOf(1, "1-1-a", 10)]);
    expect(unasked.unaskedDispatches).toBe(1);
    // Another repository of the organization has its own #1: its run is not this task's.
    const elsewhere = { ...runOf(1, "1-1-a", 10), repo: "demo/other" };
    expect((await collect(w, { mode: "semi-auto" }, [elsewhere])).unaskedDispatches).toBe(0);
    w.store.createComment(REPO, 1, "/autopilot run", "alice", at(8));
    // One writer's command, one attempt (its resend is the same attempt); a second attempt needs a second command.
    expect((await collect(w, { mode: "semi-auto" }, [runOf(1, "1-1-a", 10)])).unaskedDispatches).toBe(0);
    expect(
      (await collect(w, { mode: "semi-auto" }, [runOf(1, "1-1-a", 10), runOf(2, "1-1-a", 20)]))
        .unaskedDispatches,
    ).toBe(0);
    expect(
      (await collect(w, { mode: "semi-auto" }, [runOf(1, "1-1-a", 10), runOf(2, "1-2-a", 20)]))
        .unaskedDispatches,
    ).toBe(1);
  });

  describe("a task branch deleted with its commits", () => {
    const ref = "refs/heads/autopilot/issue-1";
    const pushOf = (pusher: string, c: string, s: number): InvariantPush => ({
      ref,
      before: sha("0"),
      after: sha(c),
      forced: false,
      pusher,
      commits: [sha(c)],
      at: at(s),
    });
    const deletion = (pusher: string, s: number): InvariantPush => ({
      ref,
      before: sha("a"),
      after: sha("0"),
      forced: false,
      pusher,
      commits: [],
      at: at(s),
    });
    const done = { tasks: [{ number: 1, state: "done", dependsOn: [], issue: undefined }] };

    it("is a writer's discard only when the App's own bot deleted it, after the writer's rollback", async () => {
      const w = world({ status: "running" });
      const bot = `${w.store.app.slug}[bot]`;
      w.store.createComment(REPO, 1, "/autopilot rollback", "alice", at(20));
      w.recorder.pushes.push(pushOf(bot, "a", 10), deletion(bot, 30));
      expect((await collect(w, done)).lostCommits).toBe(0);
      // Another bot (a workflow's token, another App) deleting it is no discard Autopilot made.
      const other = world({ status: "running" });
      other.store.createComment(REPO, 1, "/autopilot rollback", "alice", at(20));
      other.recorder.pushes.push(pushOf(bot, "a", 10), deletion("github-actions[bot]", 30));
      expect((await collect(other, done)).lostCommits).toBe(1);
    });

    it("loses a commit a person pushed after the rollback was asked", async () => {
      const w = world({ status: "running" });
      const bot = `${w.store.app.slug}[bot]`;
      w.store.createComment(REPO, 1, "/autopilot rollback", "alice", at(20));
      w.recorder.pushes.push(pushOf(bot, "a", 10), pushOf("alice", "b", 25), deletion(bot, 30));
      const report = await collect(w, done);
      expect(report.lostCommits).toBe(1);
      expect(report.details.find((d) => d.kind === "lost-commit")!.message).toContain(sha("b").slice(0, 7));
    });

    it("is the stale-branch sweep's only when the App's own bot alone pushed to the branch", async () => {
      const w = world({ status: "running" });
      const bot = `${w.store.app.slug}[bot]`;
      w.recorder.pushes.push(pushOf(bot, "a", 10), deletion(bot, 30));
      expect((await collect(w, { ...done, staleBranchSweep: true })).lostCommits).toBe(0);
      const other = world({ status: "running" });
      other.recorder.pushes.push(pushOf("dependabot[bot]", "a", 10), deletion(bot, 30));
      expect((await collect(other, { ...done, staleBranchSweep: true })).lostCommits).toBe(1);
    });
  });
});
