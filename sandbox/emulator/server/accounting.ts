/**
 * Request accounting (every API request by endpoint template, method, token kind and whether the rate limit
 * charged it) and GitHub's primary
 * rate limits per token, with the `x-ratelimit-*` headers GitHub sends.
 */
import type { TokenKind } from "../store.js";

interface RequestRecord {
  /** `GET /repos/{owner}/{repo}/issues/{issue_number}` (the OpenAPI path), or `POST /graphql`. */
  endpoint: string;
  method: string;
  /** The concrete path requested. */
  path: string;
  tokenKind: TokenKind | "none";
  login: string | null;
  status: number;
  /**
   * Whether the primary rate limit counted it: not a 304 Not Modified, not `GET /rate_limit`, not one refused
   * because the limit was spent (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
   */
  charged: boolean;
  at: Date;
  /** GraphQL only: the points the request was charged (rateLimit.cost). */
  points?: number;
  /** The repository it concerns, `owner/name` lowercased: a REST path's, or a GraphQL query's owner and name. */
  repo?: string;
  /** The installation whose token made it (its rate limit paid). */
  installationId?: number;
}

export interface ValidationFailure {
  kind: "rest" | "graphql";
  method: string;
  path: string;
  /** Matched endpoint template, or null for an unknown endpoint. */
  endpoint: string | null;
  message: string;
  /** The validator's raw errors. */
  errors: unknown[];
  at: Date;
}

interface RequestSummary {
  total: number;
  /** Requests the rate limit counted; `total - charged` cost nothing (304s, the rate-limit endpoint). */
  charged: number;
  byEndpoint: Record<string, number>;
  /** Charged requests only, by endpoint. */
  chargedByEndpoint: Record<string, number>;
  byTokenKind: Record<string, number>;
  byMethod: Record<string, number>;
  byStatus: Record<string, number>;
}

export class RequestAccounting {
  private list: RequestRecord[] = [];

  record(entry: RequestRecord): void {
    this.list.push(entry);
  }

  /** Every request since the last reset, oldest first. */
  get records(): readonly RequestRecord[] {
    return this.list;
  }

  get total(): number {
    return this.list.length;
  }

  /** Counts by endpoint template, token kind, method and status. */
  summary(filter?: (record: RequestRecord) => boolean): RequestSummary {
    const summary: RequestSummary = {
      total: 0,
      charged: 0,
      byEndpoint: {},
      chargedByEndpoint: {},
      byTokenKind: {},
      byMethod: {},
      byStatus: {},
    };
    for (const r of this.list) {
      if (filter && !filter(r)) continue;
      summary.total += 1;
      summary.byEndpoint[r.endpoint] = (summary.byEndpoint[r.endpoint] ?? 0) + 1;
      if (r.charged) {
        summary.charged += 1;
        summary.chargedByEndpoint[r.endpoint] = (summary.chargedByEndpoint[r.endpoint] ?? 0) + 1;
      }
      summary.byTokenKind[r.tokenKind] = (summary.byTokenKind[r.tokenKind] ?? 0) + 1;
      summary.byMethod[r.method] = (summary.byMethod[r.method] ?? 0) + 1;
      summary.byStatus[String(r.status)] = (summary.byStatus[String(r.status)] ?? 0) + 1;
    }
    return summary;
  }

  /** How many requests match (e.g. `count(r => r.endpoint === "POST /graphql")`). */
  count(filter: (record: RequestRecord) => boolean): number {
    return this.list.filter(filter).length;
  }

  reset(): void {
    this.list = [];
  }
}

export type RateResource = "core" | "graphql";

export interface RateState {
  limit: number;
  remaining: number;
  used: number;
  /** Epoch seconds when the window resets. */
  reset: number;
  resource: RateResource;
}

interface Bucket {
  limit: number;
  used: number;
  resetAt: number; // epoch ms
}

/** Hourly windows per token bucket and resource, as GitHub counts them. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => Date) {}

  private bucket(key: string, resource: RateResource, limit: number): Bucket {
    const id = `${key}|${resource}`;
    const nowMs = this.now().getTime();
    let bucket = this.buckets.get(id);
    if (!bucket || bucket.resetAt <= nowMs) {
      bucket = { limit, used: 0, resetAt: nowMs + 3600_000 };
      this.buckets.set(id, bucket);
    }
    bucket.limit = limit;
    return bucket;
  }

  private view(bucket: Bucket, resource: RateResource): RateState {
    return {
      limit: bucket.limit,
      used: bucket.used,
      remaining: Math.max(0, bucket.limit - bucket.used),
      reset: Math.ceil(bucket.resetAt / 1000),
      resource,
    };
  }

  /** Charges `cost`; `exceeded` when the window was already spent (nothing charged then). */
  consume(key: string, resource: RateResource, limit: number, cost = 1): RateState & { exceeded: boolean } {
    const bucket = this.bucket(key, resource, limit);
    if (bucket.used + cost > bucket.limit) return { ...this.view(bucket, resource), exceeded: true };
    bucket.used += cost;
    return { ...this.view(bucket, resource), exceeded: false };
  }

  /** Gives back a charge (GitHub does not count 304 Not Modified answers). */
  refund(key: string, resource: RateResource, cost = 1): void {
    const bucket = this.buckets.get(`${key}|${resource}`);
    if (bucket) bucket.used = Math.max(0, bucket.used - cost);
  }

  peek(key: string, resource: RateResource, limit: number): RateState {
    return this.view(this.bucket(key, resource, limit), resource);
  }
}

/** The `x-ratelimit-*` headers of a rate state. */
export function rateLimitHeaders(state: RateState): Record<string, string> {
  return {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-used": String(state.used),
    "x-ratelimit-reset": String(state.reset),
    "x-ratelimit-resource": state.resource,
  };
}

/** Throws an Error listing every validation failure (for tests: the product made only valid calls). */
export function assertNoValidationFailures(failures: readonly ValidationFailure[]): void {
  if (failures.length === 0) return;
  const lines = failures.map(
    (f) => `- [${f.kind}] ${f.method} ${f.path}${f.endpoint ? ` (${f.endpoint})` : ""}: ${f.message}`,
  );
  throw new Error(
    `The sandbox rejected ${failures.length} request(s) against GitHub's published API:\n${lines.join("\n")}`,
  );
}
