/**
 * One reconcile's decisions: `decide(snapshot, state, config, now) → { state', effects, log }`, pure.
 *
 * Level-triggered: everything is derived from what the snapshot shows and the little the state
 * remembers, so a duplicate or lost webhook changes nothing — deciding again on the world the effects
 * produced (or on the same snapshot with the resulting state) yields no new effects.
 *
 * The phases, in order (each a module of this folder):
 *  1. prepare: the state (rebuilt from GitHub when the tracking issue's state block is missing/corrupt), the
 *     labels believed, a controller `workflow_dispatch` start;
 *  2. comments (commands), then ticked dashboard checkboxes — all authorized against write access;
 *  3. closed issues, task text approval, worker results and runs (outcomes, crashes, stalled runs), answers
 *     to needs-human questions;
 *  4. the PR gates of tasks in review: merge, feedback to a worker, or wait (with one-time explanations); the
 *     branches of rolled-back unmerged work deleted until seen gone; the stale-branch sweep of ended tasks
 *     (`cleanup.staleBranchDays`);
 *  5. the budget, the splits (an approved `/autopilot split`'s sub-issues asked for until its parent is their
 *     epic, commands/split-command.ts), then the pool: readiness, scoring, the `/autopilot run` requests, dispatch into free slots
 *     (with `mode: auto`); then the epics: a writer's ready label on a parent pools its open sub-issues, their
 *     checklist on the parent, the parent closed when all are done (epic-pooling.ts);
 *  6. session bookkeeping (checkpointed pauses/stops, completion), then the alerts of tasks that entered an
 *     off-ramp (task-alerts.ts);
 *  7. history compaction and the tracking issue write (only when the dashboard changed).
 *
 * Effects come out in execution order, the tracking issue write first (tracking-write.ts says why).
 */
import { processAnswers } from "./answers.js";
import { statusOf } from "./task-labels.js";
import { processCheckboxes } from "./commands/checkboxes.js";
import { processDiscards } from "./commands/rollback.js";
import { processClosedIssues } from "./closed-issues.js";
import { processEpics } from "./epic-pooling.js";
import { processSplits } from "./commands/split-command.js";
import { processComments } from "./commands/comment-commands.js";
import type { DecideInput, Decision } from "./context.js";
import { checkDispatchLocks } from "./runs/dispatch-locks.js";
import { prepare } from "./prepare.js";
import { recordDiffGates } from "./pulls/pull-diff-verdicts.js";
import { processPool } from "./runs/pool-dispatch.js";
import { processReviews } from "./pulls/reviews.js";
import { checkBudget, finishSession } from "./session-end.js";
import { raiseTaskAlerts } from "./task-alerts.js";
import { timeOutPlanApprovals } from "./approval-timeouts.js";
import { sweepStaleBranches } from "./pulls/stale-branches.js";
import { processTaskText } from "./text-approval.js";
import { writeTrackingIssue } from "./tracking-write.js";
import { processWorkers } from "./runs/workers.js";
import { noteAgentSwitches } from "./runs/agent-switches.js";
import { processBestOf } from "./runs/best-of.js";
import { isDispatching } from "../session/session.js";

export type { DecideInput, Decision } from "./context.js";
export * from "./timing.js";

export function decide(input: DecideInput): Decision {
  const ctx = prepare(input);
  const { freshComments, statusRequests, runRequests } = processComments(ctx);
  const checkboxes = processCheckboxes(ctx);
  processClosedIssues(ctx);
  processTaskText(ctx);
  processWorkers(ctx);
  noteAgentSwitches(ctx);
  processAnswers(ctx, freshComments);
  recordDiffGates(ctx);
  processBestOf(ctx);
  const reviewLines = processReviews(ctx);
  processDiscards(ctx);
  sweepStaleBranches(ctx);
  checkDispatchLocks(ctx);
  checkBudget(ctx);
  processSplits(ctx);
  const pool = processPool(ctx, runRequests);
  pool.epics = processEpics(ctx, pool);
  const sessionEnd = finishSession(ctx, pool.pending);
  raiseTaskAlerts(ctx);
  timeOutPlanApprovals(ctx);
  const decision = writeTrackingIssue(ctx, {
    pool,
    reviewLines,
    statusRequests,
    checkboxesTicked: checkboxes.ticked,
    sessionEnd,
  });
  const withAlerts = {
    ...decision,
    ...(ctx.alerts.length > 0 ? { alerts: ctx.alerts } : {}),
    ...(ctx.events.length > 0 ? { events: ctx.events } : {}),
  };
  // The pool's pending work (ready tasks not started, or a wait for a time) moves on with time only where
  // Autopilot dispatches by itself: src/core/scheduling/repo-activity.ts.
  // A configuration held back (one that does not load, perhaps before any session started) counts too: its fix
  // arrives as a push, which the hosted app does not take for activity, so the next tick must still come
  // (scenario config-bad-first-run).
  const dispatchesItself =
    (ctx.config.mode === "auto" && isDispatching(ctx.state.session.status)) || input.configHeld === true;
  // Any task labeled ready counts, not only the pool's pending ones: a ready task the pool cannot start yet for a
  // reason only time ends (a dispatch a killed controller recorded but never sent, its lock until it expires)
  // looks from here like one waiting on people (scenario faults-controller-killed).
  const anyReady = [...ctx.issues].some(
    ([n, issue]) => issue.state === "open" && statusOf(ctx, n) === "ready",
  );
  const withPending =
    (pool.pending || anyReady) && dispatchesItself
      ? { ...withAlerts, readyWaitsOnAutopilot: true as const }
      : withAlerts;
  return ctx.wakes.length > 0 ? { ...withPending, wakeAtMs: Math.min(...ctx.wakes) } : withPending;
}
