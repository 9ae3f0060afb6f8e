/**
 * Session statistics (seeds 001/002 "Autopilot Statistics"): runtime; tasks completed / failed / blocked /
 * timeout / needs-human / remaining; iteration counts (total, average, fastest, slowest); merges; tokens and
 * cost. Pure: the caller passes `now`.
 */
import type { TaskStatus } from "../tasks/task.js";

/** The least a task record must say; the dashboard state and worker results both fit. */
export interface TaskRecordLike {
  issue: number;
  status: TaskStatus;
  /** Iterations used across all attempts. */
  iterations?: number;
  /** Attempts made (1 for the first dispatch). */
  attempts?: number;
  startedAt?: string | null;
  finishedAt?: string | null;
  /** The task's PR was merged. */
  merged?: boolean;
  /** Merge conflicts a worker resolved for this task. */
  conflictsResolved?: number;
  tokens?: { input: number; output: number } | null;
  costUsd?: number | null;
}

export interface IterationExtreme {
  issue: number;
  iterations: number;
}

export interface SessionStatistics {
  /** Milliseconds since the session started (or the earliest task start), minus paused time when given. */
  runtimeMs: number;
  tasks: {
    total: number;
    /** Done (closed / merged). */
    completed: number;
    failed: number;
    blocked: number;
    timeout: number;
    needsHuman: number;
    skipped: number;
    /** Not finished and not off-ramped: ready + in progress + in review. */
    remaining: number;
    ready: number;
    inProgress: number;
    review: number;
  };
  iterations: {
    total: number;
    /** Average over completed tasks; 0 when none. */
    average: number;
    /** Completed task with the fewest iterations. */
    fastest: IterationExtreme | null;
    /** Completed task with the most iterations. */
    slowest: IterationExtreme | null;
  };
  merges: {
    successful: number;
    /** PRs waiting in review. */
    pending: number;
    conflictsResolved: number;
  };
  tokens: { input: number; output: number; total: number };
  costUsd: number;
}

interface StatisticsOptions {
  /** When the session started (ISO or epoch ms); else the earliest task start, else 0 runtime. */
  sessionStartedAt?: string | number | Date | null;
  /** Time spent paused, subtracted from the runtime. */
  pausedMs?: number;
}

export function computeStatistics(
  tasks: readonly TaskRecordLike[],
  now: Date | number,
  options: StatisticsOptions = {},
): SessionStatistics {
  // One pass for every status's count, not one filtered copy per status.
  const counts = new Map<TaskStatus, number>();
  for (const t of tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
  const count = (status: TaskStatus) => counts.get(status) ?? 0;
  const completedTasks = tasks.filter((t) => t.status === "done");

  let total = 0;
  for (const t of tasks) total += finite(t.iterations);
  let fastest: IterationExtreme | null = null;
  let slowest: IterationExtreme | null = null;
  let completedIterations = 0;
  for (const t of completedTasks) {
    const it = finite(t.iterations);
    completedIterations += it;
    if (t.iterations == null) continue;
    if (!fastest || it < fastest.iterations || (it === fastest.iterations && t.issue < fastest.issue)) {
      fastest = { issue: t.issue, iterations: it };
    }
    if (!slowest || it > slowest.iterations || (it === slowest.iterations && t.issue < slowest.issue)) {
      slowest = { issue: t.issue, iterations: it };
    }
  }
  const withIterations = completedTasks.filter((t) => t.iterations != null).length;

  let input = 0;
  let output = 0;
  let cost = 0;
  let conflicts = 0;
  for (const t of tasks) {
    input += finite(t.tokens?.input);
    output += finite(t.tokens?.output);
    cost += finite(t.costUsd);
    conflicts += finite(t.conflictsResolved);
  }

  const nowMs = typeof now === "number" ? now : now.getTime();
  let start = toMs(options.sessionStartedAt);
  if (start === null) {
    const starts = tasks.map((t) => toMs(t.startedAt)).filter((x): x is number => x !== null);
    start = starts.length > 0 ? Math.min(...starts) : null;
  }
  const runtimeMs = start === null ? 0 : Math.max(0, nowMs - start - finite(options.pausedMs));

  const ready = count("ready");
  const inProgress = count("in-progress");
  const review = count("review");
  return {
    runtimeMs,
    tasks: {
      total: tasks.length,
      completed: completedTasks.length,
      failed: count("failed"),
      blocked: count("blocked"),
      timeout: count("timeout"),
      needsHuman: count("needs-human"),
      skipped: count("skipped"),
      remaining: ready + inProgress + review,
      ready,
      inProgress,
      review,
    },
    iterations: {
      total,
      average: withIterations > 0 ? round(completedIterations / withIterations, 2) : 0,
      fastest,
      slowest,
    },
    merges: {
      successful: completedTasks.filter((t) => t.merged).length,
      pending: review,
      conflictsResolved: conflicts,
    },
    tokens: { input, output, total: input + output },
    costUsd: round(cost, 4),
  };
}

function finite(x: number | null | undefined): number {
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function toMs(t: string | number | Date | null | undefined): number | null {
  if (t == null) return null;
  const ms = typeof t === "number" ? t : typeof t === "string" ? Date.parse(t) : t.getTime();
  return Number.isNaN(ms) ? null : ms;
}
