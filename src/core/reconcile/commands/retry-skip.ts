/**
 * Retry and skip of one task, asked by a command or a ticked dashboard checkbox; a retry may raise the task's
 * own iteration limit (`--iterations M`).
 */
import { epicRefusal } from "../epic-pooling.js";
import type { TaskRecord } from "../../dashboard/index.js";
import { MERGE_REFUSAL_CAP } from "../../gates/merge-refusal.js";
import { transitionTask } from "../../tasks/task.js";
import { note, type Reconciling, taskRecord } from "../context.js";
import { retire } from "../runs/task-exit.js";
import { setStatus, statusOf } from "../task-labels.js";
import { cancelRun, liveRunsOf } from "../runs/worker-runs.js";

export interface TaskCommandOutcome {
  ok: boolean;
  /** What to tell the person who asked. */
  message?: string;
}

export function retryTask(
  ctx: Reconciling,
  n: number,
  actor: string,
  iterations: number | null = null,
): TaskCommandOutcome {
  const issue = ctx.issues.get(n);
  if (!issue) return { ok: false, message: `#${n} is not an open issue Autopilot can see.` };
  if (issue.state === "closed") return { ok: false, message: `#${n} is closed; reopen it first.` };
  const status = statusOf(ctx, n);
  const record = ctx.state.tasks[n];
  if (status === "ready" && record?.waitUntil && Date.parse(record.waitUntil) > ctx.nowMs) {
    record.waitUntil = undefined;
    if (iterations !== null) record.maxIterations = iterations;
    note(ctx, `#${n}: wait cleared by ${actor}`);
    return { ok: true };
  }
  if (status === null)
    return {
      ok: false,
      message:
        epicRefusal(ctx, n)?.concat(".") ??
        `#${n} is not an Autopilot task (it has no \`${ctx.config.labels.ready}\` label).`,
    };
  if (status === "review" && record?.merge) {
    // A merge GitHub refused (or that never got an answer): ask again now, with a fresh allowance of attempts.
    // No SHA on record: the old refusal no longer matches it, and the next reconcile asks at once.
    const attempts = record.merge.attempt ?? 0;
    record.merge = {
      sha: "",
      at: new Date(0).toISOString(),
      attempt: attempts,
      allowed: attempts + MERGE_REFUSAL_CAP,
    };
    // The limit is for the task's later workers (a feedback round of this PR): applied, and said so.
    if (iterations !== null) record.maxIterations = iterations;
    note(ctx, `#${n}: merge retry asked by ${actor}`);
    return iterations !== null
      ? {
          ok: true,
          message: `Asking GitHub to merge #${n}'s pull request again; any later worker of it stops after ${iterations} iterations (\`maxIterations\` for this task only).`,
        }
      : { ok: true };
  }
  const t = transitionTask(status, status === "skipped" ? { type: "reopen" } : { type: "retry" });
  if ("refused" in t) return { ok: false, message: `Cannot retry #${n}: ${t.refused}.` };
  const r = freshStart(ctx, n, t.retryDelta, `retried by @${actor}`);
  if (iterations !== null) r.maxIterations = iterations;
  const limit = iterations !== null ? ` with at most ${iterations} iterations` : "";
  note(ctx, `#${n}: retry by ${actor}${limit} (attempt ${r.attempt + 1} next)`);
  return iterations !== null
    ? {
        ok: true,
        message: `#${n} is back in the queue; its workers now stop after ${iterations} iterations (\`maxIterations\` for this task only).`,
      }
    : { ok: true };
}

/**
 * The task back in the queue as after a manual retry: counters, waits, merge and feedback reset, the last
 * result handled, status ready. Returns its record.
 */
export function freshStart(ctx: Reconciling, n: number, retryDelta: number, reason: string): TaskRecord {
  const r = taskRecord(ctx, n);
  r.retries += retryDelta;
  r.failures = 0;
  r.feedbackRounds = 0;
  r.feedbackSha = undefined;
  r.waitUntil = undefined;
  r.since = undefined;
  r.merge = undefined;
  r.cancelAt = undefined;
  r.notices = undefined;
  r.fixAsked = undefined;
  if (r.dispatchId) r.handled = r.dispatchId;
  r.result = "retry";
  r.reason = reason;
  ctx.state.recent = ctx.state.recent.filter((x) => x.issue !== n);
  setStatus(ctx, n, "ready");
  return r;
}

export function skipTask(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  const issue = ctx.issues.get(n);
  if (!issue) return { ok: false, message: `#${n} is not an open issue Autopilot can see.` };
  const status = statusOf(ctx, n);
  if (status === null)
    return { ok: false, message: epicRefusal(ctx, n)?.concat(".") ?? `#${n} is not an Autopilot task.` };
  const t = transitionTask(status, { type: "skip" });
  if ("refused" in t) return { ok: false, message: `Cannot skip #${n}: ${t.refused}.` };
  for (const run of liveRunsOf(ctx, n)) cancelRun(ctx, run, n, "skipped");
  setStatus(ctx, n, "skipped");
  retire(ctx, n, "skipped", null);
  note(ctx, `#${n}: skipped by ${actor}`);
  return {
    ok: true,
    message: `Skipped #${n}: Autopilot leaves it alone now (label \`${ctx.config.labels.exclude}\`). To bring it back, run \`/autopilot retry #${n}\`.`,
  };
}
