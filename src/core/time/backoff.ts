/**
 * Exponential backoff shared by the error strategies (`retryBaseMs × 2^attempt`, capped by `retryMaxMs`) and
 * the rate-limit waits (`rateLimit.baseMs × rateLimit.factor^n`, capped by `rateLimit.maxWaitMs`).
 * Deterministic: no jitter (randomness would have to be passed in, and the callers do not need it).
 */

/**
 * `base × factor^attempt`, never more than `cap` and never negative.
 *
 * - `attempt` below 0 (or not a number) counts as 0; fractional attempts are floored.
 * - A result that overflows (Infinity) or a non-finite cap is clamped to the cap (or to
 *   `Number.MAX_SAFE_INTEGER` when the cap itself is not finite).
 * - A negative or NaN `base`, `factor` or `cap` is treated as 0.
 */
export function exponentialBackoff(base: number, factor: number, attempt: number, cap: number): number {
  const b = nonNegative(base);
  const f = nonNegative(factor);
  const n = Number.isFinite(attempt) && attempt > 0 ? Math.floor(attempt) : 0;
  const c = Number.isNaN(cap) || cap < 0 ? 0 : Math.min(cap, Number.MAX_SAFE_INTEGER);
  const raw = b * f ** n;
  if (!Number.isFinite(raw) || Number.isNaN(raw)) return c;
  return Math.min(Math.round(raw), c);
}

/** Every delay of a schedule, for display ("5s, 15s, 45s"): attempts 0 … count-1. */
export function backoffSchedule(base: number, factor: number, count: number, cap: number): number[] {
  const out: number[] = [];
  for (let attempt = 0; attempt < count; attempt++) out.push(exponentialBackoff(base, factor, attempt, cap));
  return out;
}

function nonNegative(value: number): number {
  return Number.isNaN(value) || value < 0 ? 0 : value;
}
