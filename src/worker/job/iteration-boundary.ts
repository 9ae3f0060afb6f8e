/**
 * The checks between two agent runs: the job's wall clock, the task's budget, and the session's status on the
 * tracking issue (paused or stopped by a writer, or its budget spent), whose read also refreshes this worker's
 * share of the session budget.
 */
import type { WorkerRun } from "../worker-deps.js";
import { checkpoint } from "./commit.js";
import { finish } from "./ending.js";
import { errorMessage, type JobContext } from "./job-context.js";
import { sessionShareLeft, sessionWantsStop } from "./session-status.js";
import { spend } from "./spend.js";
import { taskBudgetExceeded } from "./task-budget.js";

/** Why the session wants the job to stop (its status), or null; a failed read only warns. */
async function sessionStop(ctx: JobContext): Promise<string | null> {
  if (ctx.inputs.trackingIssue === null) return null;
  try {
    const body = await ctx.deps.github.getIssueBody(ctx.inputs.trackingIssue);
    ctx.state.sessionLeft = sessionShareLeft(body, spend(ctx), ctx.config.maxParallel);
    const { stop, status } = sessionWantsStop(body, spend(ctx));
    return stop ? status : null;
  } catch (error) {
    ctx.warn(`could not read the session status: ${errorMessage(error)}`);
    return null;
  }
}

/** Iteration boundary: wall clock, budget, session status. A finished run when one of them ends the job. */
export async function stopAtBoundary(ctx: JobContext): Promise<WorkerRun | null> {
  const elapsed = ctx.now() - ctx.startedAt;
  if (elapsed >= ctx.config.timeoutMinutes * 60_000) {
    return finish(ctx, "timeout", `reached the wall-clock limit (${ctx.config.timeoutMinutes} min)`);
  }
  const budget = taskBudgetExceeded(ctx.config.budgets.task, ctx.state.result);
  if (budget) return finish(ctx, "budget_exceeded", budget);
  const pause = await sessionStop(ctx);
  if (pause) {
    await checkpoint(ctx, "pause");
    return finish(ctx, "paused", `session is ${pause}; work so far is committed and pushed`);
  }
  return null;
}
