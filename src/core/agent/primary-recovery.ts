/**
 * Going back to the primary agent after a fallback (`recoverPrimary`). A job switches to a fallback agent when the
 * primary hits a rate or usage limit (decideRateLimit in iteration.ts); the primary is the agent the repository
 * chose, so once its limit has lifted the job returns to it at the next iteration instead of keeping the fallback
 * to the end. When the limit lifts: the reset time the primary printed, or — when it printed none — the longest
 * wait the job would have made for it (`rateLimit.maxWaitMs`) after the switch.
 */

/** When the primary's limit is taken to lift, in epoch milliseconds. */
export function primaryLimitLiftsAt(resetAt: Date | undefined, now: number, maxWaitMs: number): number {
  return resetAt !== undefined ? Math.max(now, resetAt.getTime()) : now + Math.max(0, maxWaitMs);
}

interface PrimaryRecoveryInput {
  recoverPrimary: boolean;
  /** The agent in use: 0 = primary. */
  agentIndex: number;
  /** When the primary's limit lifts (primaryLimitLiftsAt), or null when it was never limited in this job. */
  primaryLimitedUntil: number | null;
  now: number;
}

/** Whether the next iteration goes back to the primary agent. */
export function shouldRecoverPrimary(input: PrimaryRecoveryInput): boolean {
  return (
    input.recoverPrimary &&
    input.agentIndex > 0 &&
    input.primaryLimitedUntil !== null &&
    input.now >= input.primaryLimitedUntil
  );
}
