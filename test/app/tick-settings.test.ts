/**
 * The hosted controller's pieces around its tick choice: the environment `autopilot serve` reads it from, the
 * events that count a repository active, and each installation's rate limit as GitHub's answers report it.
 */
import { describe, expect, it } from "vitest";
import { activityEvent } from "../../src/app/hosted/activity-events.js";
import {
  DEFAULT_RECONCILE_COST,
  InstallationRateLimits,
  reconcileCost,
} from "../../src/app/hosted/installation-rate-limits.js";
import { RepoActivityBook } from "../../src/app/hosted/activity-book.js";
import { tickPolicyFrom } from "../../src/app/hosted/serve.js";

describe("tickPolicyFrom", () => {
  it("reads the variables that are set and leaves the rest to the defaults", () => {
    expect(tickPolicyFrom({})).toEqual({});
    expect(
      tickPolicyFrom({
        AUTOPILOT_IDLE_SWEEP_HOURS: "12",
        AUTOPILOT_TICK_IDLE_REPOS: "10",
        AUTOPILOT_TICK_NEW_REPOS: "0",
        AUTOPILOT_RATE_RESERVE_PERCENT: "35",
      }),
    ).toEqual({ idleSweepMs: 12 * 3_600_000, idlePerTick: 10, unknownPerTick: 0, reserveFraction: 0.35 });
  });

  it("refuses a value out of range instead of guessing", () => {
    expect(() => tickPolicyFrom({ AUTOPILOT_RATE_RESERVE_PERCENT: "150" })).toThrow(
      /AUTOPILOT_RATE_RESERVE_PERCENT/,
    );
    expect(() => tickPolicyFrom({ AUTOPILOT_IDLE_SWEEP_HOURS: "soon" })).toThrow(
      /AUTOPILOT_IDLE_SWEEP_HOURS/,
    );
  });
});

describe("activityEvent", () => {
  it("counts task labels, issue changes, commands, pull requests and checks; not chatter", () => {
    expect(activityEvent("issues", { action: "labeled" })).toBe("issues labeled event");
    expect(activityEvent("issues", { action: "assigned" })).toBeNull();
    expect(activityEvent("issue_comment", { action: "created", comment: { body: "/autopilot start" } })).toBe(
      "an /autopilot command",
    );
    expect(
      activityEvent("issue_comment", { action: "created", comment: { body: "thanks! /autopilot" } }),
    ).toBeNull();
    expect(activityEvent("pull_request_review", { action: "submitted" })).toBe("pull_request_review event");
    expect(activityEvent("workflow_run", { action: "completed" })).toBe("workflow_run event");
    expect(activityEvent("push", {})).toBeNull();
  });
});

describe("RepoActivityBook", () => {
  it("keeps the last verdict when a reconcile says none, and counts the reconcile", () => {
    const book = new RepoActivityBook();
    expect(book.standing("acme/app")).toEqual({
      key: "acme/app",
      activity: "unknown",
      lastReconciledAt: null,
    });
    book.reconciled("acme/app", 1000, { kind: "idle" });
    book.markActive("acme/app");
    expect(book.standing("acme/app")).toEqual({
      key: "acme/app",
      activity: "active",
      lastReconciledAt: 1000,
    });
    book.reconciled("acme/app", 2000, null);
    expect(book.standing("acme/app")).toMatchObject({ activity: "active", lastReconciledAt: 2000 });
    book.retain(new Set());
    expect(book.standing("acme/app").activity).toBe("unknown");
  });
});

describe("InstallationRateLimits", () => {
  it("keeps the lowest count of a window and the newest window, per resource, with the mean cost", () => {
    const limits = new InstallationRateLimits();
    const reading = (remaining: number, resetAt = 5000) => ({
      resource: "core",
      limit: 5000,
      remaining,
      resetAt,
    });
    limits.note(42, reading(300));
    limits.note(42, reading(310)); // an earlier answer arriving late
    expect(limits.rateLimits(42)).toEqual([{ ...reading(300), cost: DEFAULT_RECONCILE_COST }]);
    limits.note(42, reading(4990, 9000));
    limits.note(42, reading(100, 5000)); // the old window
    limits.noteCost(42, { core: 2 });
    limits.noteCost(42, { core: 4 });
    expect(limits.rateLimits(42)).toEqual([{ ...reading(4990, 9000), cost: 3 }]);
    expect(limits.rateLimits(7)).toEqual([]);
  });

  it("reads a reconcile's cost from its result: REST requests apart from GraphQL points", () => {
    const result = {
      requests: { "POST /graphql": 2, "GET /repos/{owner}/{repo}/actions/runs": 1 },
      graphql: { points: 3 },
    };
    expect(reconcileCost(result)).toEqual({ core: 1, graphql: 3 });
    expect(reconcileCost(undefined)).toBeNull();
  });
});
