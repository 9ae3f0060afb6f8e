/**
 * What a worker's end means for its task: its outcome (review, back to ready, blocked, needs-human, failed),
 * a crash or a lost run, the failure strategy and the consecutive-failure count that can pause the session.
 */
import type { TaskRecord } from "../../dashboard/index.js";
import { candidateOfBranch } from "../../contract.js";
import { truncate } from "../../text/markdown.js";
import { formatDuration } from "../../time/duration.js";
import { decideOnFailure, decideOnWorkerOutcome, trackConsecutiveFailures } from "../../tasks/task.js";
import type { WorkerResult } from "../../tasks/worker-result.js";
import { note, type Reconciling, round4 } from "../context.js";
import { sessionEvent } from "../session-events.js";
import { pauseForLimitedAgents, raiseSessionAlert } from "../task-alerts.js";
import { setStatus } from "../task-labels.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { liveCount } from "./worker-runs.js";
import { planProposed } from "../commands/plan-approval.js";
import { counted } from "../../text/plural.js";

/** A finished worker's result, acted on once per dispatch. */
export function handleOutcome(ctx: Reconciling, n: number, record: TaskRecord, result: WorkerResult): void {
  const { config } = ctx;
  const outcome = result.result ?? "failed";
  accountResult(record, result);
  record.handled = result.dispatchId;
  record.result = outcome;
  record.reason = result.reason ? truncate(result.reason, 300) : undefined;
  record.cancelAt = undefined;
  // A PR the task dropped (a merged PR since reverted, a revert closed unmerged) is not the task's any more.
  // A best-of candidate's PR (its result names the candidate's branch) is never the task's: a candidate's result
  // read as the task's (its round forgotten with a lost state) leaves it to the candidates' sweep (best-of.ts).
  const candidate = candidateOfBranch(ctx.config.branchPrefix, result.branch) !== null;
  const reported =
    result.prNumber && !candidate && !record.dropped?.includes(result.prNumber) ? result.prNumber : null;
  if (reported) record.pr = reported;
  if (result.humanGate.fired) {
    record.gate = [
      ...new Set([...(record.gate ?? []), ...result.humanGate.rules.map((r) => truncate(r.rule, 120))]),
    ].slice(0, 20);
  }
  const decision = decideOnWorkerOutcome(outcome);
  note(
    ctx,
    `#${n}: worker ${result.dispatchId} finished: ${outcome}${result.reason ? ` (${truncate(result.reason, 120)})` : ""}`,
  );

  const consecutive = trackConsecutiveFailures(
    ctx.state.consecutiveFailures,
    outcome,
    config.consecutiveErrorThreshold,
  );
  countFailure(
    ctx,
    n,
    outcome === "complete" ? "reset" : decision.failure ? "failure" : "none",
    consecutive.count,
  );

  if (outcome === "complete") {
    const pr = pullsFor(ctx, n).find((p) => p.state === "open" || p.state === "merged");
    if (!reported && !pr) {
      failTask(ctx, n, record, "the worker reported completion but no pull request was found");
      return;
    }
    record.failures = 0;
    record.since = ctx.now.toISOString();
    setStatus(ctx, n, "review");
    return;
  }
  if (decision.resumeLater) {
    if (outcome === "rate_limited" || outcome === "usage_limited") {
      const resume = result.resumeAt ? Date.parse(result.resumeAt) : Number.NaN;
      const until = Number.isNaN(resume) ? ctx.nowMs + config.rateLimit.maxWaitMs : resume;
      if (until > ctx.nowMs) record.waitUntil = new Date(until).toISOString();
      pauseForLimitedAgents(ctx, n, until);
    }
    setStatus(ctx, n, "ready");
    return;
  }
  if (decision.failure) {
    failTask(ctx, n, record, result.reason ?? decision.note);
    return;
  }
  record.since = result.updatedAt;
  if (
    outcome === "needs_human" &&
    result.plan &&
    planProposed(ctx, n, record, result.plan.digest, result.updatedAt)
  ) {
    // A writer approved this plan from its comment before the run's result was read: on to the implementation.
    record.since = undefined;
    setStatus(ctx, n, "ready");
    return;
  }
  setStatus(ctx, n, decision.status);
}

/** Failure of an attempt: the error strategy decides (retry with backoff, give up, or abort the session). */
export function failTask(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  reason: string,
  strategy = ctx.config.errorStrategy,
): void {
  const { config, state } = ctx;
  record.failures += 1;
  const d = decideOnFailure({
    strategy,
    attempt: record.failures,
    maxRetries: config.maxRetries,
    retryBaseMs: config.retryBaseMs,
    retryMaxMs: config.retryMaxMs,
  });
  record.reason = truncate(reason, 300);
  if (d.action === "retry") {
    record.retries += 1;
    record.waitUntil = new Date(ctx.nowMs + d.delayMs).toISOString();
    record.reason = truncate(`${reason} — ${d.reason}, in ${formatDuration(d.delayMs)}`, 300);
    setStatus(ctx, n, "ready");
    note(ctx, `#${n}: ${d.reason} after ${formatDuration(d.delayMs)}`);
  } else {
    record.since = ctx.now.toISOString();
    setStatus(ctx, n, "failed");
    note(ctx, `#${n}: failed (${d.reason})`);
    if (d.action === "abort") {
      const aborted = sessionEvent(ctx, {
        type: "abort",
        issue: n,
        detail: `task #${n} failed`,
        activeWorkers: liveCount(ctx),
      });
      if (!aborted.refused) {
        raiseSessionAlert(
          ctx,
          {
            key: `session-aborted-${state.session.since}`,
            kind: "session-aborted",
            headline: `The session stopped: #${n} failed and \`errorStrategy\` is abort`,
            what: reason,
            todo: `Look at #${n}; \`/autopilot retry #${n}\` and \`/autopilot start\` go on.`,
          },
          [n],
        );
      }
    }
  }
  if (state.consecutiveFailures >= config.consecutiveErrorThreshold && state.session.status === "running") {
    const issues = [...state.failedInARow];
    const paused = sessionEvent(ctx, {
      type: "consecutiveFailures",
      count: state.consecutiveFailures,
      threshold: config.consecutiveErrorThreshold,
      issues,
      activeWorkers: liveCount(ctx),
    });
    if (!paused.refused) {
      raiseSessionAlert(
        ctx,
        {
          key: `consecutive-failures-${state.session.since}`,
          kind: "consecutive-failures",
          headline: `The session paused: ${counted(issues.length, "task")} failed in a row`,
          what: `${issues.map((i) => `#${i}`).join(", ")} failed one after another (\`consecutiveErrorThreshold\`: ${config.consecutiveErrorThreshold}); the last: ${reason}`,
          todo: "Look at the failed tasks for a common cause (the quality commands, the agent's setup, its credentials), fix it, then `/autopilot resume`.",
        },
        issues,
      );
    }
  }
}

/** A run that ended without a result (or never appeared): back to ready with the retry count raised. */
export function crash(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  why: string,
  kind: "crash" | "lost",
): void {
  record.handled = record.dispatchId;
  record.result = kind;
  record.cancelAt = undefined;
  const consecutive = trackConsecutiveFailures(
    ctx.state.consecutiveFailures,
    "failed",
    ctx.config.consecutiveErrorThreshold,
  );
  countFailure(ctx, n, "failure", consecutive.count);
  note(ctx, `#${n}: ${why}`);
  // A crash always gets the retry treatment whatever the error strategy (the task goes back to the pool),
  // bounded by maxRetries.
  failTask(ctx, n, record, why, "retry");
}

function countFailure(ctx: Reconciling, n: number, kind: "reset" | "failure" | "none", count: number): void {
  const state = ctx.state;
  if (kind === "reset") {
    state.consecutiveFailures = 0;
    state.failedInARow = [];
  } else if (kind === "failure") {
    state.consecutiveFailures = count;
    state.failedInARow = [...state.failedInARow, n].slice(-50);
  }
}

/**
 * Adds a worker's spend to its task. Iterations are the job's own; tokens and cost are the task's totals (the
 * worker starts from what the task's result comment said, its earlier attempts included), so the record takes
 * them as they are. A worker that found no earlier result reports less than the record holds: all of it is new.
 */
export function accountResult(record: TaskRecord, result: WorkerResult): void {
  record.iterations += result.iterations;
  record.tokensIn = taskTotal(record.tokensIn, result.tokens.input);
  record.tokensOut = taskTotal(record.tokensOut, result.tokens.output);
  record.costUsd = round4(taskTotal(record.costUsd, result.costUsd));
  // The reviewer's share is the job's own (the worker carries no earlier job's).
  if (result.review) record.reviewUsd = round4((record.reviewUsd ?? 0) + result.review.costUsd);
}

function taskTotal(recorded: number, reported: number): number {
  return reported >= recorded ? reported : recorded + reported;
}
