/**
 * The worker's decisions inside its iteration loop, as pure functions:
 *
 * - `decideAfterIteration` — the completion matrix (the agent's signal × the quality commands) with the
 *   contradiction guard, stuck detection and the max-iterations / wall-clock timeout.
 * - `decideRateLimit` — rate-limit backoff `base × factor^n`, then the fallback agent, then end the job with
 *   the reset time.
 *
 * What the agent process's exit means is in agent-exit.ts; the controller's side is in task.ts.
 */
import { exponentialBackoff } from "../time/backoff.js";
import type { CompletionMode } from "./completion-mode.js";
import { failingSetShrank } from "./failing-set.js";
import { counted } from "../text/plural.js";

// ---------------------------------------------------------------------------------------------------------
// Completion check matrix

export type IterationSignalKind = "complete" | "blocked" | "needs_human" | "none";

export interface IterationSignal {
  kind: IterationSignalKind;
  /** BLOCKED reason or NEEDS_HUMAN question. */
  text?: string;
}

/** Result of the quality commands of this iteration; `not_run` when none ran (none configured or detected). */
export type QualityOutcome = "pass" | "fail" | "not_run";

export interface IterationInput {
  signal: IterationSignal;
  quality: QualityOutcome;
  /** 1-based number of the iteration that just ended. */
  iteration: number;
  maxIterations: number;
  startedAt: Date | number | string;
  now: Date | number;
  /** Wall clock allowed for the job (timeoutMinutes × 60 000); 0 or less disables it. */
  timeoutMs: number;
  /** Consecutive iterations, this one included, that produced no new commit. */
  iterationsWithoutCommit: number;
  /** Warning from this many iterations without a commit; 0 disables it. */
  stuckThreshold: number;
  /** Stop with "stuck" from this many; 0 disables it. */
  stuckStopThreshold: number;
  /** COMPLETE claims contradicted by failing gates so far in this job (before this iteration). */
  ignoredCompletions: number;
  /** Stop with "contradiction" when the count reaches this; 0 disables the guard. */
  maxIgnoredCompletionCycles: number;
  /** What fails now (src/core/agent/failing-set.ts; empty when the gate passed or did not run). */
  failing?: readonly string[];
  /** What failed at the last contradicted claim of this job; null before the first. */
  lastContradiction?: readonly string[] | null;
  /** `objective` needs the quality commands to have run and passed (default `promise`). */
  completion?: CompletionMode;
}

export type IterationOutcome =
  | "open_pr"
  | "continue"
  | "blocked"
  | "needs_human"
  | "timeout"
  | "stuck"
  | "contradiction";

export interface IterationDecision {
  outcome: IterationOutcome;
  /** One line for the progress comment / worker result `reason`. */
  reason: string;
  warnings: string[];
  /** The updated contradiction counter, to pass into the next iteration. */
  ignoredCompletions: number;
  /** What failed at the last contradicted claim, updated: to pass into the next iteration. */
  lastContradiction: readonly string[] | null;
  /** When continuing: feed the failing quality output back into the next prompt. */
  feedQualityFailures: boolean;
}

/**
 * One row of the completion matrix per call. Order: the agent's explicit signal first (a BLOCKED or
 * NEEDS_HUMAN on the last iteration is more useful than "timeout"; a COMPLETE that passes on the last
 * iteration is done work), then the contradiction guard, then max iterations and wall clock (`timeout`),
 * then stuck detection.
 *
 * COMPLETE with `not_run` quality counts as passing, with a warning: the PR's checks still gate the merge.
 */
export function decideAfterIteration(input: IterationInput): IterationDecision {
  const warnings: string[] = [];
  let ignored = Math.max(0, input.ignoredCompletions);
  let lastContradiction = input.lastContradiction ?? null;
  const decide = (outcome: IterationOutcome, reason: string, feed = false): IterationDecision => ({
    outcome,
    reason,
    warnings,
    ignoredCompletions: ignored,
    lastContradiction,
    feedQualityFailures: feed,
  });

  const { signal, quality } = input;
  if (signal.kind === "blocked")
    return decide("blocked", `agent is blocked: ${signal.text?.trim() || "no reason given"}`);
  if (signal.kind === "needs_human") {
    return decide("needs_human", `agent asks: ${signal.text?.trim() || "no question given"}`);
  }
  if (signal.kind === "complete" && quality === "pass")
    return decide("open_pr", "complete, quality commands pass");
  if (signal.kind === "complete" && quality === "not_run" && input.completion === "objective") {
    // Objective mode asks for both the marker and the gate: with no gate there is nothing to check it against.
    return decide(
      "blocked",
      "objective met by the agent's account, but `completion: objective` needs the quality commands and none " +
        "ran: set `qualityCommands` in .github/autopilot.yml (or add a test script the worker detects)",
    );
  }
  if (signal.kind === "complete" && quality === "not_run") {
    warnings.push("no quality commands ran; the PR's checks are the only gate");
    return decide("open_pr", "complete (no quality commands)");
  }

  let feed = quality === "fail";
  let reason =
    quality === "fail" ? "quality commands fail; next iteration" : "no completion signal; next iteration";
  if (signal.kind === "complete") {
    // COMPLETE + fail: the claim contradicts the gates. The failures go back to the agent while what fails
    // shrinks from one claim to the next; the same claim meeting the same failure (or more) goes to a person,
    // and so does the count's limit.
    ignored += 1;
    feed = true;
    reason = "COMPLETE claimed but quality commands fail; failures fed back";
    const max = input.maxIgnoredCompletionCycles;
    const failing = input.failing ?? [];
    const previous = lastContradiction;
    lastContradiction = failing;
    if (max > 0 && ignored >= max) {
      return decide(
        "contradiction",
        `COMPLETE claimed ${counted(ignored, "time")} while quality commands fail (limit ${max})`,
      );
    }
    if (previous !== null && !failingSetShrank(previous, failing)) {
      const same = failing.length === previous.length && failing.every((m) => previous.includes(m));
      return decide(
        "contradiction",
        `COMPLETE claimed again while ${same ? "the same" : "no fewer"} quality checks fail (${counted(ignored, "claim")}: ${shown(failing)})`,
      );
    }
    warnings.push(
      `COMPLETE claim ${ignored}${max > 0 ? ` of ${max}` : ""} contradicted by failing quality commands`,
    );
  }

  if (input.maxIterations > 0 && input.iteration >= input.maxIterations) {
    return decide("timeout", `reached max iterations (${input.maxIterations})`);
  }
  const elapsed = toMs(input.now) - toMs(input.startedAt);
  if (input.timeoutMs > 0 && elapsed >= input.timeoutMs) {
    return decide("timeout", `reached the wall-clock limit (${Math.round(input.timeoutMs / 60_000)} min)`);
  }

  const idle = input.iterationsWithoutCommit;
  if (input.stuckStopThreshold > 0 && idle >= input.stuckStopThreshold) {
    return decide(
      "stuck",
      `no new commit in ${counted(idle, "iteration")} (limit ${input.stuckStopThreshold})`,
    );
  }
  if (input.stuckThreshold > 0 && idle >= input.stuckThreshold) {
    warnings.push(`possibly stuck: no new commit in ${counted(idle, "iteration")}`);
  }
  return decide("continue", reason, feed);
}

/** A failing set in one short line: its first members, and how many more. */
function shown(failing: readonly string[]): string {
  if (failing.length === 0) return "no failure named";
  const first = failing.slice(0, 3).join("; ");
  return failing.length > 3 ? `${first}; and ${failing.length - 3} more` : first;
}

// ---------------------------------------------------------------------------------------------------------
// Rate limits and the fallback agent

interface RateLimitInput {
  /** Rate-limit hits already waited out on the current agent (0 for the first hit). */
  attempt: number;
  /** Waits allowed per agent (`rateLimit.retries`). */
  retries: number;
  /** Index of the current agent: 0 = primary, 1… = fallbacks in order. */
  agentIndex: number;
  /** Primary + fallbacks. */
  agentCount: number;
  baseMs: number;
  factor: number;
  /** Longest wait inside a job (`rateLimit.maxWaitMs`); a known reset further away is not waited for. */
  maxWaitMs: number;
  /** Reset time the agent printed, when known. */
  resetAt?: Date | number | string | null;
  now: Date | number;
}

type RateLimitDecision =
  | { action: "wait"; ms: number; reason: string }
  | { action: "switch_agent"; next: number; reason: string }
  | { action: "end_job"; resumeAt: string; reason: string };

/**
 * 1. While `attempt < retries`: wait `baseMs × factor^attempt` (capped by maxWaitMs) — or until the known
 *    reset time when it is within maxWaitMs.
 * 2. Then (or at once when the known reset is further away than maxWaitMs): switch to the next fallback agent.
 * 3. With no agent left: end the job; the controller re-dispatches at `resumeAt` (the known reset time, or
 *    now + maxWaitMs).
 */
export function decideRateLimit(input: RateLimitInput): RateLimitDecision {
  const now = toMs(input.now);
  const reset = input.resetAt == null ? null : toMs(input.resetAt);
  const untilReset = reset === null || Number.isNaN(reset) ? null : Math.max(0, reset - now);
  const resetTooFar = untilReset !== null && untilReset > input.maxWaitMs;

  const wait = limitWait(input);
  if (wait) return { action: "wait", ...wait };
  if (input.agentIndex + 1 < input.agentCount) {
    return {
      action: "switch_agent",
      next: input.agentIndex + 1,
      reason: resetTooFar
        ? "limit resets too late; switching to the next agent"
        : "retries used; switching agent",
    };
  }
  const resumeAt = untilReset !== null ? now + untilReset : now + Math.max(0, input.maxWaitMs);
  return {
    action: "end_job",
    resumeAt: new Date(resumeAt).toISOString(),
    reason: "every agent is limited; the task resumes after the reset",
  };
}

/**
 * The wait for a limit while waits are left (`attempt < retries`): until the known reset when it is within
 * maxWaitMs, else `baseMs × factor^attempt` capped by maxWaitMs. Null when no wait is left or the reset is too
 * far. Also the wait for a failure that only looks like a limit (limit-hint.ts), on the same count of waits.
 */
export function limitWait(
  input: Omit<RateLimitInput, "agentIndex" | "agentCount">,
): { ms: number; reason: string } | null {
  const now = toMs(input.now);
  const reset = input.resetAt == null ? null : toMs(input.resetAt);
  const untilReset = reset === null || Number.isNaN(reset) ? null : Math.max(0, reset - now);
  if (input.attempt >= input.retries || (untilReset !== null && untilReset > input.maxWaitMs)) return null;
  if (untilReset !== null) return { ms: untilReset, reason: "waiting for the announced reset" };
  const ms = exponentialBackoff(input.baseMs, input.factor, input.attempt, input.maxWaitMs);
  return { ms, reason: `backoff ${input.attempt + 1} of ${input.retries}` };
}

/** Milliseconds since the epoch of a date, a timestamp or an ISO string. */
function toMs(t: Date | number | string): number {
  if (typeof t === "number") return t;
  if (typeof t === "string") return Date.parse(t);
  return t.getTime();
}
