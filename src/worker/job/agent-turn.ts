/**
 * One agent turn: the prompt built, the agent run once in its sandbox, what it may have done to the worker's
 * repository undone and its spend counted; then how its run ended: a limit (wait, switch agents, or end), an
 * error that ends the job, a refused hand-back, or a real iteration.
 */
import { recordAgentRun } from "./transcript.js";
import { decideAgentExit } from "../../core/agent/agent-exit.js";
import { decideRateLimit, limitWait } from "../../core/agent/iteration.js";
import { unrecognisedLimitHint } from "../../core/agent/limit-hint.js";
import { primaryLimitLiftsAt, shouldRecoverPrimary } from "../../core/agent/primary-recovery.js";
import { buildPrompt } from "../../core/agent/prompt.js";
import type { Signal } from "../../core/agent/signals.js";
import type { AgentConfig } from "../../core/config/index.js";
import type { WorkerComment, WorkerIssue } from "../../github/worker-github-data.js";
import type { QualityCommandResult } from "../processes/quality.js";
import type { WorkerRun } from "../worker-deps.js";
import { priceRun } from "./agent-cost.js";
import { runErrorClass } from "./agent-error-class.js";
import { authFailureText, quotaFailureText } from "./agent-failure-text.js";
import type { AgentRunResult } from "./agent-iteration.js";
import { checkpoint } from "./commit.js";
import { finish } from "./ending.js";
import type { TaskFeedback } from "./feedback.js";
import { toIterationSignal } from "./iteration-signal.js";
import { CancelledError, type JobContext, type LoopState } from "./job-context.js";
import { readProgressNotes } from "./progress-notes.js";
import { appendNote } from "./report.js";
import { addUsage, runCap } from "./spend.js";
import { taskBudgetNote } from "./task-budget.js";

const LIMIT_WORDS: Record<string, string> = {
  rate_limit: "rate limited",
  usage_limit: "at its usage limit",
  overloaded: "overloaded",
};

/** What a turn is asked to do. */
interface TurnRequest {
  issue: WorkerIssue;
  iteration: number;
  agent: AgentConfig;
  feedback: TaskFeedback;
  qualityFailures: QualityCommandResult[];
  /** Writers' comments since the job started (steer.ts), oldest first. */
  steering: WorkerComment[];
  mode: "work" | "plan" | "split";
}

/** Back to the primary agent once the limit that moved the job to a fallback has lifted (`recoverPrimary`). */
export function recoverPrimary(ctx: JobContext, loop: LoopState): void {
  const { state } = ctx;
  const back = shouldRecoverPrimary({
    recoverPrimary: ctx.config.recoverPrimary,
    agentIndex: state.agentIndex,
    primaryLimitedUntil: state.primaryLimitedUntil,
    now: ctx.now(),
  });
  if (!back) return;
  const from = ctx.agents[state.agentIndex]!;
  ctx.warn(`${ctx.agents[0]!.preset}'s limit has lifted; back to it from ${from.preset} (recoverPrimary)`);
  state.agentIndex = 0;
  state.primaryLimitedUntil = null;
  state.agentFallback = null;
  // A primary still limited goes back to the fallback at once rather than waiting out its retries again.
  loop.rateAttempt = ctx.config.rateLimit.retries;
}

async function prompt(ctx: JobContext, turn: TurnRequest): Promise<string> {
  const { config, state } = ctx;
  const { issue, feedback } = turn;
  const budgetNote = taskBudgetNote(config.budgets.task, state.result);
  const workspace = state.workspace;
  return buildPrompt({
    repo: ctx.inputs.repo,
    issue: { number: issue.number, title: issue.title, body: issue.body },
    branch: ctx.branch,
    iteration: turn.iteration,
    maxIterations: config.maxIterations,
    humanAnswers: feedback.answers.map((c) => ({ author: c.author ?? "unknown", body: c.body })),
    steering: turn.steering.map((c) => ({ author: c.author ?? "unknown", body: c.body })),
    instructions: feedback.instructions.map((i) => ({ author: i.author, kind: i.kind, body: i.body })),
    reviewComments: feedback.reviews.map((r) => ({
      author: r.author ?? "unknown",
      body: r.line && r.path ? `(line ${r.line}) ${r.body}` : r.body,
      ...(r.path ? { path: r.path } : {}),
    })),
    failingChecks: feedback.checks.map((c) => ({
      name: c.name,
      summary: [`conclusion: ${c.conclusion}`, c.title, c.summary, c.text].filter(Boolean).join("\n"),
    })),
    qualityFailures: turn.qualityFailures.map((q) => ({ command: q.command, output: q.output })),
    progressNotes: await readProgressNotes(ctx.tree, (message) => ctx.warn(message)),
    ...(budgetNote ? { budgetNote } : {}),
    ...(workspace
      ? {
          workspaceNote:
            `This task belongs to the ${workspace.name} workspace${workspace.directory ? `, ${workspace.directory}: you start there` : ""}. ` +
            "A change runs the quality commands of each workspace whose files it touches, and the repository's " +
            "own only when it touches shared files: keep the change inside the workspace unless the task needs more.",
        }
      : {}),
    completion: config.completion,
    mode: turn.mode,
    ...(state.approvedPlan ? { approvedPlan: state.approvedPlan } : {}),
    ...(state.answeredPlan ? { answeredPlan: state.answeredPlan } : {}),
  });
}

/**
 * Runs the agent once on the prompt, then undoes what it may have done to the worker's repository and counts
 * what it spent. Returns its run and HEAD as it was before. Writes `commands` and `lastFinalMessage`.
 */
export async function runAgent(
  ctx: JobContext,
  turn: TurnRequest,
): Promise<{ run: AgentRunResult; headBefore: string }> {
  const { git } = ctx.deps;
  const { state, config } = ctx;
  const text = await prompt(ctx, turn);
  const headBefore = state.knownHead ?? (await git.headSha());
  // Each iteration's output folds under its own heading in the job log; `finish` ends the last one.
  ctx.log.group(`iteration ${turn.iteration}/${config.maxIterations}: running ${turn.agent.preset}`);
  const run = await ctx.deps.agent({
    agent: turn.agent,
    prompt: text,
    issue: ctx.inputs.issue,
    iteration: turn.iteration,
    timeoutMs: config.iterationTimeoutMinutes * 60_000,
    cap: runCap(ctx),
    directory: state.workspace?.directory ?? null,
    ...(ctx.deps.signal ? { signal: ctx.deps.signal } : {}),
  });
  await recordAgentRun(ctx, {
    iteration: turn.iteration,
    agent: turn.agent.preset,
    prompt: text,
    result: run,
  });
  for (const refused of run.refusedEnv) ctx.warn(`agent env: ${refused.name} not passed (${refused.why})`);
  if (run.directoryRefused) ctx.warn(run.directoryRefused);
  // The agent may have planted config, switched branches or left a rebase half done.
  if (await git.restoreConfig()) ctx.warn("the agent changed .git/config; it was restored");
  for (const note of await git.recoverBranch(ctx.branch)) ctx.warn(note);
  addUsage(ctx, priceRun(run, turn.agent, config.prices));
  state.commands.push(...run.output.commands);
  state.lastFinalMessage = run.output.finalMessage;
  ctx.checkCancelled();
  return { run, headBefore };
}

function classify(ctx: JobContext, run: AgentRunResult, signal: Signal) {
  if (run.timedOut || run.output.turnLimit) return null;
  if (!run.output.isError && signal.kind !== "none") return null;
  return runErrorClass(ctx, run);
}

/**
 * A failed run whose end looks like a limit the classifier does not know (src/core/agent/limit-hint.ts): "retry" after
 * a backoff while waits are left; null when the run counts as it is (a failure, or a real iteration).
 */
async function unrecognisedLimit(
  ctx: JobContext,
  run: AgentRunResult,
  signal: Signal,
  agent: AgentConfig,
  loop: LoopState,
): Promise<"retry" | null> {
  const failed = run.output.isError && !run.output.turnLimit && !run.timedOut && signal.kind === "none";
  if (!failed) return null;
  const hint = unrecognisedLimitHint(run.rawOutput);
  if (hint === null) return null;
  const { retries, baseMs, factor, maxWaitMs } = ctx.config.rateLimit;
  const wait = limitWait({ attempt: loop.rateAttempt, retries, baseMs, factor, maxWaitMs, now: ctx.now() });
  if (!wait) {
    ctx.warn(
      `${agent.preset} failed with what looks like a limit (${hint}); no wait left of ${retries}: counted as a failure`,
    );
    return null;
  }
  ctx.warn(
    `${agent.preset} failed with what looks like a limit (${hint}); waiting ${Math.round(wait.ms / 1000)} s (${wait.reason})`,
  );
  await checkpoint(ctx, "agent limit (unrecognised)");
  loop.rateAttempt++;
  await ctx.deps.sleep(wait.ms, ctx.deps.signal);
  return "retry";
}

/**
 * When the agent's output says it hit an error (auth, quota, a limit): the finished run, or "retry" after
 * waiting or switching to the next agent. Null: no such error, the iteration counts. Writes `agentIndex` and
 * `primaryLimitedUntil` on a switch.
 */
export async function agentError(
  ctx: JobContext,
  run: AgentRunResult,
  signal: Signal,
  agent: AgentConfig,
  loop: LoopState,
): Promise<WorkerRun | "retry" | null> {
  const { state, config } = ctx;
  const errorKind = classify(ctx, run, signal);
  if (!errorKind) return unrecognisedLimit(ctx, run, signal, agent, loop);
  const limited =
    errorKind.kind === "rate_limit" || errorKind.kind === "overloaded" || errorKind.kind === "usage_limit";
  await checkpoint(ctx, `agent ${errorKind.kind}`);
  if (errorKind.kind === "auth") return finish(ctx, "auth", authFailureText(agent, errorKind.evidence));
  if (errorKind.kind === "quota") return finish(ctx, "quota", quotaFailureText(agent, errorKind.evidence));
  if (!limited) return null;
  const decision = decideRateLimit({
    attempt: loop.rateAttempt,
    retries: config.rateLimit.retries,
    agentIndex: state.agentIndex,
    agentCount: ctx.agents.length,
    baseMs: config.rateLimit.baseMs,
    factor: config.rateLimit.factor,
    maxWaitMs: config.rateLimit.maxWaitMs,
    resetAt: errorKind.resetAt ?? null,
    now: ctx.now(),
  });
  if (decision.action === "wait") {
    ctx.log.info(
      `${agent.preset}: ${errorKind.kind}; waiting ${Math.round(decision.ms / 1000)} s (${decision.reason})`,
    );
    loop.rateAttempt++;
    await ctx.deps.sleep(decision.ms, ctx.deps.signal);
    return "retry";
  }
  if (decision.action === "switch_agent") {
    const next = ctx.agents[decision.next]!;
    ctx.warn(
      `${agent.preset} is ${LIMIT_WORDS[errorKind.kind]}; switching to ${next.preset} (${decision.reason})`,
    );
    if (state.agentIndex === 0)
      state.primaryLimitedUntil = primaryLimitLiftsAt(
        errorKind.resetAt,
        ctx.now(),
        config.rateLimit.maxWaitMs,
      );
    state.agentIndex = decision.next;
    state.agentFallback = {
      reason: `${agent.preset} is ${LIMIT_WORDS[errorKind.kind]}: ${decision.reason}`,
      from: agent.preset,
    };
    loop.rateAttempt = 0;
    return "retry";
  }
  state.result.resumeAt = decision.resumeAt;
  return finish(
    ctx,
    errorKind.kind === "usage_limit" ? "usage_limited" : "rate_limited",
    `${decision.reason} (${errorKind.evidence ?? errorKind.kind})`,
  );
}

/** How the agent's process ended (src/core/agent/agent-exit.ts): the finished run when that fails the job. */
export async function agentExit(
  ctx: JobContext,
  run: AgentRunResult,
  signal: Signal,
  iteration: number,
  agent: AgentConfig,
): Promise<WorkerRun | null> {
  const exit = decideAgentExit({
    exitCode: run.output.isError && !run.output.turnLimit ? (run.exitCode ?? 1) : 0,
    processSignal: run.timedOut ? null : run.signal,
    signal: toIterationSignal(signal),
    iterationTimedOut: run.timedOut,
    cancelled: ctx.deps.signal?.aborted ?? false,
  });
  // A cancelled job ends in the sequence (checkpoint, `paused`), as the table says.
  if (exit.action === "release") throw new CancelledError();
  if (exit.action === "fail") {
    await appendNote(ctx, iteration, agent.preset, signal, exit.reason);
    await checkpoint(ctx, "agent failed");
    const detail = run.output.errorText.split("\n").find((l) => l.trim());
    return finish(ctx, "failed", detail ? `${exit.reason}: ${detail.slice(0, 300)}` : exit.reason);
  }
  if (run.timedOut) {
    ctx.warn(
      `iteration ${iteration} hit the ${ctx.config.iterationTimeoutMinutes} min limit; its process tree was killed`,
    );
  }
  return null;
}

/**
 * The agent's work as its side handed it back was refused (a nested repository, a `.git` path, a link out of
 * the tree, an oversized file: src/core/gates/handback-rules.ts): nothing of it is committed or pushed, what
 * was committed before is, and the job ends naming each entry.
 */
export async function refusedHandback(ctx: JobContext): Promise<WorkerRun | null> {
  const { refused } = await ctx.deps.git.workState();
  if (refused.length === 0) return null;
  await checkpoint(ctx, "work refused");
  const shown =
    refused.slice(0, 10).join("; ") + (refused.length > 10 ? `; and ${refused.length - 10} more` : "");
  return finish(
    ctx,
    "failed",
    `the agent's work was refused, and nothing of this iteration is committed or pushed: ${shown}`,
  );
}
