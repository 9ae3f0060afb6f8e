/**
 * Which repositories of one installation a tick reconciles. Webhooks reconcile a repository whenever something
 * happens in it; the tick is for what happens with time, so it spends the installation's rate limit only where
 * time matters, and never all of it:
 *
 * 1. Active repositories (repo-activity.ts), and idle ones whose `wakeAtMs` has come (a step only time brings,
 *    such as the stale-branch sweep), least recently reconciled first: a repository a webhook just
 *    reconciled waits behind the others, and one left out for the budget is first the next tick, so none
 *    starves.
 * 2. Repositories never reconciled in this process (just installed, or after a restart), to learn their
 *    activity: at most `unknownPerTick`, least recently tried first.
 * 3. The safety sweep of idle ones (idle-sweep.ts): each at most once per `idleSweepMs`, at a moment of its own,
 *    at most `idlePerTick`, the longest unswept first.
 *
 * All within the budget GitHub's headers report per resource (REST and GraphQL apart): what is left above a
 * reserve of `reserveFraction` of the limit, which stays for webhooks, divided by the estimated cost of a
 * reconcile. With ticks `tickMs` apart the share is paced over the time to the window's reset, so the first
 * tick of an hour cannot take what the rest of the hour's ticks need (yet never less than one reconcile while
 * the budget above the reserve pays for it). A window that has reset, or none reported yet, does not bind.
 */
import { sweepDue } from "./idle-sweep.js";

export type ActivityKind = "active" | "idle" | "unknown";

export interface RepoStanding {
  /** `owner/name`, lower case. */
  key: string;
  /** What the last reconcile found; unknown: this controller has not reconciled it to the end yet. */
  activity: ActivityKind;
  /** When it was last reconciled (a webhook's, a tick's, a failed one's: each spent requests); epoch ms. */
  lastReconciledAt: number | null;
  /** Idle, but a step only time brings falls due then (epoch ms): from that moment it is taken as active. */
  wakeAtMs?: number;
}

/** One rate-limit resource as GitHub's latest answer reported it, with what one reconcile costs of it. */
export interface ResourceRateLimit {
  /** `core`, `graphql` (`x-ratelimit-resource`). */
  resource: string;
  limit: number;
  remaining: number;
  /** When the window resets (epoch ms). */
  resetAt: number;
  /** The estimated cost of one reconcile in this resource (requests, or GraphQL points). */
  cost: number;
}

export interface TickPolicy {
  /** Part of each resource's limit kept for webhooks (0.2: a fifth). */
  reserveFraction: number;
  /** How often an idle repository is reconciled at most by the safety sweep. */
  idleSweepMs: number;
  /** Most idle repositories swept per tick. */
  idlePerTick: number;
  /** Most never-reconciled repositories reconciled per tick. */
  unknownPerTick: number;
}

export const DEFAULT_TICK_POLICY: TickPolicy = {
  reserveFraction: 0.2,
  idleSweepMs: 6 * 3_600_000,
  idlePerTick: 50,
  unknownPerTick: 50,
};

interface TickInput {
  repos: readonly RepoStanding[];
  nowMs: number;
  /** Milliseconds to the next tick; 0 when none is planned (the budget is then not paced). */
  tickMs: number;
  rateLimits: readonly ResourceRateLimit[];
  policy: TickPolicy;
}

interface TickChoice {
  /** The repositories to reconcile, in order. */
  reconcile: string[];
  /** How many reconciles the budget allowed this tick (Infinity: none binds). */
  allowed: number;
  /** Repositories that were due but left for a later tick, by kind (the budget, or the per-tick bounds). */
  deferred: Record<ActivityKind, number>;
}

/** How many reconciles the rate limits allow now: the least over the resources that bind. */
export function reconcilesAllowed(
  rateLimits: readonly ResourceRateLimit[],
  nowMs: number,
  tickMs: number,
  reserveFraction: number,
): number {
  let allowed = Number.POSITIVE_INFINITY;
  for (const b of rateLimits) {
    const untilReset = b.resetAt - nowMs;
    if (untilReset <= 0) continue;
    const usable = b.remaining - Math.ceil(b.limit * reserveFraction);
    const cost = Math.max(1, b.cost);
    const share = tickMs > 0 ? usable * Math.min(1, tickMs / untilReset) : usable;
    // A share below one reconcile would stay below it (it is worked out afresh each tick from what is left, and
    // nothing spent means nothing gained): one reconcile a tick while what is above the reserve pays for it.
    const n = Math.max(Math.floor(share / cost), usable >= cost ? 1 : 0);
    allowed = Math.min(allowed, n);
  }
  return allowed;
}

/** Least recently reconciled first (never first of all), then by name, so the order is total. */
function leastRecent(a: RepoStanding, b: RepoStanding): number {
  const at = a.lastReconciledAt ?? Number.NEGATIVE_INFINITY;
  const bt = b.lastReconciledAt ?? Number.NEGATIVE_INFINITY;
  if (at !== bt) return at < bt ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function chooseTickRepos(input: TickInput): TickChoice {
  const { policy, nowMs } = input;
  const allowed = reconcilesAllowed(input.rateLimits, nowMs, input.tickMs, policy.reserveFraction);
  const of = (kind: ActivityKind) => input.repos.filter((r) => r.activity === kind).sort(leastRecent);
  const woken = (r: RepoStanding) => r.wakeAtMs !== undefined && r.wakeAtMs <= nowMs;
  const active = input.repos
    .filter((r) => r.activity === "active" || (r.activity === "idle" && woken(r)))
    .sort(leastRecent);
  const unknown = of("unknown");
  const idle = of("idle").filter(
    (r) => !woken(r) && sweepDue(r.key, r.lastReconciledAt, nowMs, Math.max(1, policy.idleSweepMs)),
  );
  const reconcile: string[] = [];
  const deferred: Record<ActivityKind, number> = { active: 0, unknown: 0, idle: 0 };
  const take = (list: RepoStanding[], kind: ActivityKind, bound: number) => {
    let taken = 0;
    for (const repo of list) {
      if (taken < bound && reconcile.length < allowed) {
        reconcile.push(repo.key);
        taken++;
      } else deferred[kind]++;
    }
  };
  take(active, "active", Number.POSITIVE_INFINITY);
  take(unknown, "unknown", policy.unknownPerTick);
  take(idle, "idle", policy.idlePerTick);
  return { reconcile, allowed, deferred };
}
