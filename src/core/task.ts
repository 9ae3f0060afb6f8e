/**
 * The task state machine: the seeds' tables as pure functions.
 *
 * - `decideAfterIteration` — the completion check matrix (seeds 001/002, DESIGN §3) with the contradiction
 *   guard (seed 004), stuck detection and the max-iterations / wall-clock timeout.
 * - `decideAgentExit` — seed 001 "Agent Exit Handling".
 * - `decideOnWorkerOutcome` — seed 001 "Signal Handling (Autopilot)", for every worker outcome.
 * - `decideOnFailure`, `trackConsecutiveFailures` — error strategies retry / skip / abort and the
 *   consecutive-error pause (seed 000 §3.4, seed 001 "Error Handling").
 * - `decideRateLimit` — rate-limit backoff `base × factor^n`, then the fallback agent, then end the job with
 *   the reset time (seed 000 §3.5, DESIGN §3 "Errors").
 * - `transitionTask`, `RECOVERY_ACTIONS` — label-state transitions and recovery (seed 001 "Recovery Actions",
 *   "Idea Recovery").
 */
import { exponentialBackoff } from "./backoff.js";
import type { WorkerOutcome } from "./worker-result.js";

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
  const decide = (outcome: IterationOutcome, reason: string, feed = false): IterationDecision => ({
    outcome,
    reason,
    warnings,
    ignoredCompletions: ignored,
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
  if (signal.kind === "complete" && quality === "not_run") {
    warnings.push("no quality commands ran; the PR's checks are the only gate");
    return decide("open_pr", "complete (no quality commands)");
  }

  let feed = quality === "fail";
  let reason =
    quality === "fail" ? "quality commands fail; next iteration" : "no completion signal; next iteration";
  if (signal.kind === "complete") {
    // COMPLETE + fail: the claim contradicts the gates.
    ignored += 1;
    feed = true;
    reason = "COMPLETE claimed but quality commands fail; failures fed back";
    const max = input.maxIgnoredCompletionCycles;
    if (max > 0 && ignored >= max) {
      return decide(
        "contradiction",
        `COMPLETE claimed ${ignored} time${ignored === 1 ? "" : "s"} while quality commands fail (limit ${max})`,
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
    return decide("stuck", `no new commit in ${idle} iterations (limit ${input.stuckStopThreshold})`);
  }
  if (input.stuckThreshold > 0 && idle >= input.stuckThreshold) {
    warnings.push(`possibly stuck: no new commit in ${idle} iterations`);
  }
  return decide("continue", reason, feed);
}

// ---------------------------------------------------------------------------------------------------------
// Agent exit handling

export type TaskStatus =
  | "ready"
  | "in-progress"
  | "review"
  | "done"
  | "blocked"
  | "needs-human"
  | "timeout"
  | "failed"
  /** Taken out of the pool by `skip` (the exclude label). */
  | "skipped";

export const TASK_STATUSES: readonly TaskStatus[] = [
  "ready",
  "in-progress",
  "review",
  "done",
  "blocked",
  "needs-human",
  "timeout",
  "failed",
  "skipped",
];

export interface AgentExitInput {
  /** Process exit code; null when it was ended by a signal. */
  exitCode: number | null;
  /** Terminating signal ("SIGTERM", "SIGKILL", …) or null. */
  processSignal?: string | null;
  /** The promise signal parsed from the agent's final message. */
  signal: IterationSignal;
  /** Quality result (only meaningful after COMPLETE). */
  quality?: QualityOutcome;
  /** The iteration exceeded iterationTimeoutMinutes and the worker killed the process tree. */
  iterationTimedOut?: boolean;
}

export type AgentExitAction =
  /** 0 + COMPLETE, gates pass: open/update the PR (queue merge), clean up. */
  | "open_pr"
  /** Next iteration (COMPLETE with failing tests, no signal, an iteration cut off by its own timeout). */
  | "continue"
  /** 0 + BLOCKED: log the reason, alert. */
  | "blocked"
  /** 0 + NEEDS_HUMAN: post the question, end the job. */
  | "needs_human"
  /** Non-zero exit: task failed, branch kept, alert. */
  | "fail"
  /** SIGTERM (user): checkpoint (commit + push work in progress), release the task to the pool. */
  | "release"
  /** SIGKILL (crash): keep the branch, task back to the pool for recovery. */
  | "recover";

export interface AgentExitDecision {
  action: AgentExitAction;
  /** Task status after this exit; "in-progress" while iterations go on. */
  status: TaskStatus;
  /** Commit and push what the agent left before ending (seed: "stash changes"). */
  checkpoint: boolean;
  /** The branch stays for debugging / recovery. */
  keepBranch: boolean;
  /** People should be told. */
  alert: boolean;
  reason: string;
}

/**
 * Seed 001 "Agent Exit Handling":
 *
 * | exit              | status             | action                          |
 * |-------------------|--------------------|---------------------------------|
 * | 0 + COMPLETE      | done (→ review)    | queue merge (open PR), cleanup  |
 * | 0 + COMPLETE      | (tests fail)       | continue iterations             |
 * | 0 + no signal     | active             | increment iteration             |
 * | 0 + BLOCKED       | blocked            | log reason, alert user          |
 * | != 0              | failed             | keep branch, alert              |
 * | SIGTERM (user)    | pending (ready)    | checkpoint changes, release     |
 * | SIGKILL (crash)   | pending (ready)    | keep branch for recovery        |
 *
 * Plus (not in the seed's table): 0 + NEEDS_HUMAN → needs-human; an iteration killed by the worker's own
 * per-iteration timeout → continue (the job's wall clock and max iterations still bound it).
 * Rate-limit / usage-limit output is classified before this table is consulted (see `decideRateLimit`).
 */
export function decideAgentExit(input: AgentExitInput): AgentExitDecision {
  const sig = input.processSignal ?? null;
  if (input.iterationTimedOut) {
    return {
      action: "continue",
      status: "in-progress",
      checkpoint: true,
      keepBranch: true,
      alert: false,
      reason: "iteration timed out; its work is committed and the next iteration continues",
    };
  }
  if (sig === "SIGTERM" || sig === "SIGINT") {
    return {
      action: "release",
      status: "ready",
      checkpoint: true,
      keepBranch: true,
      alert: false,
      reason: "stopped by the user; work in progress committed, task released",
    };
  }
  if (sig !== null) {
    return {
      action: "recover",
      status: "ready",
      checkpoint: false,
      keepBranch: true,
      alert: true,
      reason: `agent killed (${sig}); branch kept for recovery`,
    };
  }
  if (input.exitCode !== 0) {
    return {
      action: "fail",
      status: "failed",
      checkpoint: true,
      keepBranch: true,
      alert: true,
      reason: `agent exited with code ${input.exitCode ?? "unknown"}`,
    };
  }
  switch (input.signal.kind) {
    case "complete":
      if (input.quality === "fail") {
        return {
          action: "continue",
          status: "in-progress",
          checkpoint: true,
          keepBranch: true,
          alert: false,
          reason: "COMPLETE claimed but tests fail; next iteration",
        };
      }
      return {
        action: "open_pr",
        status: "review",
        checkpoint: true,
        keepBranch: true,
        alert: false,
        reason: "complete; PR opened for merge",
      };
    case "blocked":
      return {
        action: "blocked",
        status: "blocked",
        checkpoint: true,
        keepBranch: true,
        alert: true,
        reason: `blocked: ${input.signal.text?.trim() || "no reason given"}`,
      };
    case "needs_human":
      return {
        action: "needs_human",
        status: "needs-human",
        checkpoint: true,
        keepBranch: true,
        alert: true,
        reason: `needs a human: ${input.signal.text?.trim() || "no question given"}`,
      };
    case "none":
      return {
        action: "continue",
        status: "in-progress",
        checkpoint: true,
        keepBranch: true,
        alert: false,
        reason: "no signal; next iteration",
      };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Signal handling (controller side): what a finished worker's outcome means for the task and the slot

export interface OutcomeDecision {
  /** Task status to set. */
  status: TaskStatus;
  /** The slot is free for the next task. */
  freeSlot: boolean;
  /** A PR is waiting for its gates (checks, review, human gate) before merge. */
  queueMerge: boolean;
  /** People should be told. */
  alert: boolean;
  /** Counts as a failed task for the error strategy and the consecutive-failure counter. */
  failure: boolean;
  /** The task is re-dispatched later from its branch (pause, rate limit, usage limit). */
  resumeLater: boolean;
  /** Free text for the dashboard. */
  note: string;
}

/**
 * Seed 001 "Signal Handling (Autopilot)" extended to every `WorkerOutcome`:
 *
 * | signal      | action                                   |
 * |-------------|------------------------------------------|
 * | COMPLETE    | mark done (review), queue merge, next    |
 * | BLOCKED     | mark blocked, free slot, next            |
 * | NEEDS_HUMAN | pause the task, alert, others go on      |
 * | PROGRESS    | update the dashboard (status "running")  |
 * | TIMEOUT     | mark timeout, free slot, next, alert     |
 */
export function decideOnWorkerOutcome(outcome: WorkerOutcome | "progress"): OutcomeDecision {
  const d = (
    status: TaskStatus,
    note: string,
    flags: Partial<Omit<OutcomeDecision, "status" | "note">> = {},
  ): OutcomeDecision => ({
    status,
    freeSlot: true,
    queueMerge: false,
    alert: false,
    failure: false,
    resumeLater: false,
    note,
    ...flags,
  });
  switch (outcome) {
    case "progress":
      return d("in-progress", "update the dashboard", { freeSlot: false });
    case "complete":
      return d("review", "PR opened; merges when its gates pass", { queueMerge: true });
    case "blocked":
      return d("blocked", "blocked; picking the next task", { alert: true });
    case "needs_human":
      return d("needs-human", "question posted; other tasks go on", { alert: true });
    case "timeout":
      return d("timeout", "timed out (not a failure); branch kept", { alert: true });
    case "stuck":
      return d("failed", "stuck: no new commits", { alert: true, failure: true });
    case "contradiction":
      return d("failed", "COMPLETE kept contradicting failing gates", { alert: true, failure: true });
    case "failed":
      return d("failed", "agent failed", { alert: true, failure: true });
    case "paused":
      return d("in-progress", "checkpointed for the pause; resumes from its branch", { resumeLater: true });
    case "rate_limited":
    case "usage_limited":
      return d("in-progress", "agents limited; resumes after the reset time", {
        resumeLater: true,
        alert: true,
      });
    case "budget_exceeded":
      return d("failed", "task budget exceeded", { alert: true });
    case "auth":
      return d("failed", "agent authentication failed", { alert: true, failure: true });
    case "quota":
      return d("failed", "agent quota exhausted", { alert: true, failure: true });
    case "claimed_elsewhere":
      return d("in-progress", "another worker holds the task", { freeSlot: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Error strategies

export type FailureStrategy = "retry" | "skip" | "abort";

export interface FailureInput {
  strategy: FailureStrategy;
  /** 1-based number of the attempt that just failed. */
  attempt: number;
  /** Retries allowed after the first attempt (so at most 1 + maxRetries attempts). */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export type FailureDecision =
  | { action: "retry"; delayMs: number; nextAttempt: number; reason: string }
  | { action: "skip"; reason: string }
  | { action: "abort"; reason: string };

/**
 * retry: re-dispatch after `retryBaseMs × 2^attempt` (capped by `retryMaxMs`) while retries remain, then give
 * the task up (`skip`: task → failed, the session goes on); skip: task → failed at once; abort: the session
 * stops.
 */
export function decideOnFailure(input: FailureInput): FailureDecision {
  const attempt = Math.max(1, Math.floor(input.attempt));
  switch (input.strategy) {
    case "abort":
      return { action: "abort", reason: "errorStrategy is abort" };
    case "skip":
      return { action: "skip", reason: "errorStrategy is skip" };
    case "retry": {
      if (attempt <= input.maxRetries) {
        const delayMs = exponentialBackoff(input.retryBaseMs, 2, attempt, input.retryMaxMs);
        return {
          action: "retry",
          delayMs,
          nextAttempt: attempt + 1,
          reason: `retry ${attempt} of ${input.maxRetries}`,
        };
      }
      return { action: "skip", reason: `no retries left (${input.maxRetries} used)` };
    }
  }
}

export interface ConsecutiveFailures {
  count: number;
  /** The session should pause now (the count reached the threshold with this outcome). */
  pause: boolean;
}

/**
 * Counts failed tasks in a row: a failure (see `decideOnWorkerOutcome(...).failure`) adds one, a completed
 * task resets to 0, anything else (blocked, needs-human, timeout, pauses, limits) leaves it unchanged.
 * `pause` is true when the count reaches `threshold` (0 disables).
 */
export function trackConsecutiveFailures(
  count: number,
  outcome: WorkerOutcome,
  threshold: number,
): ConsecutiveFailures {
  const d = decideOnWorkerOutcome(outcome);
  if (outcome === "complete") return { count: 0, pause: false };
  if (!d.failure) return { count, pause: false };
  const next = count + 1;
  return { count: next, pause: threshold > 0 && next >= threshold };
}

// ---------------------------------------------------------------------------------------------------------
// Rate limits and the fallback agent

export interface RateLimitInput {
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

export type RateLimitDecision =
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

  if (!resetTooFar && input.attempt < input.retries) {
    if (untilReset !== null) {
      return { action: "wait", ms: untilReset, reason: "waiting for the announced reset" };
    }
    const ms = exponentialBackoff(input.baseMs, input.factor, input.attempt, input.maxWaitMs);
    return { action: "wait", ms, reason: `rate limited; backoff ${input.attempt + 1} of ${input.retries}` };
  }
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

// ---------------------------------------------------------------------------------------------------------
// Task status transitions

export type TaskEvent =
  /** The controller dispatched a worker. */
  | { type: "dispatch" }
  /** The worker opened/updated the PR (COMPLETE + gates pass). */
  | { type: "prOpened" }
  /** The PR merged (or the issue was closed as completed). */
  | { type: "merged" }
  /** Failing checks, requested changes or a merge conflict send the task back to a worker. */
  | { type: "feedback" }
  | { type: "blocked"; reason?: string }
  | { type: "needsHuman"; question?: string }
  | { type: "timeout" }
  | { type: "fail"; reason?: string }
  /** The user stopped the worker (SIGTERM) or the session paused it: back to the pool, work kept. */
  | { type: "release" }
  /** The worker crashed (SIGKILL / lost job): back to the pool with the retry count raised. */
  | { type: "crash" }
  /** `/autopilot retry #N` or the retry strategy: fresh iteration counter, retry count + 1. */
  | { type: "retry" }
  /** `/autopilot skip #N`: out of the pool (exclude label). */
  | { type: "skip" }
  /** A human answered, or unblocked the task by hand. */
  | { type: "unblock" }
  /** A closed (done) issue was reopened, or a skipped one labeled ready again. */
  | { type: "reopen" };

export type TaskTransition =
  | {
      status: TaskStatus;
      /** Added to the task's retry count (the scoring penalty uses it). */
      retryDelta: number;
      /** The next worker starts its iteration counter at 1. */
      freshIterations: boolean;
    }
  | { refused: string };

const TRANSITIONS: Record<
  TaskEvent["type"],
  { from: readonly TaskStatus[]; to: TaskStatus; retry?: 1; fresh?: true }
> = {
  dispatch: { from: ["ready"], to: "in-progress" },
  prOpened: { from: ["in-progress"], to: "review" },
  merged: { from: ["review", "in-progress"], to: "done" },
  feedback: { from: ["review"], to: "in-progress" },
  blocked: { from: ["in-progress", "review"], to: "blocked" },
  needsHuman: { from: ["in-progress", "review"], to: "needs-human" },
  timeout: { from: ["in-progress"], to: "timeout" },
  fail: { from: ["in-progress", "review"], to: "failed" },
  release: { from: ["in-progress"], to: "ready" },
  crash: { from: ["in-progress"], to: "ready", retry: 1 },
  retry: { from: ["failed", "timeout", "blocked", "needs-human"], to: "ready", retry: 1, fresh: true },
  skip: {
    from: ["ready", "in-progress", "review", "blocked", "needs-human", "timeout", "failed"],
    to: "skipped",
  },
  unblock: { from: ["blocked", "needs-human"], to: "ready" },
  reopen: { from: ["done", "skipped"], to: "ready", fresh: true },
};

/** Moves a task between label states; an event that does not apply is refused with a reason. */
export function transitionTask(status: TaskStatus, event: TaskEvent): TaskTransition {
  const rule = TRANSITIONS[event.type];
  if (!rule.from.includes(status)) {
    return {
      refused: `cannot ${describeTaskEvent(event.type)} a task that is ${status} (only from ${rule.from.join(", ")})`,
    };
  }
  return { status: rule.to, retryDelta: rule.retry ?? 0, freshIterations: rule.fresh ?? false };
}

function describeTaskEvent(type: TaskEvent["type"]): string {
  return (
    {
      dispatch: "dispatch",
      prOpened: "open a PR for",
      merged: "merge",
      feedback: "send feedback to",
      blocked: "block",
      needsHuman: "ask a human about",
      timeout: "time out",
      fail: "fail",
      release: "release",
      crash: "recover",
      retry: "retry",
      skip: "skip",
      unblock: "unblock",
      reopen: "reopen",
    } as const
  )[type];
}

export interface TaskLabelNames {
  ready: string;
  inProgress: string;
  review: string;
  blocked: string;
  needsHuman: string;
  timeout: string;
  failed: string;
  exclude?: string;
}

/**
 * The status an issue's labels say (closed → done). Exactly one state label is expected; when several are
 * present the most advanced/attention-worthy wins: needs-human, blocked, failed, timeout, review,
 * in-progress, ready. Null for an open issue with no state label (not an Autopilot task).
 */
export function taskStatusFromLabels(
  issue: { state: "open" | "closed"; labels: readonly string[] },
  names: TaskLabelNames,
): TaskStatus | null {
  if (issue.state === "closed") return "done";
  const has = (l: string | undefined) => !!l && issue.labels.some((x) => x.toLowerCase() === l.toLowerCase());
  if (has(names.exclude)) return "skipped";
  const order: [string, TaskStatus][] = [
    [names.needsHuman, "needs-human"],
    [names.blocked, "blocked"],
    [names.failed, "failed"],
    [names.timeout, "timeout"],
    [names.review, "review"],
    [names.inProgress, "in-progress"],
    [names.ready, "ready"],
  ];
  for (const [label, status] of order) if (has(label)) return status;
  return null;
}

/** The label a status is shown with; null for done (closed) and skipped (the exclude label is separate). */
export function labelForStatus(status: TaskStatus, names: TaskLabelNames): string | null {
  switch (status) {
    case "ready":
      return names.ready;
    case "in-progress":
      return names.inProgress;
    case "review":
      return names.review;
    case "blocked":
      return names.blocked;
    case "needs-human":
      return names.needsHuman;
    case "timeout":
      return names.timeout;
    case "failed":
      return names.failed;
    case "done":
    case "skipped":
      return null;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Recovery actions

export type RecoveryErrorType = "quality_fail" | "timeout" | "blocked" | "crash" | "failed";

export interface RecoveryRule {
  /** What Autopilot does by itself. */
  auto: {
    action: "retry_iteration" | "mark_timeout" | "pick_next" | "reset_to_ready" | "apply_error_strategy";
  };
  /** What a person can do (commands / labels). */
  manual: string[];
}

/**
 * Seed 001 "Recovery Actions" and "Idea Recovery", GitHub-natively:
 *
 * | error        | auto-recovery                 | manual                                        |
 * |--------------|-------------------------------|-----------------------------------------------|
 * | quality fail | retry iteration               | skip                                          |
 * | timeout      | mark timeout, pick next       | retry (fresh counter), raise maxIterations    |
 * | blocked      | pick a different task         | unblock (answer / relabel ready)              |
 * | crash        | reset to ready (retry + 1)    | debug the branch                              |
 * | failed       | error strategy (retry/skip/abort) | retry (branch kept), skip                 |
 */
export const RECOVERY_ACTIONS: Readonly<Record<RecoveryErrorType, RecoveryRule>> = Object.freeze({
  quality_fail: { auto: { action: "retry_iteration" }, manual: ["skip"] },
  timeout: { auto: { action: "mark_timeout" }, manual: ["retry", "raise maxIterations / timeoutMinutes"] },
  blocked: { auto: { action: "pick_next" }, manual: ["unblock"] },
  crash: { auto: { action: "reset_to_ready" }, manual: ["debug the branch"] },
  failed: { auto: { action: "apply_error_strategy" }, manual: ["retry", "skip"] },
});

// ---------------------------------------------------------------------------------------------------------

function toMs(t: Date | number | string): number {
  if (typeof t === "number") return t;
  if (typeof t === "string") return Date.parse(t);
  return t.getTime();
}
