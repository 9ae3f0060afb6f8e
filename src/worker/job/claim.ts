/**
 * The claim (docs/ARCHITECTURE.md, "Claim"): read the worker's own progress comment of the task, decide whether
 * this dispatch may take the attempt (claim-decision.ts), carry earlier attempts' spend, then write our running
 * marker and check that no concurrent run took the attempt meanwhile.
 */
import { jobSilenceLimitMs } from "../../core/agent/job-silence.js";
import type { WorkerComment, WorkerIssue } from "../../github/worker-github-data.js";
import type { WorkerRun } from "../worker-deps.js";
import { decideClaim } from "./claim-decision.js";
import { finishWithoutWriting } from "./ending.js";
import { type JobContext, stateLabels } from "./job-context.js";
import { claimRival, readProgress, writeProgressComment } from "./progress-claim.js";
import { progressBody } from "./report.js";
import { syncUsage } from "./spend.js";

/** What the claim learned: the issue's comments as read at the start, and the issue when the claim read it. */
interface Claimed {
  comments: WorkerComment[];
  /** The task issue as read right after the claim's write (the job's first read of it), when that happened. */
  issue: WorkerIssue | null;
}

/**
 * Takes the attempt. Returns the finished run when another dispatch holds it; otherwise what it read. Writes
 * `carried`, `progressCommentId`, and the result's `prNumber` and `startedAt` when an earlier marker has them.
 */
export async function claim(ctx: JobContext): Promise<{ ended: WorkerRun } | { claimed: Claimed }> {
  const { github } = ctx.deps;
  const { state, inputs } = ctx;
  const { comments, existing } = await readProgress(github, inputs.issue, ctx.log);
  const decision = decideClaim({
    existing: existing?.parsed ?? null,
    issue: inputs.issue,
    attempt: inputs.attempt,
    dispatchId: inputs.dispatchId,
    now: ctx.now(),
    // A live job updates its marker at least once per iteration (src/core/agent/job-silence.ts).
    staleAfterMs: jobSilenceLimitMs(ctx.config),
  });
  if (!decision.proceed) {
    ctx.log.info(`claimed elsewhere: ${decision.reason}`);
    return { ended: finishWithoutWriting(ctx, "claimed_elsewhere", decision.reason) };
  }
  ctx.log.info(`claim: ${decision.note}`);
  const previous = existing?.parsed;
  if (previous) {
    state.carried = {
      input: previous.tokens.input,
      output: previous.tokens.output,
      costUsd: previous.costUsd,
    };
    // A candidate's PR is its own (best of N): another candidate's is not carried into its result.
    if (previous.prNumber && !inputs.candidate) state.result.prNumber = previous.prNumber;
    // A re-run of the same dispatch reports the totals it had already reached, not twice.
    if (previous.dispatchId === inputs.dispatchId && previous.attempt === inputs.attempt) {
      state.carried = { input: 0, output: 0, costUsd: 0 };
      state.result.startedAt = previous.startedAt;
    }
  }
  syncUsage(ctx);

  if (ctx.config.dryRun) {
    ctx.log.info("dry run: the progress comment is not written");
    return { claimed: { comments, issue: null } };
  }
  const written = await writeProgressComment(
    github,
    inputs.issue,
    existing?.comment ?? null,
    progressBody(ctx),
  );
  // Known as soon as it exists, so a job that fails from here on still reports there.
  state.progressCommentId = written.commentId;
  const rival = await claimRival({ github, attempt: inputs, written, stateLabels: stateLabels(ctx) });
  if (rival.elsewhere) {
    state.progressCommentId = null;
    return { ended: finishWithoutWriting(ctx, "claimed_elsewhere", rival.elsewhere) };
  }
  return { claimed: { comments, issue: rival.issue } };
}
