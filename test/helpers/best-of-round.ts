/**
 * A best-of round for the controller's tests (src/core/reconcile/runs/best-of.ts): task 7 with two candidates,
 * stepped through its dispatches until both have ended.
 */
import { expect } from "vitest";
import type { AutopilotConfig } from "../../src/core/config/index.js";
import type { DashboardState } from "../../src/core/dashboard/index.js";
import type { PullNode, WorldSnapshot } from "../../src/core/world.js";
import { config, issue, minutes, only, pull, result, step, world } from "../core/world.js";

const BOT_ID = 42;
const agent = (model: string) => ({
  ...config().agents.primary,
  preset: "custom" as const,
  model,
  command: "x {prompt_file}",
});
export const bestOf = (extra: Partial<AutopilotConfig["bestOf"]> = {}) =>
  config({
    bestOf: {
      candidates: [agent("wide"), agent("narrow")],
      label: "autopilot:best-of",
      onRetry: false,
      checksWaitMinutes: 10,
      ...extra,
    },
  });
export const LABELED = ["autopilot:ready", "autopilot:best-of"];

export function candidateOf(effects: Parameters<typeof only>[0]): unknown {
  const dispatch = only(effects, "dispatchWorker")[0];
  const text = dispatch?.inputs?.config;
  return text ? (JSON.parse(text) as { candidate?: unknown }).candidate : undefined;
}

/** Candidate K's pull request for task 7, Autopilot's own. */
export function candidatePull(k: number, extra: Partial<PullNode> = {}): PullNode {
  return pull(7, {
    number: 200 + k,
    title: `[candidate ${k} of 2] Task 7 (#7)`,
    headRef: `autopilot/issue-7-candidate-${k}`,
    headSha: `cand${k}`,
    labels: [],
    authorId: BOT_ID,
    createdAt: minutes(2 + k).toISOString(),
    lastPushAt: minutes(2 + k).toISOString(),
    ...extra,
  });
}

/** The diff the controller read of a candidate's pull request: `lines` changed in one file. */
export function diff(k: number, lines: number, file = "src/cart.js") {
  const patch = `@@ -1 +1,${lines} @@\n${"+line\n".repeat(lines)}`;
  return {
    pr: 200 + k,
    sha: `cand${k}`,
    files: [{ filename: file, status: "modified", changes: lines, patch, mode: "100644" }],
    filesCapped: false,
  };
}

/** A finished world of one step: the runs completed, the results in, the pulls and diffs as given. */
export function finished(w: WorldSnapshot, extra: Partial<WorldSnapshot>): WorldSnapshot {
  return {
    ...w,
    runs: w.runs.map((r) => ({ ...r, status: "completed" as const, conclusion: "success" })),
    ...extra,
  };
}

/** Task 7 with the label, through both candidates: the state and world as the round is to be chosen. */
export function bothEnded(
  cfg = bestOf(),
  pulls: { one?: Partial<PullNode> | null; two?: Partial<PullNode> | null } = {},
  outcome: { one?: string; two?: string } = {},
  twoResult: Partial<Parameters<typeof result>[1]> = {},
) {
  const start = step(
    world({ botId: BOT_ID, issues: [issue(7, { labels: [...LABELED], bestOfLabeledBy: "dev" })] }),
    null,
    {
      config: cfg,
    },
  );
  expect(candidateOf(start.decision.effects)).toBe(1);
  const d1 = only(start.decision.effects, "dispatchWorker")[0]!.dispatchId;
  const one = pulls.one === null ? [] : [candidatePull(1, pulls.one)];
  const afterOne = step(
    finished(start.world, {
      pulls: one,
      workerResults: [
        result(7, {
          dispatchId: d1,
          result: (outcome.one ?? "complete") as never,
          branch: "autopilot/issue-7-candidate-1",
          prNumber: pulls.one === null ? undefined : 201,
          costUsd: 0.05,
        }),
      ],
    }),
    start.state,
    { now: minutes(5), config: cfg },
  );
  expect(candidateOf(afterOne.decision.effects)).toBe(2);
  const d2 = only(afterOne.decision.effects, "dispatchWorker")[0]!.dispatchId;
  const two = pulls.two === null ? [] : [candidatePull(2, pulls.two)];
  return {
    cfg,
    world: finished(afterOne.world, {
      pulls: [...one, ...two],
      workerResults: [
        result(7, {
          attempt: 2,
          dispatchId: d2,
          result: (outcome.two ?? "complete") as never,
          branch: "autopilot/issue-7-candidate-2",
          prNumber: pulls.two === null ? undefined : 202,
          // The task's totals: candidate 2 spent $0.07 and 1,900 tokens on top of candidate 1's $0.05 and 1,500.
          costUsd: 0.12,
          tokens: { input: 2500, output: 900 },
          ...twoResult,
        }),
      ],
    }),
    state: afterOne.state as DashboardState,
  };
}
