/**
 * The one way Autopilot builds a GitHub client outside Probot: @octokit/rest with the throttling and retry
 * plugins configured as Probot configures them. Every caller receives the client as a parameter.
 */
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";

export const AutopilotOctokit = Octokit.plugin(throttling, retry);
export type AutopilotOctokit = InstanceType<typeof AutopilotOctokit>;

export interface OctokitLog {
  debug: (message: string) => void;
  info: (message: string) => void;
  warn: (message: string) => void;
  error: (message: string) => void;
}

export interface CreateOctokitOptions {
  auth: string;
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
  /** How many times a rate-limited request is retried before giving up. */
  rateLimitRetries?: number;
}

const silentLog: OctokitLog = { debug() {}, info() {}, warn() {}, error() {} };

export function createOctokit(options: CreateOctokitOptions): AutopilotOctokit {
  const log = options.log ?? silentLog;
  const rateLimitRetries = options.rateLimitRetries ?? 2;
  return new AutopilotOctokit({
    auth: options.auth,
    baseUrl: options.baseUrl ?? "https://api.github.com",
    userAgent: options.userAgent ?? "autopilot",
    log,
    request: options.fetch ? { fetch: options.fetch } : {},
    retry: { enabled: options.retry ?? true },
    throttle: {
      enabled: options.throttle ?? true,
      onRateLimit: (
        retryAfter: number,
        requestOptions: { method: string; url: string },
        _octokit: unknown,
        retryCount: number,
      ) => {
        log.warn(
          `rate limit on ${requestOptions.method} ${requestOptions.url}; retry ${retryCount + 1} in ${retryAfter}s`,
        );
        return retryCount < rateLimitRetries;
      },
      onSecondaryRateLimit: (
        retryAfter: number,
        requestOptions: { method: string; url: string },
        _octokit: unknown,
        retryCount: number,
      ) => {
        log.warn(
          `secondary rate limit on ${requestOptions.method} ${requestOptions.url}; retry ${retryCount + 1} in ${retryAfter}s`,
        );
        return retryCount < rateLimitRetries;
      },
    },
  });
}
