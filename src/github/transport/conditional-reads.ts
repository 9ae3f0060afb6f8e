/**
 * Conditional reads: every REST `GET` that answered with an `ETag` is asked again with `If-None-Match`, and
 * GitHub answers `304 Not Modified` without charging the rate limit when nothing changed ("Use conditional
 * requests if appropriate", https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate:
 * "Making a conditional request does not count against your primary rate limit if a 304 response is returned").
 * The repeated reads this saves are the controller's worker-runs listing on every reconcile (an idle tick then
 * costs its one GraphQL query) and the worker's re-reads of its task issue and of the tracking issue between
 * iterations.
 *
 * Installed as an Octokit `request` wrapper, so a 304 reaches the caller as the earlier 200 (same data) and no
 * caller changes. The cache is process-wide: Probot builds a fresh client per webhook, and the cache must
 * outlive it. Entries are keyed by the full request (API URL, route, parameters, accepted media type), so two
 * repositories or two GitHubs never share one; sharing between tokens is safe because GitHub answers 304 only
 * to a request it has authorized, for a representation equal to the one the ETag names.
 */
import { LRUCache } from "lru-cache";

/** The part of an Octokit `request` hook this needs: Probot's clients and `createOctokit()`'s both have it. */
interface HookableOctokit {
  hook: {
    wrap?: (
      name: "request",
      fn: (
        request: (options: Record<string, unknown>) => Promise<CachedResponse>,
        options: Record<string, unknown>,
      ) => Promise<CachedResponse>,
    ) => void;
  };
}

interface CachedResponse {
  status: number;
  url?: string;
  headers: Record<string, string | number | undefined>;
  data: unknown;
}

/** The cache's bounds: both hold, and past either the least recently used answers go first. */
interface ReadCacheBounds {
  /** Most answers kept. */
  entries: number;
  /** Most bytes kept, approximately: the length of each answer's JSON (a runs page of ~50 runs is ~100 kB). */
  bytes: number;
}

/**
 * An active repository keeps about four answers here (bench/serve-memory.ts), its worker runs listing, read on
 * every tick, among them: room for the 1,000 repositories whose memory is kept (src/github/repo-memories.ts).
 */
export const DEFAULT_READ_CACHE_BOUNDS: ReadCacheBounds = Object.freeze({
  entries: 4_000,
  bytes: 64 * 1024 * 1024,
});

/** The approximate size of an answer: its JSON, headers included (an answer too large for the bound is not kept). */
function sizeOf(response: CachedResponse): number {
  return Math.max(1, JSON.stringify(response.data ?? null).length + JSON.stringify(response.headers).length);
}

function lruOf(bounds: ReadCacheBounds): LRUCache<string, CachedResponse> {
  return new LRUCache<string, CachedResponse>({
    max: bounds.entries,
    maxSize: bounds.bytes,
    sizeCalculation: sizeOf,
  });
}

/**
 * The ETag and the 200 answer it named, per request, least recently used out first (lru-cache). Losing an
 * answer costs one charged read, never a wrong one: the next read is sent without `If-None-Match`.
 */
class ConditionalReadCache {
  private entries: LRUCache<string, CachedResponse>;
  /** Answers served from a free 304, and full answers, since creation (what the tests and logs read). */
  notModified = 0;
  fetched = 0;

  constructor(bounds: ReadCacheBounds = DEFAULT_READ_CACHE_BOUNDS) {
    this.entries = lruOf(bounds);
  }

  /** Changes the bounds, keeping the most recently used answers that fit. */
  bound(bounds: ReadCacheBounds): void {
    const previous = this.entries;
    this.entries = lruOf(bounds);
    // Least recently used first, so the order of use carries over.
    for (const key of previous.rkeys()) this.entries.set(key, previous.peek(key)!);
  }

  get(key: string): CachedResponse | undefined {
    return this.entries.get(key);
  }

  set(key: string, response: CachedResponse): void {
    this.entries.set(key, response);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.notModified = 0;
    this.fetched = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The approximate bytes held (see `sizeOf`). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }
}

const shared = new ConditionalReadCache();

/** The process-wide cache (the controller's clients and the worker's share it). */
export function conditionalReadCache(): ConditionalReadCache {
  return shared;
}

/** Keys that do not name what is read: how the request is sent, not which representation comes back. */
const NOT_PART_OF_KEY = new Set(["method", "headers", "request", "mediaType", "data"]);

/** The request's identity: method, API URL, route, every parameter (sorted), and the media type asked for. */
function requestKey(options: Record<string, unknown>): string {
  const params = Object.keys(options)
    .filter((k) => !NOT_PART_OF_KEY.has(k))
    .sort()
    .map((k) => [k, options[k]]);
  const headers = (options.headers ?? {}) as Record<string, unknown>;
  const media = options.mediaType ?? null;
  return JSON.stringify([
    String(options.method ?? "GET").toUpperCase(),
    params,
    headers.accept ?? null,
    media,
  ]);
}

function headerOf(headers: Record<string, string | number | undefined>, name: string): string | null {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return typeof value === "string" && value.length > 0 ? value : null;
}

function statusOfError(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "status" in error
    ? Number((error as { status: unknown }).status)
    : undefined;
}

const installed = new WeakSet<object>();

/**
 * Sends every REST `GET` of this client conditionally when an earlier answer carried an ETag. A client without
 * `hook.wrap` (a test double) is left as it is. Installing twice on one client is a no-op.
 */
export function sendReadsConditionally(client: { hook: object }, cache: ConditionalReadCache = shared): void {
  const { hook } = client as HookableOctokit;
  if (installed.has(client) || typeof hook.wrap !== "function") return;
  installed.add(client);
  hook.wrap("request", async (request, options) => {
    const method = String(options.method ?? "GET").toUpperCase();
    // GraphQL is a POST (never conditional); writes must always reach GitHub.
    if (method !== "GET") return request(options);
    const key = requestKey(options);
    const cached = cache.get(key);
    const etag = cached ? headerOf(cached.headers, "etag") : null;
    // In place: the hooks inside this one were bound to this same options object, not to what is passed on.
    if (etag) options.headers = { ...((options.headers ?? {}) as object), "if-none-match": etag };
    try {
      const response = await request(options);
      // A copy: the caller may change its answer's data, the cache's must stay what the ETag names.
      if (response.status === 200 && headerOf(response.headers, "etag"))
        cache.set(key, { ...response, data: structuredClone(response.data) });
      else cache.delete(key);
      cache.fetched++;
      return response;
    } catch (error) {
      // Octokit turns a 304 into an error; the answer is the one the ETag named, with this answer's headers
      // (the rate-limit state is the current one).
      if (cached && statusOfError(error) === 304) {
        cache.notModified++;
        const fresh = (error as { response?: { headers?: CachedResponse["headers"] } }).response?.headers;
        return {
          ...cached,
          data: structuredClone(cached.data),
          headers: { ...cached.headers, ...(fresh ?? {}) },
        };
      }
      throw error;
    }
  });
}
