/**
 * The plan gate (src/core/reconcile/commands/plan-approval.ts), on the worker's side: whether this job works
 * on an approved plan or proposes one; and after a planning run, the plan posted on the issue, which moves to
 * needs-human until a writer approves it or answers with changes. A planning run commits and pushes nothing
 * (the job never pushes, and the next job starts from a fresh clone).
 */
import {
  planComment,
  planDigest,
  planFromComment,
  planInComment,
  planOfFinalMessage,
} from "../../core/tasks/task-plan.js";
import type { WorkerComment } from "../../github/worker-github-data.js";
import type { WorkerRun } from "../worker-deps.js";
import type { AgentRunResult } from "./agent-iteration.js";
import { awaitApproval, finish } from "./ending.js";
import type { JobContext } from "./job-context.js";
import { ownComments } from "./own-comments.js";

/**
 * What the job does about the plan: `work` (with the approved plan in `approvedPlan`, when the task has one),
 * or `propose` a plan, with the reason when a plan was approved but is gone.
 */
export async function planStep(
  ctx: JobContext,
  comments: WorkerComment[],
): Promise<{ step: "work" } | { step: "propose"; why?: string }> {
  const { plan } = ctx.inputs;
  // A splitting run (split.ts) is a planning run too.
  if (plan === "propose" || plan === "split") return { step: "propose" };
  if (!plan) return { step: "work" };
  const own = await ownComments(ctx.deps.github, comments, ctx.log);
  const approved = [...own]
    .reverse()
    .reduce<string | null>((found, comment) => found ?? planFromComment(comment.body, plan), null);
  // Edited or deleted since its approval: what was approved is gone, so a new plan is proposed for approval.
  if (approved === null)
    return {
      step: "propose",
      why: "the approved plan's comment was edited or deleted since its approval: a new plan is proposed",
    };
  ctx.state.approvedPlan = approved;
  return { step: "work" };
}

/**
 * Makes this job a planning run (writes `planning` and `answeredPlan`): the last plan proposed for the task, for
 * the new run to revise, from Autopilot's own newest plan comment (by account id) whose text still has the
 * digest it names.
 */
export async function startPlanning(ctx: JobContext, comments: WorkerComment[], why?: string): Promise<void> {
  if (why) ctx.warn(why);
  ctx.state.planning = true;
  const own = await ownComments(ctx.deps.github, comments, ctx.log);
  ctx.state.answeredPlan = [...own]
    .reverse()
    .reduce<string | null>((found, comment) => found ?? planInComment(comment.body), null);
}

/** After the planning run: its plan posted and the job ended `needs_human`, or the reason it has none. */
export async function postPlan(ctx: JobContext, run: AgentRunResult, headBefore: string): Promise<WorkerRun> {
  const { state } = ctx;
  state.result.iterations += 1;
  // A run that timed out, was killed or failed has no plan to post, only partial or error text.
  if (run.timedOut || run.exitCode !== 0)
    return finish(
      ctx,
      "failed",
      `the planning run ${run.timedOut ? "timed out" : `failed (exit code ${run.exitCode ?? `signal ${run.signal ?? "?"}`})`}: no plan is posted`,
    );
  const work = await ctx.deps.git.workState();
  if (work.head !== headBefore || work.changed)
    ctx.warn("the planning run changed files: nothing of it is committed or pushed");
  const plan = planOfFinalMessage(run.output.finalMessage);
  if (!plan) return finish(ctx, "failed", "the planning run gave no plan (its final message was empty)");
  state.result.plan = { digest: planDigest(plan) };
  return awaitApproval(ctx, planComment(ctx.inputs.issue, plan), "plan", "plan proposed");
}
