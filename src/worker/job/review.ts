/**
 * The reviewer (`review` in the configuration; docs/WORKER.md, "The reviewer"): after the quality gate passed
 * and the pull request is opened, and before it counts as ready, a second agent reviews the change in the same
 * sandbox the author ran in. Its run keeps nothing: whatever it changes, commits included, is discarded
 * (`discardWork`) and nothing of it is pushed. Its verdict, validated (src/core/agent/review-verdict.ts), is
 * posted on the pull request as a review with line comments; "request changes" sends the work back to the
 * author with the review as feedback, up to `maxRounds` times, then a person decides. Its spend counts against
 * the task's budget like the author's.
 */
import { limitWait } from "../../core/agent/iteration.js";
import { PROGRESS_NOTES_PATH } from "../../core/agent/prompt.js";
import { buildReviewPrompt } from "../../core/agent/review-prompt.js";
import { REVIEWER_AUTHOR, reviewForAuthor, renderReview } from "../../core/agent/review-body.js";
import { parseReviewVerdict, type ReviewVerdict } from "../../core/agent/review-verdict.js";
import { agentLabel } from "../../core/config/index.js";
import { formatTokens, formatUsd } from "../../core/text/markdown.js";
import { counted } from "../../core/text/plural.js";
import { quoteInert } from "../../core/text/sanitize.js";
import type { ReviewFeedback, WorkerIssue, WorkerPull } from "../../github/worker-github-data.js";
import type { WorkerRun } from "../worker-deps.js";
import { priceRun } from "./agent-cost.js";
import { runErrorClass } from "./agent-error-class.js";
import { authFailureText, quotaFailureText } from "./agent-failure-text.js";
import type { AgentRunResult } from "./agent-iteration.js";
import { finish, handToPerson } from "./ending.js";
import type { TaskFeedback } from "./feedback.js";
import type { JobContext } from "./job-context.js";
import { addUsage, runCap } from "./spend.js";
import { recordAgentRun } from "./transcript.js";

/** What the review decided for the job. */
type ReviewOutcome =
  /** The pull request is ready: approved, or (`required: false`) a reviewer that gave no verdict, with why. */
  | { kind: "ready"; note: string }
  /** Back to the author with the review, as the next prompt's review feedback. */
  | { kind: "changes"; feedback: ReviewFeedback[] }
  | { kind: "ended"; run: WorkerRun };

/** Whether this job's pull request goes through the reviewer: one is configured, and it is the task's own PR. */
export function reviewerFor(ctx: JobContext): boolean {
  return ctx.config.review.agent !== null && !ctx.inputs.candidate && !ctx.config.dryRun;
}

/** Why a run gave no verdict, or null when it ended normally. */
function runFailure(run: AgentRunResult): string | null {
  if (run.spawnError) return `the reviewer could not start: ${run.spawnError}`;
  if (run.budgetStop) return `the reviewer was stopped at the budget: ${run.budgetStop}`;
  if (run.timedOut) return "the reviewer's run timed out";
  if (run.output.isError || (run.exitCode ?? 0) !== 0)
    return `the reviewer's run failed (exit code ${run.exitCode ?? `signal ${run.signal ?? "?"}`})`;
  return null;
}

/** The reviewer runs once on the change; what it changed is discarded, its spend counted. */
async function runReviewer(ctx: JobContext, issue: WorkerIssue, round: number): Promise<AgentRunResult> {
  const { git } = ctx.deps;
  const { config, state } = ctx;
  const reviewer = config.review.agent!;
  const base = state.setup!.base;
  const prompt = buildReviewPrompt({
    repo: ctx.inputs.repo,
    issue: { number: issue.number, title: issue.title, body: issue.body },
    branch: ctx.branch,
    base,
    diff: await git.diffFrom(base),
    round,
    maxRounds: config.review.maxRounds,
  });
  ctx.log.group(`review ${round}/${config.review.maxRounds}: running ${agentLabel(reviewer)}`);
  const run = await ctx.deps.agent({
    agent: reviewer,
    prompt,
    issue: ctx.inputs.issue,
    iteration: state.result.iterations,
    timeoutMs: config.iterationTimeoutMinutes * 60_000,
    cap: runCap(ctx),
    directory: null,
    ...(ctx.deps.signal ? { signal: ctx.deps.signal } : {}),
  });
  await recordAgentRun(ctx, {
    iteration: state.result.iterations,
    agent: `${reviewer.preset} (reviewer)`,
    prompt,
    result: run,
  });
  // Read-only: the repository as the worker left it, the reviewer's files and commits gone.
  if (await git.restoreConfig()) ctx.warn("the reviewer changed .git/config; it was restored");
  for (const note of await git.recoverBranch(ctx.branch)) ctx.warn(note);
  await git.discardWork();
  const priced = priceRun(run, reviewer, config.prices);
  addUsage(ctx, priced);
  const spent = state.review;
  spent.runs += 1;
  spent.tokens += priced.output.usage.input + priced.output.usage.output;
  spent.costUsd += priced.output.costUsd;
  state.result.review = { ...spent, costUsd: Math.round(spent.costUsd * 1e6) / 1e6 };
  ctx.checkCancelled();
  return run;
}

/** What a reviewer's run that ended on an error said of it (auth, quota, a limit), or null. */
function reviewerError(ctx: JobContext, run: AgentRunResult) {
  if (run.timedOut || run.spawnError || run.budgetStop) return null;
  if (!run.output.isError && (run.exitCode ?? 0) === 0) return null;
  return runErrorClass(ctx, run);
}

/**
 * The reviewer's run, again after a limit's wait while `rateLimit` leaves waits, as the author's is. A limit past
 * them ends the job `rate_limited` or `usage_limited` with its reset, so the controller resumes the task then
 * (the pull request is published, not yet ready); an authentication or quota failure ends it as the author's does.
 */
async function reviewerRun(
  ctx: JobContext,
  issue: WorkerIssue,
  round: number,
): Promise<{ run: AgentRunResult } | { ended: WorkerRun }> {
  const { rateLimit } = ctx.config;
  const reviewer = ctx.config.review.agent!;
  for (let attempt = 0; ; attempt++) {
    const run = await runReviewer(ctx, issue, round);
    const error = reviewerError(ctx, run);
    if (!error) return { run };
    if (error.kind === "auth")
      return { ended: await finish(ctx, "auth", authFailureText(reviewer, error.evidence)) };
    if (error.kind === "quota")
      return { ended: await finish(ctx, "quota", quotaFailureText(reviewer, error.evidence)) };
    const resetAt = error.resetAt ?? null;
    const wait = limitWait({ ...rateLimit, attempt, resetAt, now: ctx.now() });
    if (wait) {
      ctx.log.info(
        `the reviewer ${reviewer.preset}: ${error.kind}; waiting ${Math.round(wait.ms / 1000)} s (${wait.reason})`,
      );
      await ctx.deps.sleep(wait.ms, ctx.deps.signal);
      ctx.checkCancelled();
      continue;
    }
    const resume = resetAt ? new Date(resetAt).getTime() : ctx.now() + rateLimit.maxWaitMs;
    ctx.state.result.resumeAt = new Date(resume).toISOString();
    const outcome = error.kind === "usage_limit" ? "usage_limited" : "rate_limited";
    const why = `the reviewer ${reviewer.preset} is limited (${error.evidence ?? error.kind}); the review runs when the task resumes`;
    return { ended: await finish(ctx, outcome, why) };
  }
}

/** The reviewer's share of the task's spend in this job, for the job's reason (the totals already count it). */
function reviewerSpend(ctx: JobContext): string {
  const { runs, tokens, costUsd } = ctx.state.review;
  return `${counted(runs, "review")}; the reviewer's share: ${formatTokens(tokens)} tokens, ${formatUsd(costUsd)}`;
}

/** The task handed to a person, with the reason on the issue (the review itself is on the pull request). */
async function toPerson(
  ctx: JobContext,
  pull: WorkerPull,
  reason: string,
  quoted: string,
): Promise<ReviewOutcome> {
  const label = ctx.config.labels.needsHuman;
  const body = [
    `Autopilot's reviewer did not approve pull request #${pull.number}: ${reason}.`,
    ...(quoted ? ["", quoted] : []),
    "",
    `A person decides now: approve the pull request, or answer here and \`/autopilot retry #${ctx.inputs.issue}\`. The task is labeled \`${label}\`.`,
  ].join("\n");
  await handToPerson(ctx, body, label, "hand the review to a person");
  return {
    kind: "ended",
    run: await finish(ctx, "needs_human", `reviewer: ${reason} (${reviewerSpend(ctx)})`),
  };
}

/**
 * Review `round` (1-based) of the change on `pull`, whose head the job pushed (`result.headSha`): the reviewer's
 * run, its verdict posted, and what the job does next.
 */
export async function reviewChange(
  ctx: JobContext,
  issue: WorkerIssue,
  pull: WorkerPull,
  round: number,
): Promise<ReviewOutcome> {
  const { config, state } = ctx;
  const reviewer = agentLabel(config.review.agent!);
  const ran = await reviewerRun(ctx, issue, round);
  if ("ended" in ran) return { kind: "ended", run: ran.ended };
  const { run } = ran;
  const failed = runFailure(run);
  const parsed = failed ? { ok: false as const, error: failed } : parseReviewVerdict(run.output.finalMessage);
  if (!parsed.ok) {
    if (config.review.required) return toPerson(ctx, pull, `it gave no verdict (${parsed.error})`, "");
    ctx.warn(`${parsed.error}; the review is advice (review.required is false): the pull request is ready`);
    return { kind: "ready", note: `the reviewer gave no verdict (${reviewerSpend(ctx)})` };
  }
  const verdict: ReviewVerdict = parsed.verdict;
  const head = state.result.headSha ?? (await ctx.deps.git.headSha());
  const posted = renderReview({
    verdict,
    reviewer,
    round,
    maxRounds: config.review.maxRounds,
    head,
    diff: await ctx.deps.git.diffFrom(state.setup!.base),
  });
  await ctx.deps.github.postReview(pull.number, { commitId: head, ...posted });
  ctx.log.info(`reviewer ${reviewer}: ${verdict.verdict} (${verdict.comments.length} line comments)`);
  if (verdict.verdict === "approve")
    return { kind: "ready", note: `the reviewer approved it (${reviewerSpend(ctx)})` };
  const quoted = verdict.summary ? quoteInert(verdict.summary, 2_000) : "";
  if (round >= config.review.maxRounds)
    return toPerson(
      ctx,
      pull,
      `it asked for changes in ${round} review${round > 1 ? "s" : ""}, the most \`review.maxRounds\` allows`,
      quoted,
    );
  // The author has no iteration left to make the change in (`maxIterations`).
  if (state.result.iterations >= config.maxIterations)
    return toPerson(
      ctx,
      pull,
      `it asked for changes after the last iteration (\`maxIterations\` ${config.maxIterations})`,
      quoted,
    );
  const createdAt = new Date(ctx.now()).toISOString();
  return {
    kind: "changes",
    feedback: reviewForAuthor(verdict, reviewer).map((item) => ({
      kind: item.path ? ("review_comment" as const) : ("review" as const),
      authorType: "Bot",
      state: "CHANGES_REQUESTED",
      createdAt,
      ...item,
    })),
  };
}

/** Whether an item of the feedback is the reviewer's (reviewChange made it), not a person's. */
function fromReviewer(item: ReviewFeedback): boolean {
  return item.authorType === "Bot" && (item.author ?? "").startsWith(REVIEWER_AUTHOR);
}

/**
 * Back to the author after "request changes": the newest review replaces the reviewer's earlier one in what the
 * next prompt shows (people's reviews stay), and the progress notes the pull request set aside come back from
 * the branch's history, as a job resuming the branch restores them.
 */
export async function backToAuthor(
  ctx: JobContext,
  feedback: TaskFeedback,
  review: ReviewFeedback[],
): Promise<void> {
  feedback.reviews = [...feedback.reviews.filter((item) => !fromReviewer(item)), ...review];
  if (await ctx.deps.git.restoreDeletedFile(PROGRESS_NOTES_PATH))
    ctx.log.info("the reviewer asked for changes: the progress notes are back from the branch history");
}
