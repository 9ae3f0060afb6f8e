/**
 * When GitHub last held Autopilot's requests back with a secondary rate limit (the content-creation limit among
 * them: https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits),
 * per GitHub host and per process: the Octokit rate-limit handler (`octokit.ts`) notes each wait — a retry in the
 * request, or (the controller) the refusal that pauses a repository's writes — and the reconcile puts a recent
 * one on the dashboard, together with the repository's own pause (src/github/transport/circuit.ts), so a slow session
 * says why.
 */

export interface LimitWait {
  /** When the refusal came (epoch ms). */
  at: number;
  /** When the request is tried again (epoch ms). */
  until: number;
}

/** How long after a wait ends the dashboard still mentions it. */
export const LIMIT_WAIT_GRACE_MS = 60_000;

const waits = new Map<string, LimitWait>();

function hostKey(baseUrl: string | undefined): string {
  return (baseUrl ?? "https://api.github.com").replace(/\/+$/, "").toLowerCase();
}

/** Notes a wait for a secondary rate limit on the GitHub at `baseUrl`. */
export function noteLimitWait(baseUrl: string | undefined, wait: LimitWait): void {
  const key = hostKey(baseUrl);
  const known = waits.get(key);
  waits.set(
    key,
    known ? { at: Math.min(known.at, wait.at), until: Math.max(known.until, wait.until) } : wait,
  );
}

/**
 * The wait still going on, or ended less than `graceMs` ago, on the GitHub at `baseUrl`; null when there is
 * none (an older one is forgotten).
 */
export function recentLimitWait(
  baseUrl: string | undefined,
  nowMs: number,
  graceMs = LIMIT_WAIT_GRACE_MS,
): LimitWait | null {
  const key = hostKey(baseUrl);
  const wait = waits.get(key);
  if (!wait) return null;
  if (wait.until + graceMs < nowMs) {
    waits.delete(key);
    return null;
  }
  return wait;
}

/** Forgets every wait (tests). */
export function resetLimitWaits(): void {
  waits.clear();
}
