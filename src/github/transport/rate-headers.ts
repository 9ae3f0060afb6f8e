/**
 * The primary rate limit as GitHub reports it on every answer: `x-ratelimit-limit`, `x-ratelimit-remaining`,
 * `x-ratelimit-reset` (epoch seconds) and `x-ratelimit-resource` (`core` for REST, `graphql` for GraphQL, each a
 * budget of its own), per installation for an App's installation token
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#checking-the-status-of-your-rate-limit).
 * The hosted controller watches them on each installation's clients so its ticks stay within what is left
 * (src/core/scheduling/tick-choice.ts).
 */

export interface RateReading {
  resource: string;
  limit: number;
  remaining: number;
  /** When the window resets (epoch ms). */
  resetAt: number;
}

type Headers = Record<string, string | number | undefined>;

function numberOf(headers: Headers, name: string): number | null {
  const value = headers[name];
  if (value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** The reading in an answer's headers; null when it carries none (a 304 from a cache, a non-GitHub answer). */
export function readRateHeaders(headers: Headers | undefined): RateReading | null {
  if (!headers) return null;
  const limit = numberOf(headers, "x-ratelimit-limit");
  const remaining = numberOf(headers, "x-ratelimit-remaining");
  const reset = numberOf(headers, "x-ratelimit-reset");
  if (limit === null || remaining === null || reset === null) return null;
  const resource = headers["x-ratelimit-resource"];
  return {
    resource: typeof resource === "string" && resource ? resource : "core",
    limit,
    remaining,
    resetAt: reset * 1000,
  };
}

interface WrappableHook {
  wrap?: (
    name: "request",
    fn: (request: (options: object) => Promise<{ headers?: Headers }>, options: object) => Promise<unknown>,
  ) => void;
}

const watched = new WeakSet<object>();

/**
 * Hands every reading of this client's answers to `note` (a refusal's too: a 403 for a spent limit says so
 * in its headers). A client without `hook.wrap` (a test double) is left as it is; watching twice is a no-op.
 */
export function watchRateHeaders(client: { hook: object }, note: (reading: RateReading) => void): void {
  const hook = client.hook as WrappableHook;
  if (watched.has(client) || typeof hook.wrap !== "function") return;
  watched.add(client);
  hook.wrap("request", async (request, options) => {
    try {
      const response = await request(options);
      const reading = readRateHeaders(response.headers);
      if (reading) note(reading);
      return response;
    } catch (error) {
      const reading = readRateHeaders((error as { response?: { headers?: Headers } }).response?.headers);
      if (reading) note(reading);
      throw error;
    }
  });
}
