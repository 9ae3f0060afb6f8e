/**
 * How long a live worker job can go without updating its result (the progress comment's marker), and so how long
 * before silence means it is gone. A job updates its result after every iteration, and an iteration is silent
 * for up to the agent's run plus the quality step (each bounded by `iterationTimeoutMinutes`: every quality
 * command and re-run share the step's time, src/worker/processes/quality.ts), one wait for a
 * limit (at most `rateLimit.maxWaitMs`) and the pause between iterations (`iterationDelayMs`). The job's own wall
 * clock (`timeoutMinutes`) can be the longer bound. Five minutes cover git, pushes and GitHub's latency.
 *
 * The worker's claim (a second dispatch taking over a stale attempt) and the controller's cancel of a stalled run
 * both use this bound, so neither takes a live job for a dead one.
 */

/** The settings the bound depends on (a subset of the configuration). */
interface JobSilenceSettings {
  timeoutMinutes: number;
  iterationTimeoutMinutes: number;
  iterationDelayMs: number;
  rateLimit: { maxWaitMs: number };
}

const SLACK_MS = 5 * 60_000;

/** The longest silence of a live worker job, in milliseconds. */
export function jobSilenceLimitMs(config: JobSilenceSettings): number {
  const iteration = 2 * config.iterationTimeoutMinutes * 60_000 + config.iterationDelayMs;
  return Math.max(config.timeoutMinutes * 60_000, iteration) + SLACK_MS + config.rateLimit.maxWaitMs;
}
