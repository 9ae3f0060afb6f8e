/**
 * The simulation's invariants on budgets, best-of rounds and bots (sandbox/simulation/sim-budget-invariants.ts,
 * sim-best-of-invariants.ts, sim-bot-invariants.ts), on worlds built by hand.
 */
import { describe, expect, it } from "vitest";
import { bestOfOneWinner, bestOfOnlyByWritersWord } from "../../sandbox/simulation/sim-best-of-invariants.js";
import {
  budgetsNeverExceededAtDispatch,
  budgetsNeverExceededAtEnd,
  reportedSpend,
  sessionBudgetStopOnlyWhenSpent,
} from "../../sandbox/simulation/sim-budget-invariants.js";
import { botsAreNeverObeyed } from "../../sandbox/simulation/sim-bot-invariants.js";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { renderWorkerResultMarker, type WorkerResult } from "../../src/core/tasks/worker-result.js";
import { BOT, dispatch, REPO, world } from "./simulation-world.js";

const names = (found: { invariant: string }[]) => found.map((v) => v.invariant);
const budgets = (session: number | null, task: number | null) => ({
  ...DEFAULT_CONFIG.budgets,
  session: { tokens: session, usd: null },
  task: { tokens: task, usd: null },
});

/** A task whose worker reported `tokens` in its progress comment's result marker. */
function spent(tokens: number) {
  const made = world();
  made.store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
  made.clock.ms += 60_000;
  const result: WorkerResult = {
    version: 1,
    issue: 1,
    attempt: 1,
    dispatchId: "1-1-x",
    status: "finished",
    result: "budget_exceeded",
    iterations: 2,
    maxIterations: 3,
    commits: 0,
    branch: "autopilot/issue-1",
    tokens: { input: tokens, output: 0 },
    costUsd: 0,
    humanGate: { fired: false, rules: [] },
    startedAt: new Date(made.clock.ms).toISOString(),
    updatedAt: new Date(made.clock.ms).toISOString(),
  };
  made.store.createComment(REPO, 1, `done\n\n${renderWorkerResultMarker(result)}`, BOT);
  made.clock.ms += 60_000;
  return made;
}

describe("budgetsNeverExceeded", () => {
  it("no dispatch once the session's budget was spent as the dispatching reconcile read GitHub", () => {
    const { o } = spent(5000);
    const read = reportedSpend(o);
    expect(read.total).toBe(5000);
    expect(names(budgetsNeverExceededAtDispatch(o, dispatch(1, 2), budgets(5000, null), read, true))).toEqual(
      ["budgetsNeverExceeded"],
    );
    expect(budgetsNeverExceededAtDispatch(o, dispatch(1, 2), budgets(6000, null), read, true)).toEqual([]);
  });

  it("a task whose own budget was spent is dispatched again only on a writer's word since", () => {
    const { store, o } = spent(3000);
    const read = reportedSpend(o);
    expect(names(budgetsNeverExceededAtDispatch(o, dispatch(1, 2), budgets(null, 2000), read, true))).toEqual(
      ["budgetsNeverExceeded"],
    );
    store.createComment(REPO, 1, "/autopilot retry", "tina");
    expect(budgetsNeverExceededAtDispatch(o, dispatch(1, 2), budgets(null, 2000), read, true)).toHaveLength(
      1,
    );
    store.createComment(REPO, 1, "/autopilot retry", "alice");
    expect(budgetsNeverExceededAtDispatch(o, dispatch(1, 2), budgets(null, 2000), read, true)).toEqual([]);
  });

  it("a worker stops for the session's budget only once the reported spend reached it", () => {
    const { o } = spent(4000);
    expect(names(sessionBudgetStopOnlyWhenSpent(o, dispatch(1, 2), budgets(6000, null)))).toEqual([
      "budgetsNeverExceeded",
    ]);
    expect(sessionBudgetStopOnlyWhenSpent(o, dispatch(1, 2), budgets(4000, null))).toEqual([]);
  });

  it("at the end, a budget may be passed by no more than the calls that crossed a run's cap", () => {
    const { o } = spent(5000);
    expect(names(budgetsNeverExceededAtEnd(o, budgets(4500, 4500), true))).toEqual([
      "budgetsNeverExceeded",
      "budgetsNeverExceeded",
    ]);
    o.dispatches.push({ ...dispatch(1, 2), overrun: 600 });
    expect(budgetsNeverExceededAtEnd(o, budgets(4500, 4500), true)).toEqual([]);
  });
});

describe("bestOfOneWinner", () => {
  it("a candidate runs only on a writer's label, or with onRetry", () => {
    const { store, o } = world();
    store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    const candidate = { ...dispatch(1, 2), candidate: true, candidateNumber: 1 };
    store.addLabels(REPO, 1, ["autopilot:best-of"], "tina");
    expect(names(bestOfOnlyByWritersWord(o, candidate, false))).toEqual(["bestOfOneWinner"]);
    expect(bestOfOnlyByWritersWord(o, candidate, true)).toEqual([]);
    const writers = world();
    writers.store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    writers.store.addLabels(REPO, 1, ["autopilot:best-of"], "alice");
    expect(bestOfOnlyByWritersWord(writers.o, candidate, false)).toEqual([]);
  });

  it("no candidate merged; the others closed once the task's own pull request shows", async () => {
    const { store, o, clock } = world();
    store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    for (const ref of ["autopilot/issue-1-candidate-1", "autopilot/issue-1-candidate-2", "autopilot/issue-1"])
      await store.createRef(REPO, `refs/heads/${ref}`, ref.length.toString(16).padStart(40, "a"), BOT);
    const one = await store.createPull(REPO, {
      title: "c1",
      head: "autopilot/issue-1-candidate-1",
      base: "main",
      author: BOT,
    });
    await store.createPull(REPO, {
      title: "c2",
      head: "autopilot/issue-1-candidate-2",
      base: "main",
      author: BOT,
    });
    expect(bestOfOneWinner(o)).toEqual([]);
    clock.ms += 60_000;
    await store.createPull(REPO, {
      title: "Task (#1)",
      head: "autopilot/issue-1",
      base: "main",
      author: BOT,
    });
    expect(names(bestOfOneWinner(o))).toEqual(["bestOfOneWinner", "bestOfOneWinner"]);
    store.updatePull(REPO, one.number, { state: "closed" }, BOT);
    expect(bestOfOneWinner(o)).toHaveLength(1);
  });
});

describe("botsAreNeverObeyed", () => {
  it("a bot's command that got Autopilot's reaction was taken as a command", () => {
    const { store, o } = world();
    store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
    const other = store.createComment(REPO, 1, "/autopilot stop", "helper[bot]");
    const own = store.createComment(REPO, 1, "/autopilot approve #1", BOT);
    const alices = store.createComment(REPO, 1, "/autopilot status", "alice");
    store.addReaction(REPO, { commentId: alices.id }, "+1", BOT);
    expect(botsAreNeverObeyed(o)).toEqual([]);
    store.addReaction(REPO, { commentId: other.id }, "+1", BOT);
    store.addReaction(REPO, { commentId: own.id }, "eyes", BOT);
    expect(names(botsAreNeverObeyed(o))).toEqual(["botsAreNeverObeyed", "botsAreNeverObeyed"]);
  });
});
