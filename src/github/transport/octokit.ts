/**
 * The one way Autopilot builds a GitHub client outside Probot: @octokit/rest with the throttling and retry
 * plugins configured as Probot configures them. Every caller receives the client as a parameter.
 */
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import type { ThrottlingOptions } from "@octokit/plugin-throttling";
import { noteLimitWait } from "./limit-waits.js";

export const AutopilotOctokit = Octokit.plugin(throttling, retry);
export type AutopilotOctokit = InstanceType<typeof AutopilotOctokit>;

interface OctokitLog {
  debug: (message: string) => void;
  info: (message: string) => void;
  warn: (message: string) => void;
  error: (message: string) => void;
}

interface CreateOctokitOptions {
  /** The token; absent, requests go unauthenticated (reads of public repositories only). */
  auth?: string;
  /** REST base URL: https://api.github.com on GitHub, the sandbox's URL offline. */
  baseUrl?: string;
  userAgent?: string;
  /** A fetch to use instead of the global one (tests hand in a validating fetch). */
  fetch?: typeof globalThis.fetch;
  log?: OctokitLog;
  /** Throttling waits out primary and secondary rate limits; off in unit tests that script 403s. */
  throttle?: boolean;
  /** Retries 5xx and network errors with backoff; off in unit tests that script 5xx. */
  retry?: boolean;
  /** How many times a request refused by the primary rate limit is retried before giving up. */
  rateLimitRetries?: number;
  /** How many times a request refused by a secondary rate limit is retried before giving up. */
  secondaryLimitRetries?: number;
  /** The extra waits between secondary-limit retries (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * What a secondary rate limit does to a request: `wait` (the worker, default) retries it in the request, as
   * `rateLimitHandlers` describes; `pause` (the controller) retries it at most once and only after a short
   * `retry-after`, else hands the refusal to the gateway, which pauses that repository's writes.
   */
  secondaryLimit?: SecondaryLimitMode;
}

const silentLog: OctokitLog = { debug() {}, info() {}, warn() {}, error() {} };

type LimiterGroup = NonNullable<Extract<ThrottlingOptions, { onRateLimit: unknown }>["write"]>;

/**
 * A limiter group that runs every job at once. The throttling plugin only ever calls
 * `group.key(id).schedule(options, fn, ...args)` on its write and notification groups.
 */
const UNPACED = {
  key: () => ({
    schedule: (_options: unknown, fn: (...args: unknown[]) => unknown, ...args: unknown[]) =>
      Promise.resolve(fn(...args)),
  }),
} as unknown as LimiterGroup;

/** Whether a REST base URL points at this machine (the offline sandbox, or a test double). */
export function isLoopbackUrl(baseUrl: string | undefined): boolean {
  if (!baseUrl) return false;
  try {
    const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/**
 * Throttling options for a GitHub at `baseUrl`. GitHub asks integrations to space writes out, and the throttling
 * plugin does so process-wide: 1 s between writes and GraphQL queries, 3 s between writes that notify people
 * (comments, issues, pull requests). On the loopback (the offline sandbox) there is no secondary rate limit to
 * stay clear of, and the spacing only made every reconcile and every worker job seconds slower, so writes go
 * unpaced there. Rate-limit answers (403/429 with retry-after) are waited out either way.
 */
export function writePacing(baseUrl: string | undefined): {
  write?: LimiterGroup;
  notifications?: LimiterGroup;
} {
  return isLoopbackUrl(baseUrl) ? { write: UNPACED, notifications: UNPACED } : {};
}

/**
 * Answers the retry plugin must not repeat. Its own list (400, 401, 403, 404, 410, 422, 451) leaves out 405 and
 * 409, which GitHub gives for a decision, not a hiccup: a merge refused by branch protection, a merge queue or a
 * head that moved (https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request), a workflow run already
 * finished. Repeated, each such refusal went out four times (1, 4 and 9 s apart) and held the reconcile for
 * 14 s; Autopilot decides itself whether and when to ask again (src/core/reconcile/pulls/reviews.ts).
 */
export const DO_NOT_RETRY: readonly number[] = [400, 401, 403, 404, 405, 409, 410, 422, 451];

/** The retry plugin's options for every client Autopilot builds (this file's and the Probot app's). */
export function retryOptions(enabled: boolean): { enabled: boolean; doNotRetry: number[] } {
  return { enabled, doNotRetry: [...DO_NOT_RETRY] };
}

export function createOctokit(options: CreateOctokitOptions): AutopilotOctokit {
  const log = options.log ?? silentLog;
  const rateLimitRetries = options.rateLimitRetries ?? 2;
  return new AutopilotOctokit({
    ...(options.auth ? { auth: options.auth } : {}),
    baseUrl: options.baseUrl ?? "https://api.github.com",
    userAgent: options.userAgent ?? "autopilot",
    log,
    request: options.fetch ? { fetch: options.fetch } : {},
    retry: retryOptions(options.retry ?? true),
    throttle: {
      enabled: options.throttle ?? true,
      ...writePacing(options.baseUrl),
      ...rateLimitHandlers(log, rateLimitRetries, {
        baseUrl: options.baseUrl,
        ...(options.secondaryLimitRetries !== undefined
          ? { secondaryRetries: options.secondaryLimitRetries }
          : {}),
        ...(options.sleep ? { sleep: options.sleep } : {}),
        ...(options.secondaryLimit ? { mode: options.secondaryLimit } : {}),
      }),
    },
  });
}

/** Retries of a request refused by a secondary rate limit (each wait longer than the last). */
const SECONDARY_LIMIT_RETRIES = 6;
/** The longest single wait for a secondary rate limit, unless GitHub's `retry-after` asks for more. */
const SECONDARY_LIMIT_MAX_WAIT_SECONDS = 300;

/** The wait GitHub asks for when a secondary-limit answer carries no `retry-after`: at least a minute. */
export const SECONDARY_LIMIT_DEFAULT_WAIT_SECONDS = 60;
/**
 * The controller's one in-request retry of a secondary limit: only when GitHub asks for at most this many seconds;
 * a longer `retry-after` pauses the repository's writes instead (src/github/transport/circuit.ts `pauseWrites`).
 */
const CONTROLLER_IN_REQUEST_WAIT_SECONDS = 10;

type SecondaryLimitMode = "wait" | "pause";

/**
 * The wait before the next try after `strikes` refusals in a row (0 for the first): `retry-after` times 2^n,
 * at most SECONDARY_LIMIT_MAX_WAIT_SECONDS unless `retry-after` itself is longer.
 */
export function secondaryLimitWait(retryAfterSeconds: number, strikes: number): number {
  return Math.max(
    retryAfterSeconds,
    Math.min(retryAfterSeconds * 2 ** strikes, SECONDARY_LIMIT_MAX_WAIT_SECONDS),
  );
}

interface SecondaryLimitOptions {
  /** The GitHub the client talks to (waits are noted per host for the dashboard: `limit-waits.ts`). */
  baseUrl?: string | undefined;
  secondaryRetries?: number;
  /** Waits on top of the throttling plugin's own (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** `wait` (default: the worker) or `pause` (the controller): see `createOctokit`'s `secondaryLimit`. */
  mode?: SecondaryLimitMode;
}

/**
 * What the throttling plugin does on a rate-limit answer: wait and retry, for the primary AND the secondary limit
 * (Probot's own handler gives up on a secondary limit at once, which turned a short burst limit into failed
 * reconciles and an open circuit breaker).
 *
 * A primary limit is retried `retries` times after its reset. A secondary limit — the content-creation limit
 * (80 writes a minute, 500 an hour) among them — is shared by every writer of the same account (the controller
 * and every worker write as the App), so one wait of `retry-after` often ends with the window taken again by
 * the others; GitHub asks for "an exponentially increasing amount of time between retries, and throw an error
 * after a specific number of retries"
 * (https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit). So it
 * is retried `secondaryRetries` times, waiting `retry-after` (60 s without one, as the plugin does) times 2^n,
 * each wait capped at SECONDARY_LIMIT_MAX_WAIT_SECONDS or `retry-after` if that is longer: a worker's comment
 * or pull request waits out a busy minute instead of failing the job, and a write is never sent twice (a refused
 * write created nothing).
 *
 * The controller (`mode: "pause"`) does not wait like that for a write (its reads wait as above): GitHub's advice on a rate-limit answer is to "stop
 * making requests temporarily" and not to retry "until after [retry-after] seconds has elapsed"
 * (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately),
 * and six growing waits held one repository's reconcile (the hosted app's queue for it, or a billed Actions
 * job) for up to ~22 minutes. So it retries once, in the request, only when `retry-after` is at most
 * CONTROLLER_IN_REQUEST_WAIT_SECONDS; otherwise the refusal goes up to the gateway, which pauses that
 * repository's writes until `retry-after` has passed (longer each time in a row), ends the reconcile and
 * resumes in a later one (src/github/gateway.ts, src/github/transport/circuit.ts `pauseWrites`).
 */
/** A request that changes GitHub: any REST method but GET and HEAD, or a GraphQL mutation. */
export function isWriteRequest(request: { method: string; url: string; query?: unknown }): boolean {
  const method = request.method.toUpperCase();
  if (method === "GET" || method === "HEAD") return false;
  if (request.url === "/graphql" && typeof request.query === "string") {
    return /^\s*mutation\b/.test(request.query);
  }
  return true;
}

export function rateLimitHandlers(
  log: Pick<OctokitLog, "warn">,
  retries = 2,
  options: SecondaryLimitOptions = {},
) {
  const pauseWrites = options.mode === "pause";
  const secondaryRetries = options.secondaryRetries ?? SECONDARY_LIMIT_RETRIES;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  return {
    onRateLimit: (
      retryAfter: number,
      requestOptions: { method: string; url: string },
      _octokit: unknown,
      retryCount: number,
    ) => {
      log.warn(
        `rate limit on ${requestOptions.method} ${requestOptions.url}; ${retryCount < retries ? `retry ${retryCount + 1} in ${retryAfter}s` : "giving up"}`,
      );
      return retryCount < retries;
    },
    onSecondaryRateLimit: async (
      retryAfter: number,
      requestOptions: { method: string; url: string; query?: unknown },
      _octokit: unknown,
      retryCount: number,
    ) => {
      // Only writes pause: a read (the snapshot's GET and GraphQL queries) is waited for in the request as before.
      const pause = pauseWrites && isWriteRequest(requestOptions);
      const retries = pause ? Math.min(secondaryRetries, 1) : secondaryRetries;
      const wait = secondaryLimitWait(retryAfter, retryCount);
      const retry = retryCount < retries && (!pause || wait <= CONTROLLER_IN_REQUEST_WAIT_SECONDS);
      const at = now();
      // The dashboard says why writes wait, in the request or in a paused repository.
      if (retry || pause) noteLimitWait(options.baseUrl, { at, until: at + wait * 1000 });
      const outcome = retry
        ? `retry ${retryCount + 1} of ${retries} in ${wait}s`
        : !pause
          ? "giving up"
          : retryCount > 0
            ? "refused again after its retry: writes to the repository pause"
            : `not retried in the request (retry-after ${retryAfter}s): writes to the repository pause`;
      log.warn(`secondary rate limit on ${requestOptions.method} ${requestOptions.url}; ${outcome}`);
      if (!retry) return false;
      // The plugin itself waits `retryAfter` once this returns; the rest of the longer wait happens here.
      if (wait > retryAfter) await sleep((wait - retryAfter) * 1000);
      return true;
    },
  };
}
