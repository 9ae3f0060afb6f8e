/**
 * `budgetsNeverExceeded`, the budgets' invariant (docs/CONFIGURATION.md `budgets`, docs/WORKER.md steps 6 and 7),
 * over the spend the workers reported: each task's totals in its progress comment's result marker (the task's
 * earlier attempts included, src/worker/job/claim.ts), the session's the sum of them.
 *
 * - At each dispatch: none once the session's budget was spent as the dispatching reconcile read GitHub (the
 *   controller pauses the session then, src/core/reconcile/session-end.ts `checkBudget`); none of a task whose
 *   own budget was spent, unless a writer asked for it since (`/autopilot retry`, `fix`, …, the ready label) or
 *   it is the next candidate of a best-of round.
 * - When a worker stops at an iteration boundary for the session's budget: the workers had reported the budget
 *   spent. The marker the controller publishes says what is left after what it counted of each task; a count that
 *   misses a task's earlier attempts makes its worker take them off twice, stop, and be dispatched again, round
 *   and round (sandbox/simulation/fixed/retry-double-counted-1.yml).
 * - At the end: no task and no session spent past its budget by more than docs/WORKER.md allows, one API call
 *   past the cap for each run stopped at its cap (the call that reached it).
 *
 * Iteration limits are the controller's part in `iterationLimitByWritersWord` (sim-invariants.ts): the simulated
 * worker never runs more iterations than its job was given.
 */
import type { AutopilotConfig } from "../../src/core/config/index.js";
import { parseWorkerResult } from "../../src/core/tasks/worker-result.js";
import type { SimObservation, Violation } from "./sim-invariants.js";
import type { SimDispatch } from "./sim-worker.js";

type Budgets = AutopilotConfig["budgets"];

/** The spend the workers reported, in tokens: per task (its totals) and in all, and when each task's last changed. */
export interface ReportedSpend {
  total: number;
  byIssue: Map<number, { tokens: number; at: number }>;
}

/** What the workers' result markers say now. */
export function reportedSpend(o: SimObservation): ReportedSpend {
  const byIssue = new Map<number, { tokens: number; at: number }>();
  let total = 0;
  for (const comment of o.store.listComments(o.repo)) {
    if (comment.user.toLowerCase() !== o.bot.toLowerCase()) continue;
    const result = parseWorkerResult(comment.body);
    if (!result || byIssue.has(comment.issueNumber)) continue;
    const tokens = result.tokens.input + result.tokens.output;
    byIssue.set(comment.issueNumber, { tokens, at: Date.parse(result.updatedAt) });
    total += tokens;
  }
  return { total, byIssue };
}

/** At a dispatch: `read` is the spend reported when the reconcile that dispatched read GitHub. */
export function budgetsNeverExceededAtDispatch(
  o: SimObservation,
  dispatch: SimDispatch,
  budgets: Budgets,
  read: ReportedSpend,
  /** False once the controller rebuilt its state: the session's count started again there (docs/WORKER.md). */
  sessionCounted: boolean,
): Violation[] {
  const found: Violation[] = [];
  const session = budgets.session.tokens;
  if (session !== null && sessionCounted && read.total >= session)
    found.push({
      invariant: "budgetsNeverExceeded",
      atSeconds: o.elapsed(),
      detail: `#${dispatch.issue} dispatched (${dispatch.dispatchId}) though the session had used ${read.total} tokens of its ${session} when the reconcile read GitHub`,
    });
  const task = budgets.task.tokens;
  const spent = read.byIssue.get(dispatch.issue);
  // A best-of round goes on after a candidate spent the task's budget: the next candidate gets what is left and
  // ends at once (docs/CONTROLLER.md "Best of N", Costs); the controller leaves the task budget to the worker.
  const inRound = dispatch.candidateNumber !== null;
  if (
    task !== null &&
    spent &&
    spent.tokens >= task &&
    !inRound &&
    !writerAskedSince(o, dispatch.issue, spent.at)
  )
    found.push({
      invariant: "budgetsNeverExceeded",
      atSeconds: o.elapsed(),
      detail: `#${dispatch.issue} dispatched (${dispatch.dispatchId}) though it had used ${spent.tokens} tokens of its budget of ${task}, and no writer asked for it since`,
    });
  return found;
}

/** A worker stopped for the session's budget at an iteration boundary (its own totals already reported). */
export function sessionBudgetStopOnlyWhenSpent(
  o: SimObservation,
  dispatch: SimDispatch,
  budgets: Budgets,
): Violation[] {
  const session = budgets.session.tokens;
  const total = reportedSpend(o).total;
  return session !== null && total < session
    ? [
        {
          invariant: "budgetsNeverExceeded",
          atSeconds: o.elapsed(),
          detail: `#${dispatch.issue}'s worker (${dispatch.dispatchId}) stopped for the session's budget with ${total} of its ${session} tokens used`,
        },
      ]
    : [];
}

/**
 * A writer's word for the task after `sinceMs`: a command that asks for work on it (`retry`, `run`, `fix`,
 * `follow-up`, `approve`), on its issue or naming it, or the ready label. Its worker then finds the budget spent
 * and ends at once (the task's totals carry over): wasted, but asked for by a person who may write.
 */
function writerAskedSince(o: SimObservation, issue: number, sinceMs: number): boolean {
  const retried = o.store.listComments(o.repo).some((c) => {
    if (!o.writers.has(c.user.toLowerCase()) || c.createdAt.getTime() < sinceMs) return false;
    const m = /^\/autopilot (?:retry|run|fix|follow-up|approve)(?: #(\d+))?\b/im.exec(c.body);
    return m !== null && (m[1] ? Number(m[1]) : c.issueNumber) === issue;
  });
  const labeled = !!o.store
    .getIssue(o.repo, issue)
    ?.events.some(
      (e) =>
        e.event === "labeled" &&
        e.label?.name === "autopilot:ready" &&
        o.writers.has(e.actor.toLowerCase()) &&
        e.createdAt.getTime() >= sinceMs,
    );
  return retried || labeled;
}

/** Once the world has run its course: no task or session spent past its budget by more than the docs allow. */
export function budgetsNeverExceededAtEnd(
  o: SimObservation,
  budgets: Budgets,
  /** Whether docs/WORKER.md promises the session's bound here: one worker at a time, the state never rebuilt. */
  sessionBound: boolean,
): Violation[] {
  const found: Violation[] = [];
  const spend = reportedSpend(o);
  const overrun = (runs: SimDispatch[]) => runs.reduce((sum, d) => sum + d.overrun, 0);
  const session = budgets.session.tokens;
  // Workers side by side take their shares of what the dashboard said was left when each read it, and together
  // can pass it; a rebuilt state counts from its rebuild (docs/WORKER.md, "Budgets").
  if (session !== null && sessionBound && spend.total > session + overrun(o.dispatches))
    found.push({
      invariant: "budgetsNeverExceeded",
      atSeconds: o.elapsed(),
      detail: `the session used ${spend.total} tokens, past its budget of ${session} by more than the ${overrun(o.dispatches)} of the calls that crossed a run's cap`,
    });
  const task = budgets.task.tokens;
  if (task === null) return found;
  for (const [issue, { tokens }] of spend.byIssue) {
    const allowed = task + overrun(o.dispatches.filter((d) => d.issue === issue));
    if (tokens > allowed)
      found.push({
        invariant: "budgetsNeverExceeded",
        atSeconds: o.elapsed(),
        detail: `#${issue} used ${tokens} tokens, past its budget of ${task} by more than the call that crossed its cap`,
      });
  }
  return found;
}
