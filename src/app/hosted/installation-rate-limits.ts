/**
 * Each installation's rate limits as the hosted controller last saw it: GitHub's latest reading per resource
 * (src/github/transport/rate-headers.ts) and what a reconcile in it has cost of each lately, which ticks weigh
 * against what is left (src/core/scheduling/tick-choice.ts).
 */
import type { ResourceRateLimit } from "../../core/scheduling/tick-choice.js";
import type { RateReading } from "../../github/transport/rate-headers.js";
import { totalOf } from "../../github/transport/counter.js";
import type { ReconcileResult } from "../reconcile-repo.js";

/** Reconcile costs kept per installation and resource: the estimate is their mean. */
const COST_SAMPLES = 20;
/** The estimate before any reconcile reported its cost: a snapshot and a few writes. */
export const DEFAULT_RECONCILE_COST = 10;

interface Installation {
  readings: Map<string, RateReading>;
  costs: Map<string, number[]>;
}

export class InstallationRateLimits {
  private readonly installations = new Map<number, Installation>();

  private of(id: number): Installation {
    let installation = this.installations.get(id);
    if (!installation) {
      installation = { readings: new Map(), costs: new Map() };
      this.installations.set(id, installation);
    }
    return installation;
  }

  /**
   * GitHub's latest reading for the installation. Answers can arrive out of order: within one window the count
   * only falls, so the lowest wins; an older window's reading is ignored.
   */
  note(id: number, reading: RateReading): void {
    const readings = this.of(id).readings;
    const known = readings.get(reading.resource);
    if (known && reading.resetAt < known.resetAt) return;
    if (known && known.resetAt === reading.resetAt && known.remaining <= reading.remaining) return;
    readings.set(reading.resource, reading);
  }

  /** What one reconcile cost, per resource (`core` requests, `graphql` points). */
  noteCost(id: number, cost: Record<string, number>): void {
    const costs = this.of(id).costs;
    for (const [resource, n] of Object.entries(cost)) {
      const samples = costs.get(resource) ?? [];
      samples.push(n);
      if (samples.length > COST_SAMPLES) samples.shift();
      costs.set(resource, samples);
    }
  }

  /** The installation's budgets, each with the estimated cost of a reconcile in it. */
  rateLimits(id: number): ResourceRateLimit[] {
    const installation = this.installations.get(id);
    if (!installation) return [];
    return [...installation.readings.values()].map((reading) => {
      const samples = installation.costs.get(reading.resource);
      const cost = samples?.length
        ? samples.reduce((a, b) => a + b, 0) / samples.length
        : DEFAULT_RECONCILE_COST;
      return { ...reading, cost };
    });
  }
}

/**
 * What a reconcile cost per resource: its REST requests (`core`) and its GraphQL points (the queries'
 * `rateLimit.cost`, else one a query). Null for a result that does not say (a test's stand-in reconcile).
 */
export function reconcileCost(result: unknown): Record<string, number> | null {
  const r = result as Partial<ReconcileResult> | null | undefined;
  if (!r || typeof r !== "object" || !r.requests) return null;
  const queries = r.requests["POST /graphql"] ?? 0;
  return { core: totalOf(r.requests) - queries, graphql: r.graphql?.points ?? queries };
}
