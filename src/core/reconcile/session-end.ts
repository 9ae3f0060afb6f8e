/** The session phases around the pool: the budget check before it, checkpointing and completion after it. */
import type { Effect } from "../effects.js";
import { sessionOverBudget, sessionSpend } from "../session/session-budget.js";
import type { Reconciling } from "./context.js";
import { sessionEvent } from "./session-events.js";
import { statusOf } from "./task-labels.js";
import { liveCount } from "./runs/worker-runs.js";

/** A running session whose spend went over its budget stops dispatching. */
export function checkBudget(ctx: Reconciling): void {
  if (ctx.state.session.status !== "running") return;
  // Running workers' reported spend counts too (src/core/session/session-budget.ts).
  const used = sessionSpend(ctx.state, ctx.results.values()).total;
  const over = sessionOverBudget(ctx.config.budgets.session, used);
  if (over) sessionEvent(ctx, { type: "budgetExhausted", detail: over, activeWorkers: liveCount(ctx) });
}

export interface SessionEnd {
  /** The session completed in this reconcile: the history is flushed now. */
  completed: boolean;
  /** The completion notice posted on the tracking issue, which the last history batch joins. */
  completionNotice: Extract<Effect, { type: "comment" }> | null;
}

/**
 * A pausing or stopping session with no live worker left is checkpointed; a running one with nothing live,
 * pending (`pending`: work that will need a slot later), in progress or in review has completed.
 */
export function finishSession(ctx: Reconciling, pending: boolean): SessionEnd {
  const s = ctx.state.session.status;
  const live = liveCount(ctx);
  if ((s === "pausing" || s === "stopping") && live === 0)
    sessionEvent(ctx, { type: "workersCheckpointed" }, true);
  const unfinished: SessionEnd = { completed: false, completionNotice: null };
  if (ctx.state.session.status !== "running" || live > 0 || pending) return unfinished;
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open") continue;
    const status = statusOf(ctx, n);
    if (status === "in-progress" || status === "review") return unfinished;
  }
  const outcome = sessionEvent(ctx, { type: "allTasksDone" });
  return { completed: true, completionNotice: outcome.completionNotice ?? null };
}
