import { describe, expect, it } from "vitest";
import { runMetrics, runMetricsMarkdown } from "../../../src/core/session/run-metrics.js";
import { computeStatistics } from "../../../src/core/session/stats.js";

const NOW = new Date("2026-11-27T12:00:00Z");

describe("a controller run's figures", () => {
  const statistics = computeStatistics(
    [
      {
        issue: 1,
        status: "done",
        iterations: 3,
        merged: true,
        tokens: { input: 1000, output: 200 },
        costUsd: 0.5,
      },
      {
        issue: 2,
        status: "done",
        iterations: 1,
        merged: true,
        tokens: { input: 500, output: 100 },
        costUsd: 0.25,
      },
      { issue: 3, status: "in-progress", iterations: 2 },
      { issue: 4, status: "ready" },
      { issue: 5, status: "blocked" },
    ],
    NOW,
  );
  const metrics = runMetrics({
    repository: "acme/shop",
    now: NOW,
    event: "schedule",
    statistics,
    reconcileSeconds: [1.23456, 0.5],
    requests: {
      "POST /graphql": 3,
      "GET /repos/{owner}/{repo}/actions/runs": 2,
      "POST /repos/{owner}/{repo}/issues/{issue_number}/labels": 1,
    },
    rates: [
      { resource: "graphql", limit: 5000, remaining: 4990, resetAt: Date.parse("2026-11-27T12:30:00Z") },
      { resource: "core", limit: 5000, remaining: 4700, resetAt: Date.parse("2026-11-27T12:40:00Z") },
    ],
  });

  it("are the dashboard's statistics, the reconciles, the requests by API and the rate-limit headroom", () => {
    expect(metrics.session).toEqual({
      tasks: {
        ready: 1,
        "in-progress": 1,
        review: 0,
        blocked: 1,
        "needs-human": 0,
        timeout: 0,
        failed: 0,
        done: 2,
        skipped: 0,
      },
      iterations: 6,
      tokens: { input: 1500, output: 300 },
      costUsd: 0.75,
      merges: 2,
    });
    expect(metrics.reconciles).toEqual({ count: 2, seconds: [1.235, 0.5] });
    expect(metrics.requests).toEqual({ rest: 3, graphql: 3 });
    expect(metrics.rateLimits.map((r) => `${r.resource} ${r.remaining}/${r.limit} ${r.resetAt}`)).toEqual([
      "core 4700/5000 2026-11-27T12:40:00.000Z",
      "graphql 4990/5000 2026-11-27T12:30:00.000Z",
    ]);
    // The JSON survives a round trip unchanged (it is what the artifact holds).
    expect(JSON.parse(JSON.stringify(metrics))).toEqual(metrics);
  });

  it("show in the job summary as one table, statuses with no task left out", () => {
    const text = runMetricsMarkdown(metrics);
    expect(text).toMatch(/^### Autopilot controller: acme\/shop\n/);
    expect(text).toContain("| Tasks | ready 1, in-progress 1, blocked 1, done 2 |");
    expect(text).toContain("| Cost | $0.75 |");
    expect(text).toContain("| Reconciles | 2 (1.7 s) |");
    expect(text).toContain("| GitHub requests | 3 REST, 3 GraphQL |");
    expect(text).toContain("| Rate limit (core) | 4700 of 5000 left, resets 2026-11-27T12:40:00.000Z |");
  });

  it("say so when no reconcile read the session", () => {
    const none = runMetrics({
      repository: "acme/shop",
      now: NOW,
      event: "issues",
      statistics: null,
      reconcileSeconds: [],
      requests: {},
      rates: [],
    });
    expect(none.session).toBeNull();
    expect(runMetricsMarkdown(none)).toContain("| Tasks | no reconcile read the session |");
  });
});
