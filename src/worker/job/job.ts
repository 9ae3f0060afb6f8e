/**
 * The worker's job, on one page (docs/ARCHITECTURE.md, "The route of one worker iteration"): claim the attempt,
 * prepare the task branch, propose a plan when the plan gate asks for one, then iterate — what writers said
 * meanwhile (steer), agent turn, commit, quality gate, outcome — until an iteration ends the job: done, blocked, needs a human, out of iterations,
 * time or budget, paused, or at a limit. Each step is a phase over one context (job-context.ts) and returns what
 * it learned here; no phase calls another. Every dependency (git, the agent process, the quality commands,
 * GitHub, the clock, sleeping) is passed in, so the whole job runs against fakes in tests.
 */
import { completionClaim } from "../../core/agent/completion-mode.js";
import { parseSignal } from "../../core/agent/signals.js";
import { type AutopilotConfig, DEFAULT_CONFIG } from "../../core/config/index.js";
import { signedPushRefusal } from "../../core/gates/signed-push-refusal.js";
import { workflowPushRefusal } from "../../core/gates/workflow-push-refusal.js";
import type { WorkerComment } from "../../github/worker-github-data.js";
import { SecretPushRefused } from "../checkout/push-guard.js";
import type { WorkerDeps, WorkerInputs, WorkerRun } from "../worker-deps.js";
import { spawnFailureText } from "./agent-failure-text.js";
import { agentError, agentExit, recoverPrimary, refusedHandback, runAgent } from "./agent-turn.js";
import { claim } from "./claim.js";
import { checkpoint, settlePush, readNewWork } from "./commit.js";
import { finish, handToPerson } from "./ending.js";
import { describeSignal } from "./iteration-signal.js";
import { stopAtBoundary } from "./iteration-boundary.js";
import { CancelledError, createJobContext, errorMessage, freshLoop, type JobContext } from "./job-context.js";
import { decide, endFor, publishPull, readyPull, recordAndPush } from "./outcome.js";
import { planStep, postPlan, startPlanning } from "./plan.js";
import { type Prepared, prepare } from "./prepare.js";
import { qualityGate } from "./quality-gate.js";
import { backToAuthor, reviewChange, reviewerFor } from "./review.js";
import { steer } from "./steer.js";
import { isSplitting, postSplit, startSplitting } from "./split.js";
import { appendNote, updateProgress } from "./report.js";
import { taskBudgetExceeded } from "./task-budget.js";

/** Runs the worker for one task attempt. Never throws for task outcomes; GitHub or git failures end as `failed`. */
export async function runWorker(
  inputs: WorkerInputs,
  config: AutopilotConfig,
  deps: WorkerDeps,
): Promise<WorkerRun> {
  return runJob(createJobContext(inputs, config, deps), null);
}

/** What a worker refusing to start still needs: GitHub (to claim the attempt and report), the clock, the log. */
type RefusalDeps = Pick<WorkerDeps, "github" | "clock" | "sleep" | "log" | "signal">;

/**
 * A worker that may not start (no configuration it may run under, src/worker/settings/worker-config.ts): it claims the
 * attempt and ends with `config_refused` and the reason, before any git, agent or quality command. The result
 * is written (not a silent exit) so the controller sees a refusal, not a crash counted against the task. The
 * defaults only shape the report here (the claim's staleness, the branch name shown); nothing runs under them.
 */
export async function refuseToStart(
  inputs: WorkerInputs,
  reason: string,
  deps: RefusalDeps,
): Promise<WorkerRun> {
  const unavailable = (what: string) =>
    new Proxy(
      {},
      {
        get() {
          throw new Error(`${what} is not available: the worker refused to start`);
        },
      },
    );
  const all: WorkerDeps = {
    ...deps,
    git: unavailable("git") as WorkerDeps["git"],
    agent: unavailable("the agent") as WorkerDeps["agent"],
    quality: unavailable("the quality commands") as WorkerDeps["quality"],
  };
  return runJob(createJobContext(inputs, DEFAULT_CONFIG, all), reason);
}

/** The sequence, and how an error that escapes it ends the job. `refusal` set: claim, then end `config_refused`. */
async function runJob(ctx: JobContext, refusal: string | null): Promise<WorkerRun> {
  try {
    const claimed = await claim(ctx);
    if ("ended" in claimed) return claimed.ended;
    if (refusal !== null) return await finish(ctx, "config_refused", refusal);
    await ctx.deps.afterClaim?.();
    const prepared = await prepare(ctx, claimed.claimed.comments, claimed.claimed.issue);
    if ("ended" in prepared) return prepared.ended;
    const plan = await planStep(ctx, claimed.claimed.comments);
    if (plan.step === "propose") {
      if (isSplitting(ctx)) await startSplitting(ctx, claimed.claimed.comments);
      else await startPlanning(ctx, claimed.claimed.comments, plan.why);
      return await planningRun(ctx, prepared);
    }
    return await workLoop(ctx, prepared, claimed.claimed.comments);
  } catch (error) {
    return endOnError(ctx, error);
  }
}

/**
 * One iteration after another until one of them ends the job. `comments` are the issue's as the claim read
 * them: the agent has them already, so steering skips them.
 */
async function workLoop(
  ctx: JobContext,
  { issue, feedback }: Prepared,
  comments: WorkerComment[],
): Promise<WorkerRun> {
  const { state, config } = ctx;
  const loop = freshLoop();
  const seen = new Set(comments.map((c) => c.id));
  const steering: WorkerComment[] = [];
  let reviewRounds = 0;
  for (;;) {
    ctx.checkCancelled();
    const stopped = await stopAtBoundary(ctx);
    if (stopped) return stopped;
    recoverPrimary(ctx, loop);
    const steered = await steer(ctx, seen, feedback.pull?.number ?? null);
    for (const id of steered.read) seen.add(id);
    steering.push(...steered.comments);

    const iteration = state.result.iterations + 1;
    const agent = ctx.agents[state.agentIndex]!;
    const { qualityFailures } = loop;
    const turn = { issue, iteration, agent, feedback, qualityFailures, steering, mode: "work" as const };
    const { run, headBefore } = await runAgent(ctx, turn);
    // The last iteration's push ran while the agent did: its failure is met here, before this turn's work.
    await settlePush(ctx);
    if (run.spawnError) {
      await checkpoint(ctx, "agent could not start");
      return finish(ctx, "failed", spawnFailureText(agent, run.spawnError));
    }
    const claim = completionClaim(parseSignal(run.output.finalMessage), config.completion);
    const signal = claim.signal;
    if (run.budgetStop) {
      // Stopped mid-run at its budget: what it wrote so far is kept, committed and pushed, and the job ends.
      state.result.iterations = iteration;
      await appendNote(ctx, iteration, agent.preset, signal, `stopped mid-run: ${run.budgetStop}`);
      await checkpoint(ctx, "budget spent");
      return finish(
        ctx,
        "budget_exceeded",
        `${run.budgetStop}; the agent was stopped mid-run and its work so far is committed and pushed`,
      );
    }
    const refused = await refusedHandback(ctx);
    if (refused) return refused;
    const limited = await agentError(ctx, run, signal, agent, loop);
    if (limited === "retry") continue;
    if (limited) return limited;

    // A real iteration happened.
    if (claim.ignored) ctx.warn(claim.ignored);
    loop.rateAttempt = 0;
    state.result.iterations = iteration;
    state.result.lastSignal = describeSignal(signal);
    const failed = await agentExit(ctx, run, signal, iteration, agent);
    if (failed) return failed;

    // Commit and push before anything else, so a killed job loses at most this iteration.
    const newWork = await readNewWork(ctx, headBefore);
    loop.iterationsWithoutCommit = newWork ? 0 : loop.iterationsWithoutCommit + 1;
    const gate = await qualityGate(ctx, iteration, signal);
    const decision = decide(ctx, iteration, signal, gate.outcome, loop);
    await recordAndPush(ctx, iteration, agent, signal, decision, gate.text);

    const reviewing = decision.outcome === "open_pr" && reviewerFor(ctx);
    if (reviewing) reviewRounds += 1;
    const ended = reviewing
      ? await reviewedPull(ctx, { issue, feedback }, reviewRounds)
      : await endFor(ctx, decision, signal, issue.title);
    if (ended) return ended;
    loop.qualityFailures = decision.feedQualityFailures ? state.quality.filter((q) => !q.passed) : [];
    await updateProgress(ctx);
    const after = taskBudgetExceeded(config.budgets.task, state.result);
    if (after) return finish(ctx, "budget_exceeded", after);
    // `iterationDelayMs`: spaces out the agent's runs (its API calls); a cancel ends the wait.
    if (config.iterationDelayMs > 0) await ctx.deps.sleep(config.iterationDelayMs, ctx.deps.signal);
  }
}

/**
 * A complete task's pull request through the reviewer (review.ts): opened, reviewed (review `round`), then ready,
 * handed to a person, or null: the loop goes on with the review as the author's feedback.
 */
async function reviewedPull(
  ctx: JobContext,
  { issue, feedback }: Pick<Prepared, "issue" | "feedback">,
  round: number,
): Promise<WorkerRun | null> {
  const published = await publishPull(ctx, issue.title);
  if ("ended" in published) return published.ended;
  const review = await reviewChange(ctx, issue, published.pull, round);
  if (review.kind === "ended") return review.run;
  if (review.kind === "ready") return readyPull(ctx, published, review.note);
  await backToAuthor(ctx, feedback, review.feedback);
  return null;
}

/**
 * A planning run (or a splitting run, split.ts): the agent runs once on the planning prompt (again after a
 * limit's wait or an agent switch);
 * the wall clock, the task budget and a paused or stopped session hold for it too.
 */
async function planningRun(ctx: JobContext, { issue, feedback }: Prepared): Promise<WorkerRun> {
  const loop = freshLoop();
  for (;;) {
    ctx.checkCancelled();
    const stopped = await stopAtBoundary(ctx);
    if (stopped) return stopped;
    const agent = ctx.agents[ctx.state.agentIndex]!;
    const turn = {
      issue,
      iteration: 1,
      agent,
      feedback,
      qualityFailures: [],
      steering: [],
      mode: isSplitting(ctx) ? ("split" as const) : ("plan" as const),
    };
    const { run, headBefore } = await runAgent(ctx, turn);
    if (run.spawnError) return finish(ctx, "failed", spawnFailureText(agent, run.spawnError));
    const signal = parseSignal(run.output.finalMessage);
    if (run.budgetStop)
      return finish(ctx, "budget_exceeded", `${run.budgetStop}; the planning run was stopped`);
    const limited = await agentError(ctx, run, signal, agent, loop);
    if (limited === "retry") continue;
    if (limited) return limited;
    return isSplitting(ctx) ? postSplit(ctx, run, headBefore) : postPlan(ctx, run, headBefore);
  }
}

/** An error that escaped the sequence: a refused push, a cancel, or a failure of GitHub or git. */
async function endOnError(ctx: JobContext, error: unknown): Promise<WorkerRun> {
  // Secret guard: nothing was pushed; the issue names the files and secrets, never a value.
  if (error instanceof SecretPushRefused) {
    const label = ctx.config.labels.needsHuman;
    await handToPerson(ctx, error.comment(ctx.inputs.issue, label), label, "report the refused push");
    return finish(ctx, "needs_human", error.message);
  }
  if (error instanceof CancelledError) {
    let kept = "work so far is committed and pushed";
    await checkpoint(ctx, "cancelled").catch((e) => {
      ctx.warn(`checkpoint failed: ${errorMessage(e)}`);
      // A refused push (a held secret in the change) leaves the work on the runner only: say so.
      kept =
        e instanceof SecretPushRefused
          ? `nothing was pushed: ${e.message}`
          : "the last checkpoint could not be committed or pushed";
    });
    return finish(ctx, "paused", `the job was cancelled; ${kept}`);
  }
  ctx.log.error(`worker failed: ${errorMessage(error)}`);
  const text = errorMessage(error);
  const refused = workflowPushRefusal(text, ctx.inputs.issue) ?? signedPushRefusal(text, ctx.inputs.issue);
  return finish(ctx, "failed", refused ?? `worker error: ${errorMessage(error)}`);
}
