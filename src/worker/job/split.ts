/**
 * `/autopilot split #N` on the worker's side (src/core/reconcile/commands/split-command.ts): a splitting run is a
 * planning run (plan.ts: nothing committed or pushed) whose agent proposes sub-issues. Before the run, the
 * proposal maintainers answered, for the agent to revise; after it, the proposal validated and posted on the
 * issue (src/core/tasks/split-proposal.ts), and the job ended `needs_human` with the proposal's digest in its
 * result, until a writer approves it or answers with changes.
 */
import {
  splitAsText,
  splitComment,
  splitDigest,
  splitFromComment,
  splitOfFinalMessage,
} from "../../core/tasks/split-proposal.js";
import type { WorkerComment } from "../../github/worker-github-data.js";
import type { WorkerRun } from "../worker-deps.js";
import type { AgentRunResult } from "./agent-iteration.js";
import { awaitApproval, finish } from "./ending.js";
import type { JobContext } from "./job-context.js";
import { ownComments } from "./own-comments.js";

/** Whether this job is a splitting run (the `config` input's `plan: "split"`). */
export function isSplitting(ctx: JobContext): boolean {
  return ctx.inputs.plan === "split";
}

/**
 * Makes this job a splitting run (writes `planning` and `answeredPlan`): the last proposal, from Autopilot's own
 * newest split comment (by account id) whose data still has its digest, for the new run to revise.
 */
export async function startSplitting(ctx: JobContext, comments: WorkerComment[]): Promise<void> {
  ctx.state.planning = true;
  const own = await ownComments(ctx.deps.github, comments, ctx.log);
  const earlier = [...own]
    .reverse()
    .reduce<ReturnType<typeof splitFromComment>>((found, c) => found ?? splitFromComment(c.body, null), null);
  ctx.state.answeredPlan = earlier ? splitAsText(earlier) : null;
}

/** After the splitting run: its proposal posted and the job ended `needs_human`, or why there is none. */
export async function postSplit(
  ctx: JobContext,
  run: AgentRunResult,
  headBefore: string,
): Promise<WorkerRun> {
  const { state } = ctx;
  state.result.iterations += 1;
  if (run.timedOut || run.exitCode !== 0)
    return finish(
      ctx,
      "failed",
      `the splitting run ${run.timedOut ? "timed out" : `failed (exit code ${run.exitCode ?? `signal ${run.signal ?? "?"}`})`}: no sub-issues are proposed`,
    );
  const work = await ctx.deps.git.workState();
  if (work.head !== headBefore || work.changed)
    ctx.warn("the splitting run changed files: nothing of it is committed or pushed");
  const proposal = splitOfFinalMessage(run.output.finalMessage);
  if (!proposal.ok)
    return finish(ctx, "failed", `the splitting run proposed no usable sub-issues: ${proposal.problem}`);
  state.result.plan = { digest: splitDigest(proposal.items) };
  return awaitApproval(
    ctx,
    splitComment(ctx.inputs.issue, proposal.items),
    "proposed sub-issues",
    "sub-issues proposed",
  );
}
