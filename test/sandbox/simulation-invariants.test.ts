/**
 * The simulation's invariants (sandbox/simulation/sim-invariants.ts) on worlds built by hand: each reports the
 * breach it names, and stays quiet on the same world without it.
 */
import { describe, expect, it } from "vitest";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import * as invariants from "../../sandbox/simulation/sim-invariants.js";
import { ALL_READ, BOT, dispatch, REPO, world } from "./simulation-world.js";

describe("the simulation's invariants", () => {
  it("a dispatch needs a writer's ready label", () => {
    const { store, o } = world();
    store.createIssue(REPO, { title: "By a triager", labels: ["autopilot:ready"], author: "tina" });
    store.createIssue(REPO, { title: "By a writer", labels: ["autopilot:ready"], author: "alice" });
    expect(invariants.dispatchOnlyByWritersWord(o, dispatch(1, 10)).map((v) => v.invariant)).toEqual([
      "dispatchOnlyByWritersWord",
    ]);
    expect(invariants.dispatchOnlyByWritersWord(o, dispatch(2, 11))).toEqual([]);
  });

  it("two live runs of one task are a double dispatch; one after the other is not", () => {
    const { o } = world();
    const first = dispatch(1, 10);
    const second = dispatch(1, 11);
    o.dispatches.push(first, second);
    expect(invariants.noTaskDispatchedTwiceAtOnce(o, second)).toHaveLength(1);
    first.endedAt = 5;
    expect(invariants.noTaskDispatchedTwiceAtOnce(o, second)).toEqual([]);
  });

  it("a session paused by a command must have been paused by a writer", () => {
    const { o } = world();
    // A state rebuilt after its block was damaged keeps the paused status in Autopilot's name (seed 392, Actions).
    const rebuilt = { status: "paused", reason: "user_pause", actor: "autopilot" };
    expect(
      invariants.sessionMovesOnlyByWriters(o, {
        ...rebuilt,
        detail: "state rebuilt from labels, pull requests and runs",
      }),
    ).toEqual([]);
    expect(invariants.sessionMovesOnlyByWriters(o, rebuilt)).toHaveLength(1);
    expect(
      invariants.sessionMovesOnlyByWriters(o, { status: "paused", reason: "user_pause", actor: "tina" }),
    ).toHaveLength(1);
    expect(
      invariants.sessionMovesOnlyByWriters(o, { status: "paused", reason: "user_pause", actor: "alice" }),
    ).toEqual([]);
    expect(
      invariants.sessionMovesOnlyByWriters(o, {
        status: "paused",
        reason: "consecutive_failures",
        actor: "autopilot",
      }),
    ).toEqual([]);
  });

  it("a merge by Autopilot needs passing ci at the merged head", async () => {
    const { store, o } = world();
    const sha = "a".repeat(40);
    await store.createRef(REPO, "refs/heads/autopilot/issue-1", sha, BOT);
    const pull = await store.createPull(REPO, {
      title: "Task",
      head: "autopilot/issue-1",
      base: "main",
      author: BOT,
    });
    expect(
      (await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, ALL_READ)).map((v) => v.detail),
    ).toEqual([`PR #${pull.number}: merged head aaaaaaa has no passing ci`]);
    store.createCheckRun(REPO, {
      name: "ci",
      appSlug: "github-actions",
      headSha: sha,
      status: "completed",
      conclusion: "success",
    });
    expect(await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, ALL_READ)).toEqual([]);
    // A person's merge is theirs to make.
    store.createCheckRun(REPO, {
      name: "ci",
      appSlug: "github-actions",
      headSha: sha,
      status: "completed",
      conclusion: "failure",
    });
    expect(await invariants.mergeOnlyWithEveryGate(o, pull.number, "alice", ALL_READ)).toEqual([]);
  });

  it("a head where the human gate fired merges only with a writer's approval of that head", async () => {
    const { store, o } = world();
    const sha = "b".repeat(40);
    await store.createRef(REPO, "refs/heads/autopilot/issue-1", sha, BOT);
    const pull = await store.createPull(REPO, {
      title: "Task",
      head: "autopilot/issue-1",
      base: "main",
      author: BOT,
    });
    store.createCheckRun(REPO, {
      name: "ci",
      appSlug: "github-actions",
      headSha: sha,
      status: "completed",
      conclusion: "success",
    });
    o.gatedHeads.set(pull.number, new Set([sha]));
    expect(await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, ALL_READ)).toHaveLength(1);
    store.createReview(REPO, pull.number, { author: "alice", event: "APPROVE" });
    expect(await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, ALL_READ)).toEqual([]);
  });

  it("a writer's changes request stops a merge when it stood as the merging reconcile began", async () => {
    const { store, o } = world();
    const sha = "c".repeat(40);
    await store.createRef(REPO, "refs/heads/autopilot/issue-1", sha, BOT);
    const pull = await store.createPull(REPO, {
      title: "Task",
      head: "autopilot/issue-1",
      base: "main",
      author: BOT,
    });
    store.createCheckRun(REPO, {
      name: "ci",
      appSlug: "github-actions",
      headSha: sha,
      status: "completed",
      conclusion: "success",
    });
    store.createReview(REPO, pull.number, { author: "alice", event: "REQUEST_CHANGES", body: "Add a test." });
    expect(
      (await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, ALL_READ)).map((v) => v.detail),
    ).toEqual([`PR #${pull.number}: alice's changes request stands`]);
    // Submitted while the merging reconcile ran, after its read: no merge can be pinned to reviews.
    expect(await invariants.mergeOnlyWithEveryGate(o, pull.number, BOT, () => false)).toEqual([]);
  });

  it("two open tracking issues of Autopilot's are one too many; a closed duplicate is not", () => {
    const { store, o } = world();
    const body = `${TRACKING_MARKER}\n# Autopilot`;
    store.createIssue(REPO, { title: "Autopilot", body, author: BOT });
    const younger = store.createIssue(REPO, { title: "Autopilot", body, author: BOT });
    // A person's issue quoting the marker is not a dashboard.
    store.createIssue(REPO, { title: "Copy", body, author: "alice" });
    expect(invariants.oneTrackingIssue(o).map((v) => v.detail)).toEqual(["2 open tracking issues: #1, #2"]);
    store.closeIssue(REPO, younger.number, BOT, "not_planned");
    expect(invariants.oneTrackingIssue(o)).toEqual([]);
  });

  it("a job's own iteration limit is a writer's word, for that task", () => {
    const { store, o } = world();
    const task = store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    const other = store.createIssue(REPO, { title: "Other", labels: ["autopilot:ready"], author: "alice" });
    const raised = { ...dispatch(task.number, 10), maxIterations: 7 };
    expect(invariants.iterationLimitByWritersWord(o, dispatch(task.number, 9), 4)).toEqual([]);
    // A triager's word, or a writer's for another task, is not enough.
    store.createComment(REPO, task.number, "/autopilot retry --iterations 7", "tina");
    store.createComment(REPO, task.number, `/autopilot retry #${other.number} --iterations 7`, "alice");
    expect(invariants.iterationLimitByWritersWord(o, raised, 4).map((v) => v.invariant)).toEqual([
      "iterationLimitByWritersWord",
    ]);
    store.createComment(REPO, other.number, `/autopilot retry #${task.number} --iterations 7`, "alice");
    expect(invariants.iterationLimitByWritersWord(o, raised, 4)).toEqual([]);
  });
});
