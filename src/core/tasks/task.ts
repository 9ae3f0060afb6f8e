/**
 * The task's label state machine (the controller's side), as pure functions:
 *
 * - `transitionTask` — label-state transitions; `taskStatusFromLabels` / `labelForStatus` read and write
 *   the state as labels.
 * - `decideOnWorkerOutcome` — what a finished worker's outcome means for the task and its slot.
 * - `decideOnFailure`, `trackConsecutiveFailures` — error strategies retry / skip / abort and the
 *   consecutive-error pause.
 *
 * The worker's decisions inside a job are in iteration.ts and agent-exit.ts.
 */
import { exponentialBackoff } from "../time/backoff.js";
import type { WorkerOutcome } from "./worker-result.js";

// ---------------------------------------------------------------------------------------------------------
// Task statuses

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

// ---------------------------------------------------------------------------------------------------------
// Signal handling (controller side): what a finished worker's outcome means for the task and the slot

interface OutcomeDecision {
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

/** An outcome's status and note, and the flags that differ from a freed slot with nothing else to do. */
type OutcomeRow = Pick<OutcomeDecision, "status" | "note"> &
  Partial<Omit<OutcomeDecision, "status" | "note">>;

const OUTCOMES: Record<WorkerOutcome | "progress", OutcomeRow> = {
  progress: { status: "in-progress", note: "update the dashboard", freeSlot: false },
  complete: { status: "review", note: "PR opened; merges when its gates pass", queueMerge: true },
  blocked: { status: "blocked", note: "blocked; picking the next task", alert: true },
  needs_human: { status: "needs-human", note: "question posted; other tasks go on", alert: true },
  timeout: { status: "timeout", note: "timed out (not a failure); branch kept", alert: true },
  stuck: { status: "failed", note: "stuck: no new commits", alert: true, failure: true },
  contradiction: {
    status: "failed",
    note: "COMPLETE kept contradicting failing gates",
    alert: true,
    failure: true,
  },
  failed: { status: "failed", note: "agent failed", alert: true, failure: true },
  paused: {
    status: "in-progress",
    note: "checkpointed for the pause; resumes from its branch",
    resumeLater: true,
  },
  rate_limited: {
    status: "in-progress",
    note: "agents limited; resumes after the reset time",
    resumeLater: true,
    alert: true,
  },
  usage_limited: {
    status: "in-progress",
    note: "agents limited; resumes after the reset time",
    resumeLater: true,
    alert: true,
  },
  budget_exceeded: { status: "failed", note: "task budget exceeded", alert: true },
  auth: { status: "failed", note: "agent authentication failed", alert: true, failure: true },
  quota: { status: "failed", note: "agent quota exhausted", alert: true, failure: true },
  claimed_elsewhere: { status: "in-progress", note: "another worker holds the task", freeSlot: true },
  // The worker found no configuration with the digest the controller decided with (a new one was pushed
  // between dispatch and checkout, say): no agent ran and nothing of the task was tried, so it is not the
  // task's failure. It goes back to ready and is dispatched again with the digest the controller has then.
  config_refused: {
    status: "in-progress",
    note: "the configuration changed before the worker started; dispatched again",
    resumeLater: true,
  },
};

/**
 * What a finished worker's outcome means, for every `WorkerOutcome`:
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
  const { status, note, ...flags } = OUTCOMES[outcome];
  return {
    status,
    freeSlot: true,
    queueMerge: false,
    alert: false,
    failure: false,
    resumeLater: false,
    note,
    ...flags,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Error strategies

type FailureStrategy = "retry" | "skip" | "abort";

interface FailureInput {
  strategy: FailureStrategy;
  /** 1-based number of the attempt that just failed. */
  attempt: number;
  /** Retries allowed after the first attempt (so at most 1 + maxRetries attempts). */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

type FailureDecision =
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

interface ConsecutiveFailures {
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

type TaskTransition =
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
  // One pass over the issue's labels (this runs for every open issue, several times per reconcile): the
  // exclude label wins, then the earliest status of STATUS_ORDER among the labels.
  const lowered = loweredNames(names);
  let best = STATUS_ORDER.length;
  for (const label of issue.labels) {
    const l = label.toLowerCase();
    if (lowered.exclude !== null && l === lowered.exclude) return "skipped";
    for (let i = 0; i < best; i++) if (lowered.order[i] === l) best = i;
  }
  return best < STATUS_ORDER.length ? STATUS_ORDER[best]![1] : null;
}

/** Which state label wins when an issue carries several: the first of these it has. */
const STATUS_ORDER: readonly [keyof TaskLabelNames, TaskStatus][] = [
  ["needsHuman", "needs-human"],
  ["blocked", "blocked"],
  ["failed", "failed"],
  ["timeout", "timeout"],
  ["review", "review"],
  ["inProgress", "in-progress"],
  ["ready", "ready"],
];

interface LoweredNames {
  /** The names these were made from (a names object changed since is noticed and lowered again). */
  source: TaskLabelNames;
  exclude: string | null;
  order: (string | null)[];
}

const LOWERED = new WeakMap<TaskLabelNames, LoweredNames>();

/** The label names in lower case, in STATUS_ORDER (an empty name matches nothing). */
function loweredNames(names: TaskLabelNames): LoweredNames {
  const known = LOWERED.get(names);
  if (known && known.source.exclude === names.exclude) {
    let same = true;
    for (const [key] of STATUS_ORDER) if (known.source[key] !== names[key]) same = false;
    if (same) return known;
  }
  const lower = (l: string | undefined) => (l ? l.toLowerCase() : null);
  const lowered = {
    source: { ...names },
    exclude: lower(names.exclude),
    order: STATUS_ORDER.map(([key]) => lower(names[key])),
  };
  LOWERED.set(names, lowered);
  return lowered;
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
