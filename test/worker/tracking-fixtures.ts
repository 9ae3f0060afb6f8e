/** What the worker's fake GitHub holds for the loop's tests: an earlier run's result marker, a dashboard. */
import { emptyState, renderStateBlock } from "../../src/core/dashboard/index.js";
import { renderWorkerResultMarker, type WorkerResult } from "../../src/core/tasks/worker-result.js";

export function marker(overrides: Partial<WorkerResult>): string {
  const result: WorkerResult = {
    version: 1,
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-other",
    status: "running",
    iterations: 1,
    maxIterations: 25,
    commits: 1,
    branch: "autopilot/issue-7",
    tokens: { input: 1000, output: 100 },
    costUsd: 0.5,
    humanGate: { fired: false, rules: [] },
    startedAt: "2026-11-22T00:50:00.000Z",
    updatedAt: "2026-11-22T00:59:00.000Z",
    ...overrides,
  };
  return `### progress\n\n${renderWorkerResultMarker(result)}`;
}

export function trackingBody(status: string): string {
  const state = emptyState(new Date("2026-11-22T00:00:00Z"));
  state.session.status = status as typeof state.session.status;
  return `# Autopilot dashboard\n\n${renderStateBlock(state)}`;
}
