import { describe, expect, it } from "vitest";
import { latestSweepMoment, sweepDue } from "../../../src/core/scheduling/idle-sweep.js";
import {
  chooseTickRepos,
  DEFAULT_TICK_POLICY,
  type RepoStanding,
  type ResourceRateLimit,
  reconcilesAllowed,
  type TickPolicy,
} from "../../../src/core/scheduling/tick-choice.js";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-27T12:00:00Z");
const policy: TickPolicy = { ...DEFAULT_TICK_POLICY };

function repos(kind: RepoStanding["activity"], n: number, lastReconciledAt: number | null = null) {
  return Array.from({ length: n }, (_, i) => ({
    key: `org/${kind}-${String(i).padStart(4, "0")}`,
    activity: kind,
    lastReconciledAt,
  }));
}

/** A core budget with `remaining` of `limit` left, resetting in half an hour, a reconcile costing `cost`. */
function core(remaining: number, cost = 1, limit = 5000): ResourceRateLimit {
  return { resource: "core", limit, remaining, resetAt: NOW + HOUR / 2, cost };
}

describe("chooseTickRepos", () => {
  it("takes up an idle repository once the moment a step only time brings has come, not before", () => {
    const sleeping = { key: "org/sweep-later", activity: "idle" as const, lastReconciledAt: NOW - 1000 };
    const choose = (wakeAtMs: number) =>
      chooseTickRepos({ repos: [{ ...sleeping, wakeAtMs }], nowMs: NOW, tickMs: 0, rateLimits: [], policy });
    expect(choose(NOW + 60_000).reconcile).toEqual([]);
    expect(choose(NOW).reconcile).toEqual(["org/sweep-later"]);
  });

  it("reconciles every active repository and no idle one that is not due", () => {
    const active = repos("active", 3, NOW - 60_000);
    const idle = repos("idle", 5, NOW - 1000);
    const choice = chooseTickRepos({
      repos: [...idle, ...active],
      nowMs: NOW,
      tickMs: 0,
      rateLimits: [],
      policy,
    });
    expect(choice.reconcile.sort()).toEqual(active.map((r) => r.key).sort());
    expect(choice.deferred).toEqual({ active: 0, unknown: 0, idle: 0 });
    expect(choice.allowed).toBe(Number.POSITIVE_INFINITY);
  });

  it("takes active repositories least recently reconciled first, never-reconciled before all", () => {
    const standings: RepoStanding[] = [
      { key: "org/c", activity: "active", lastReconciledAt: NOW - 1000 },
      { key: "org/a", activity: "active", lastReconciledAt: NOW - 5000 },
      { key: "org/b", activity: "active", lastReconciledAt: null },
    ];
    const choice = chooseTickRepos({
      repos: standings,
      nowMs: NOW,
      tickMs: 0,
      rateLimits: [core(1003)],
      policy,
    });
    // 1003 left, 1000 reserved: three reconciles of cost 1.
    expect(choice.reconcile).toEqual(["org/b", "org/a", "org/c"]);
  });

  it("no active repository starves: with room for 3 of 10 per tick, each is reconciled within 4 ticks", () => {
    const standings = repos("active", 10, NOW - HOUR);
    // A webhook reconciled the busiest one a moment ago: it goes behind the others.
    standings[0]!.lastReconciledAt = NOW - 1000;
    const waited = new Map(standings.map((r) => [r.key, 0]));
    let now = NOW;
    for (let tick = 0; tick < 12; tick++) {
      const budget = { ...core(1000 + 3 * 7, 7), resetAt: now + HOUR / 2 };
      const choice = chooseTickRepos({
        repos: standings,
        nowMs: now,
        tickMs: 0,
        rateLimits: [budget],
        policy,
      });
      expect(choice.reconcile).toHaveLength(3);
      expect(choice.deferred.active).toBe(7);
      for (const r of standings) {
        if (choice.reconcile.includes(r.key)) {
          r.lastReconciledAt = now;
          waited.set(r.key, 0);
        } else waited.set(r.key, waited.get(r.key)! + 1);
        expect(waited.get(r.key), r.key).toBeLessThanOrEqual(3);
      }
      now += 300_000;
    }
    expect(standings.every((r) => r.lastReconciledAt! > NOW)).toBe(true);
  });

  it("spends no more than the remaining budget above the reserve, in every resource", () => {
    const active = repos("active", 40, NOW - HOUR);
    // core: 1100 left, 1000 reserved, 10 a reconcile → 10; graphql: 1020 left, 1000 reserved, 4 a reconcile → 5.
    const rateLimits = [core(1100, 10), { ...core(1020, 4), resource: "graphql" }];
    const choice = chooseTickRepos({ repos: active, nowMs: NOW, tickMs: 0, rateLimits, policy });
    expect(choice.allowed).toBe(5);
    expect(choice.reconcile).toHaveLength(5);
    expect(choice.deferred.active).toBe(35);
  });

  it("reconciles nothing once the remaining budget is within the reserve", () => {
    const standings = [...repos("active", 3, NOW - HOUR), ...repos("unknown", 3), ...repos("idle", 3, null)];
    const choice = chooseTickRepos({
      repos: standings,
      nowMs: NOW,
      tickMs: 0,
      rateLimits: [core(1000)],
      policy,
    });
    expect(choice.reconcile).toEqual([]);
    expect(choice.deferred).toEqual({ active: 3, unknown: 3, idle: 3 });
  });

  it("keeps the reserve it is told to", () => {
    const active = repos("active", 10, NOW - HOUR);
    const rateLimits = [core(500, 1, 5000)];
    expect(
      chooseTickRepos({
        repos: active,
        nowMs: NOW,
        tickMs: 0,
        rateLimits,
        policy: { ...policy, reserveFraction: 0 },
      }).reconcile,
    ).toHaveLength(10);
    expect(
      chooseTickRepos({
        repos: active,
        nowMs: NOW,
        tickMs: 0,
        rateLimits,
        policy: { ...policy, reserveFraction: 0.1 },
      }).reconcile,
    ).toHaveLength(0);
  });

  it("a window that has reset does not bind", () => {
    const active = repos("active", 4, NOW - HOUR);
    const spent = { ...core(0), resetAt: NOW - 1 };
    expect(
      chooseTickRepos({ repos: active, nowMs: NOW, tickMs: 0, rateLimits: [spent], policy }).reconcile,
    ).toHaveLength(4);
  });

  it("paces the share over the time to the reset when ticks are periodic", () => {
    // 4000 usable above the reserve, 30 minutes to the reset, a tick every 5 minutes: a sixth, 666 requests.
    const rateLimits = [core(5000, 10)];
    expect(reconcilesAllowed(rateLimits, NOW, 300_000, 0.2)).toBe(66);
    expect(reconcilesAllowed(rateLimits, NOW, 0, 0.2)).toBe(400);
    // The last tick before the reset may take it all.
    expect(reconcilesAllowed(rateLimits, NOW + HOUR / 2 - 60_000, 300_000, 0.2)).toBe(400);
  });

  it("never paces a tick down to nothing while the budget above the reserve pays for a reconcile", () => {
    // Ticks a second apart, half an hour to the reset: the share (4000 / 1800 = 2 requests) is below one
    // reconcile's 10, yet each tick reconciles one, least recently reconciled first, so all take turns.
    const standings = repos("active", 3, NOW - HOUR);
    let now = NOW;
    const order: string[] = [];
    for (let tick = 0; tick < 6; tick++) {
      const budget = { ...core(5000, 10), resetAt: NOW + HOUR / 2 };
      const choice = chooseTickRepos({
        repos: standings,
        nowMs: now,
        tickMs: 1000,
        rateLimits: [budget],
        policy,
      });
      expect(choice.reconcile).toHaveLength(1);
      order.push(choice.reconcile[0]!);
      standings.find((r) => r.key === choice.reconcile[0])!.lastReconciledAt = now;
      now += 1000;
    }
    expect(order).toEqual([...standings.map((r) => r.key), ...standings.map((r) => r.key)]);
    // At the reserve, not even one.
    expect(reconcilesAllowed([core(1009, 10)], NOW, 1000, 0.2)).toBe(0);
  });

  it("learns the activity of never-reconciled repositories at most unknownPerTick at a time, after the active ones", () => {
    const active = repos("active", 2, NOW - HOUR);
    const unknown = repos("unknown", 30);
    const choice = chooseTickRepos({
      repos: [...unknown, ...active],
      nowMs: NOW,
      tickMs: 0,
      rateLimits: [],
      policy: { ...policy, unknownPerTick: 5 },
    });
    expect(choice.reconcile.slice(0, 2)).toEqual(active.map((r) => r.key));
    expect(choice.reconcile.slice(2)).toEqual(unknown.slice(0, 5).map((r) => r.key));
    expect(choice.deferred.unknown).toBe(25);
  });

  it("sweeps idle repositories at most idlePerTick at a time, the longest unswept first", () => {
    const idle = repos("idle", 20, null).map((r, i) => ({
      ...r,
      lastReconciledAt: NOW - 7 * HOUR - i * 1000,
    }));
    const choice = chooseTickRepos({
      repos: idle,
      nowMs: NOW,
      tickMs: 0,
      rateLimits: [],
      policy: { ...policy, idlePerTick: 4 },
    });
    expect(choice.reconcile).toEqual(
      idle
        .slice(-4)
        .reverse()
        .map((r) => r.key),
    );
    expect(choice.deferred.idle).toBe(16);
  });

  it("sweeps each idle repository once per interval, spread over it", () => {
    const idle = repos("idle", 600, NOW - 1);
    const sweepMs = 6 * HOUR;
    const tickMs = 5 * 60_000;
    const perTick: number[] = [];
    const swept = new Map<string, number>();
    for (let now = NOW; now <= NOW + sweepMs; now += tickMs) {
      const choice = chooseTickRepos({
        repos: idle,
        nowMs: now,
        tickMs,
        rateLimits: [],
        policy: { ...policy, idleSweepMs: sweepMs, idlePerTick: 50 },
      });
      perTick.push(choice.reconcile.length);
      for (const key of choice.reconcile) {
        swept.set(key, (swept.get(key) ?? 0) + 1);
        idle.find((r) => r.key === key)!.lastReconciledAt = now;
      }
    }
    // Every one once in the interval, none twice; 600 over 72 ticks is about 8 a tick, never a crowd.
    expect(swept.size).toBe(600);
    expect([...swept.values()].every((n) => n === 1)).toBe(true);
    expect(Math.max(...perTick)).toBeLessThanOrEqual(25);
  });
});

describe("the idle sweep's moments", () => {
  it("are stable per repository and at most one interval apart", () => {
    const moment = latestSweepMoment("org/repo", NOW, HOUR);
    expect(latestSweepMoment("org/repo", NOW, HOUR)).toBe(moment);
    expect(moment).toBeLessThanOrEqual(NOW);
    expect(NOW - moment).toBeLessThan(HOUR);
    expect(latestSweepMoment("org/repo", NOW + HOUR, HOUR)).toBe(moment + HOUR);
  });

  it("is due only when its moment came after the last reconcile", () => {
    const moment = latestSweepMoment("org/repo", NOW, HOUR);
    expect(sweepDue("org/repo", moment - 1, NOW, HOUR)).toBe(true);
    expect(sweepDue("org/repo", moment, NOW, HOUR)).toBe(false);
    expect(sweepDue("org/repo", null, NOW, HOUR)).toBe(true);
  });
});
