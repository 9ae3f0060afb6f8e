/**
 * Request counting per endpoint, through an Octokit `request` hook (installed once per client), so a reconcile
 * can say how many requests it cost: GitHub's rate limit is the controller's budget, so every reconcile reports
 * what it spent (docs/CONTROLLER.md, "The exact API surface").
 */
import type { OctokitSurface, RequestOptionsSeen } from "./octokit-surface.js";

export type RequestCounts = Record<string, number>;

export class RequestCounter {
  private readonly counts = new Map<string, number>();

  add(endpoint: string): void {
    this.counts.set(endpoint, (this.counts.get(endpoint) ?? 0) + 1);
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  snapshot(): RequestCounts {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Counts since an earlier `snapshot()`. */
  since(earlier: RequestCounts): RequestCounts {
    const out: RequestCounts = {};
    for (const [endpoint, n] of this.counts) {
      const delta = n - (earlier[endpoint] ?? 0);
      if (delta > 0) out[endpoint] = delta;
    }
    return out;
  }
}

export function totalOf(counts: RequestCounts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** `GET /repos/{owner}/{repo}/issues`: the route template, never the expanded URL. */
function endpointOf(options: RequestOptionsSeen): string {
  const url = String(options.url ?? "").replace(/^https?:\/\/[^/]+/, "");
  return `${String(options.method ?? "GET").toUpperCase()} ${url.split("?")[0]}`;
}

const counters = new WeakMap<object, RequestCounter>();

/** The counter attached to a client, installing the hook on first use. */
export function countRequests(client: OctokitSurface): RequestCounter {
  let counter = counters.get(client);
  if (!counter) {
    const created = new RequestCounter();
    client.hook.before("request", (options) => {
      created.add(endpointOf(options));
    });
    counters.set(client, created);
    counter = created;
  }
  return counter;
}
