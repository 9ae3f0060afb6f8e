/**
 * How a job ends: the result marker finished with its outcome and reason, the progress comment written once
 * more, and the run handed back to the caller; or the task handed to a person with a comment and a label.
 */
import type { WorkerOutcome } from "../../core/tasks/worker-result.js";
import { SecretPushRefused } from "../checkout/push-guard.js";
import type { WorkerRun } from "../worker-deps.js";
import { settlePush } from "./commit.js";
import { errorMessage, type JobContext } from "./job-context.js";
import { noteRefusedHosts, updateProgress } from "./report.js";

/** The run as the caller gets it: a copy of the result, and what the job measured. */
function snapshot(ctx: JobContext): WorkerRun {
  noteRefusedHosts(ctx);
  const { state } = ctx;
  return {
    result: structuredClone(state.result),
    quality: state.quality,
    warnings: state.warnings,
    elapsedMs: ctx.now() - ctx.startedAt,
    progressCommentId: state.progressCommentId,
    requests: ctx.deps.github.requestCount,
  };
}

/** Ends a job that must not write its progress comment (another run holds the attempt). */
export function finishWithoutWriting(ctx: JobContext, outcome: WorkerOutcome, reason: string): WorkerRun {
  const { result } = ctx.state;
  result.status = "finished";
  result.result = outcome;
  result.reason = reason;
  result.updatedAt = new Date(ctx.now()).toISOString();
  return snapshot(ctx);
}

/** Ends the job: the branch's head and commit count as git has them, the log's group closed, the comment written. */
export async function finish(
  ctx: JobContext,
  endingAs: WorkerOutcome,
  endingWhy: string,
): Promise<WorkerRun> {
  const { outcome, reason } = await settleBeforeEnd(ctx, endingAs, endingWhy);
  const { result, setup } = ctx.state;
  result.status = "finished";
  result.result = outcome;
  result.reason = reason;
  if (setup) {
    try {
      result.headSha = await ctx.deps.git.headSha();
      result.commits = await ctx.deps.git.countCommits(setup.base);
    } catch {
      /* keep what the last push recorded */
    }
  }
  ctx.log.endGroup();
  ctx.log.info(`result: ${outcome} — ${reason}`);
  await updateProgress(ctx);
  return snapshot(ctx);
}

/**
 * A push still running in the background (commit.ts) ends before the job does, and its failure is the job's: a
 * refused push goes to a person as at any other push (job.ts), any other failure fails the job.
 */
async function settleBeforeEnd(
  ctx: JobContext,
  outcome: WorkerOutcome,
  reason: string,
): Promise<{ outcome: WorkerOutcome; reason: string }> {
  try {
    await settlePush(ctx);
    return { outcome, reason };
  } catch (error) {
    // Secret guard: nothing was pushed; the issue names the files and secrets, never a value.
    if (error instanceof SecretPushRefused) {
      const label = ctx.config.labels.needsHuman;
      await handToPerson(ctx, error.comment(ctx.inputs.issue, label), label, "report the refused push");
      return { outcome: "needs_human", reason: error.message };
    }
    return {
      outcome: "failed",
      reason: `the last push failed: ${errorMessage(error)} (ending as ${outcome}: ${reason})`,
    };
  }
}

/**
 * Posts `body` on the issue and moves it from in-progress to `label` (not in a dry run); failing only warns.
 * `beforeLabel` runs between the two (the plan's result marker must name the plan before the label moves).
 */
export async function handToPerson(
  ctx: JobContext,
  body: string | null,
  label: string,
  what: string,
  /** Runs between the comment and the label move, given when GitHub says the comment was posted. */
  beforeLabel?: (postedAt: string | null) => Promise<void>,
): Promise<void> {
  // A candidate that stops leaves the round, not the task: the other candidates go on (best-of.ts).
  if (ctx.config.dryRun || ctx.inputs.candidate) return;
  try {
    const posted = body !== null ? await ctx.deps.github.createComment(ctx.inputs.issue, body) : null;
    await beforeLabel?.(posted?.createdAt ?? null);
    await ctx.deps.github.moveLabel(ctx.inputs.issue, label, ctx.config.labels.inProgress);
  } catch (error) {
    ctx.warn(`could not ${what}: ${errorMessage(error)}`);
  }
}

/**
 * A proposal a writer approves (a plan, proposed sub-issues) posted on the issue, which waits in needs-human.
 * The result marker names the proposal (the caller set `result.plan`) before the label moves: a writer's
 * approval given before the job ends is of this proposal (src/core/reconcile/commands/plan-approval.ts).
 */
export async function awaitApproval(
  ctx: JobContext,
  comment: string,
  what: string,
  proposed: string,
): Promise<WorkerRun> {
  await handToPerson(ctx, comment, ctx.config.labels.needsHuman, `post the ${what}`, (postedAt) => {
    // An approval written before the proposal was posted is not of it (src/core/tasks/task-plan.ts).
    const plan = ctx.state.result.plan;
    if (plan && postedAt) plan.postedAt = postedAt;
    return updateProgress(ctx);
  });
  return finish(
    ctx,
    "needs_human",
    `${proposed}: waiting for a writer's \`/autopilot approve #${ctx.inputs.issue}\` (or a comment with changes)`,
  );
}
