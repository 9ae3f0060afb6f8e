/**
 * The worker's steps (docs/ARCHITECTURE.md, "Worker ↔ controller"): claim the attempt, check out the
 * task branch, then iterate — prompt, agent, commit + push, signal, completion matrix — until the task is done,
 * blocked, needs a human, runs out of iterations or time, is paused, or hits a limit. Every dependency (git,
 * the agent process, the quality commands, GitHub, the clock, sleeping) is passed in, so the whole loop runs
 * against fakes in tests.
 */
import { workflowPushRefusal } from "../core/gates/workflow-push-refusal.js";
import { classifyAgentOutput, withDefaultReset } from "../core/agent/classify.js";
import { completionClaim } from "../core/agent/completion-mode.js";
import { jobSilenceLimitMs } from "../core/agent/job-silence.js";
import { unrecognisedLimitHint } from "../core/agent/limit-hint.js";
import { primaryLimitLiftsAt, shouldRecoverPrimary } from "../core/agent/primary-recovery.js";
import { type AgentConfig, type AutopilotConfig, agentLabel, DEFAULT_CONFIG } from "../core/config/index.js";
import { candidateBranchName, taskBranchName } from "../core/contract.js";
import { matchHumanGate } from "../core/gates/human-gate.js";
import { buildPrompt, PROGRESS_NOTES_PATH } from "../core/agent/prompt.js";
import { parseSignal, type Signal } from "../core/agent/signals.js";
import {
  planComment,
  planDigest,
  planFromComment,
  planInComment,
  planOfFinalMessage,
} from "../core/tasks/task-plan.js";
import { ownComments } from "./job/own-comments.js";
import { decideAgentExit } from "../core/agent/agent-exit.js";
import {
  decideAfterIteration,
  decideRateLimit,
  limitWait,
  type IterationDecision,
  type QualityOutcome,
} from "../core/agent/iteration.js";
import { weakerIsolationText, type WorkerOutcome, type WorkerResult } from "../core/tasks/worker-result.js";
import type { WorkerComment, WorkerIssue } from "../github/worker-github-data.js";
import { priceRun } from "./job/agent-cost.js";
import type { AgentRunResult, RunCap } from "./job/agent-iteration.js";
import { decideClaim } from "./job/claim-decision.js";
import { readProgress, writeProgressClaim } from "./job/progress-claim.js";
import { taskTextRefusal } from "./job/task-text-check.js";
import type { BranchSetup } from "./checkout/private-git.js";
import type { QualityCommandResult } from "./processes/quality.js";
import { renderGateEscalationComment } from "./job/gate-escalation.js";
import { renderProgressComment, renderPullBody, renderQuestionComment } from "./job/progress-comment.js";
import { authFailureText, quotaFailureText, spawnFailureText } from "./job/agent-failure-text.js";
import { describeSignal, toIterationSignal } from "./job/iteration-signal.js";
import { appendProgressNote, ensureProgressNotes, readProgressNotes } from "./job/progress-notes.js";
import { taskBudgetExceeded, taskBudgetNote } from "./job/task-budget.js";
import { gatherFeedback, mergeConflictCheck, type TaskFeedback } from "./job/task-feedback.js";
import {
  type QualityGateOptions,
  SCRATCH_EXCLUDES,
  type WorkerDeps,
  type WorkerInputs,
  type WorkerLog,
  type WorkerRun,
} from "./worker-deps.js";
import { sessionShareLeft, sessionWantsStop } from "./job/session-status.js";
// Secret guard (push-guard.ts): the hook is the lines marked "Secret guard" below.
import { guardPush, SecretPushRefused } from "./checkout/push-guard.js";
import { qualityScopes, workspaceOfTask } from "../core/gates/workspace-scope.js";
export type {
  QualityRunner,
  WorkerDeps,
  WorkerGit,
  WorkerInputs,
  WorkerLog,
  WorkerRun,
} from "./worker-deps.js";

const LIMIT_WORDS: Record<string, string> = {
  rate_limit: "rate limited",
  usage_limit: "at its usage limit",
  overloaded: "overloaded",
};

/** What one iteration hands the next. */
/** A loop's state before its first iteration. */
function freshLoop(): LoopState {
  return { qualityFailures: [], ignoredCompletions: 0, iterationsWithoutCommit: 0, rateAttempt: 0 };
}

interface LoopState {
  /** The failed quality commands the next prompt shows the agent. */
  qualityFailures: QualityCommandResult[];
  ignoredCompletions: number;
  iterationsWithoutCommit: number;
  /**
   * Waits for the current agent's limits so far, classified or only looking like one (limit-hint.ts): one bound,
   * `rateLimit.retries` (back to 0 after a real iteration or a switch).
   */
  rateAttempt: number;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class CancelledError extends Error {
  constructor() {
    super("the job was cancelled");
  }
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
  return new WorkerLoop(inputs, DEFAULT_CONFIG, all, reason).run();
}

/** Runs the worker for one task attempt. Never throws for task outcomes; GitHub or git failures end as `failed`. */
export async function runWorker(
  inputs: WorkerInputs,
  config: AutopilotConfig,
  deps: WorkerDeps,
): Promise<WorkerRun> {
  return new WorkerLoop(inputs, config, deps).run();
}

class WorkerLoop {
  private readonly branch: string;
  private readonly startedAt: number;
  private readonly result: WorkerResult;
  private readonly warnings: string[] = [];
  private readonly commands: string[] = [];
  private readonly agents: AgentConfig[];
  private progressCommentId: number | null = null;
  private setup: BranchSetup | null = null;
  private quality: QualityCommandResult[] = [];
  private qualitySource: "configured" | "detected" | "none" = "none";
  /** Tokens and cost of earlier attempts (the task's budget counts them). */
  private carried = { input: 0, output: 0, costUsd: 0 };
  private jobUsage = { input: 0, output: 0, costUsd: 0 };
  private lastFinalMessage = "";
  /** The workspace the task's labels route it to (`workspaces[].label`), read with the task. */
  private workspace: AutopilotConfig["workspaces"][number] | null = null;
  /** This worker's share of the session budget's remainder, as last read at an iteration boundary. */
  private sessionLeft: { tokens: number | null; usd: number | null } | null = null;
  private agentIndex = 0;
  /** When the primary agent's limit lifts, once a limit moved the job to a fallback (src/core/agent/primary-recovery.ts). */
  private primaryLimitedUntil: number | null = null;
  /**
   * HEAD of the worker's repository as the worker last saw or made it: every commit it makes and every status it
   * reads sets it, so an iteration need not ask git where HEAD was before the agent ran. Null: ask.
   */
  private knownHead: string | null = null;

  constructor(
    private readonly inputs: WorkerInputs,
    private readonly config: AutopilotConfig,
    private readonly deps: WorkerDeps,
    /** Set: claim the attempt, then end with `config_refused` (refuseToStart). */
    private readonly refusal: string | null = null,
  ) {
    const candidate = inputs.candidate ? config.bestOf.candidates[inputs.candidate - 1] : undefined;
    this.branch = inputs.candidate
      ? candidateBranchName(config.branchPrefix, inputs.issue, inputs.candidate)
      : taskBranchName(config.branchPrefix, inputs.issue);
    this.startedAt = deps.clock();
    // A candidate of a best-of round is its one agent: a fallback would make it another candidate.
    this.agents = inputs.candidate
      ? candidate
        ? [candidate]
        : []
      : [config.agents.primary, ...config.agents.fallbacks];
    const now = new Date(this.startedAt).toISOString();
    const weaker = weakerIsolationText(config.isolation);
    this.result = {
      version: 1,
      issue: inputs.issue,
      attempt: inputs.attempt,
      dispatchId: inputs.dispatchId,
      status: "running",
      iterations: 0,
      maxIterations: config.maxIterations,
      commits: 0,
      branch: this.branch,
      tokens: { input: 0, output: 0 },
      costUsd: 0,
      humanGate: { fired: false, rules: [] },
      ...(weaker ? { agentAccess: weaker } : {}),
      ...(deps.network?.access ? { networkAccess: deps.network.access } : {}),
      startedAt: now,
      updatedAt: now,
    };
  }

  /** The agent's work tree, where the progress notes live and the quality commands are detected. */
  private get tree(): string {
    return this.deps.workTree ?? this.inputs.workspace;
  }

  private get log(): WorkerLog {
    return this.deps.log;
  }

  private now(): number {
    return this.deps.clock();
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.log.warning(message);
  }

  private checkCancelled(): void {
    if (this.deps.signal?.aborted) throw new CancelledError();
  }

  async run(): Promise<WorkerRun> {
    try {
      const claimed = await this.claim();
      if (claimed) return claimed;
      if (this.refusal !== null) return await this.finish("config_refused", this.refusal);
      await this.deps.afterClaim?.();
      return await this.iterate();
    } catch (error) {
      // Secret guard: nothing was pushed; the issue names the files and secrets, never a value.
      if (error instanceof SecretPushRefused) {
        const label = this.config.labels.needsHuman;
        await this.handToPerson(error.comment(this.inputs.issue, label), label, "report the refused push");
        return this.finish("needs_human", error.message);
      }
      if (error instanceof CancelledError) {
        let kept = "work so far is committed and pushed";
        await this.checkpoint("cancelled").catch((e) => {
          this.warn(`checkpoint failed: ${errorMessage(e)}`);
          // A refused push (a held secret in the change) leaves the work on the runner only: say so.
          kept =
            e instanceof SecretPushRefused
              ? `nothing was pushed: ${e.message}`
              : "the last checkpoint could not be committed or pushed";
        });
        return this.finish("paused", `the job was cancelled; ${kept}`);
      }
      this.log.error(`worker failed: ${errorMessage(error)}`);
      const refused = workflowPushRefusal(errorMessage(error), this.inputs.issue);
      return this.finish("failed", refused ?? `worker error: ${errorMessage(error)}`);
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // Claim

  /** Returns a finished run when another dispatch holds this attempt; otherwise writes our running marker. */
  private async claim(): Promise<WorkerRun | null> {
    const { github } = this.deps;
    const { comments, existing } = await readProgress(github, this.inputs.issue, this.log);
    const decision = decideClaim({
      existing: existing?.parsed ?? null,
      issue: this.inputs.issue,
      attempt: this.inputs.attempt,
      dispatchId: this.inputs.dispatchId,
      now: this.now(),
      // A live job updates its marker at least once per iteration (src/core/agent/job-silence.ts).
      staleAfterMs: jobSilenceLimitMs(this.config),
    });
    if (!decision.proceed) {
      this.log.info(`claimed elsewhere: ${decision.reason}`);
      return this.finishWithoutWriting("claimed_elsewhere", decision.reason);
    }
    this.log.info(`claim: ${decision.note}`);
    const previous = existing?.parsed;
    if (previous) {
      this.carried = {
        input: previous.tokens.input,
        output: previous.tokens.output,
        costUsd: previous.costUsd,
      };
      // A candidate's PR is its own (best of N): another candidate's is not carried into its result.
      if (previous.prNumber && !this.inputs.candidate) this.result.prNumber = previous.prNumber;
      // A re-run of the same dispatch reports the totals it had already reached, not twice.
      if (previous.dispatchId === this.inputs.dispatchId && previous.attempt === this.inputs.attempt) {
        this.carried = { input: 0, output: 0, costUsd: 0 };
        this.result.startedAt = previous.startedAt;
      }
    }
    this.syncUsage();
    this.commentsAtStart = comments;

    if (this.config.dryRun) {
      this.log.info("dry run: the progress comment is not written");
      return null;
    }
    const elsewhere = await writeProgressClaim({
      github,
      attempt: this.inputs,
      existing: existing?.comment ?? null,
      body: this.progressBody(),
      written: (commentId) => {
        this.progressCommentId = commentId;
      },
      stateLabels: this.stateLabels(),
      issueRead: (issue) => {
        this.issueAfterClaim = issue;
      },
    });
    if (elsewhere) return this.finishWithoutWriting("claimed_elsewhere", elsewhere);
    return null;
  }

  private commentsAtStart: WorkerComment[] = [];
  /** The plan a writer approved for the task (the plan gate), read from Autopilot's own comment. */
  private approvedPlan: string | null = null;
  /** A planning run's: the plan proposed before, which maintainers answered. */
  private answeredPlan: string | null = null;
  /** This job is a planning run (the plan gate): nothing the agent changes is committed or pushed. */
  private planning = false;

  /** The labels the job may move the task to, and the one it moves it from (their node ids: one-request moves). */
  private stateLabels(): string[] {
    const { review, blocked, needsHuman, inProgress } = this.config.labels;
    return [review, blocked, needsHuman, inProgress];
  }

  /**
   * The task issue as read right after the claim's write (in the same query as the claim's last check), when
   * that read happened: the job's first read of the issue, which it would otherwise make next.
   */
  private issueAfterClaim: WorkerIssue | null = null;

  // ---------------------------------------------------------------------------------------------------------
  // The loop

  /**
   * The job after the claim: the task checked, the branch and the project ready, then one iteration after
   * another until one of them ends the job. Each step below is one phase; the decisions between them are here.
   */
  private async iterate(): Promise<WorkerRun> {
    const issue = await this.readTask();
    const refusal = this.refuseTask(issue);
    if (refusal) return this.finish("failed", refusal);
    if (this.agents.length === 0)
      return this.finish(
        "failed",
        `candidate ${this.inputs.candidate} of a best-of round is not in \`bestOf.candidates\` of the configuration`,
      );
    if (this.inputs.candidate)
      this.log.info(
        `best of ${this.config.bestOf.candidates.length}: candidate ${this.inputs.candidate} (${agentLabel(this.agents[0]!)}) on ${this.branch}`,
      );
    this.workspace = workspaceOfTask(issue.labels, this.config.workspaces);
    if (this.workspace)
      this.log.info(
        `workspace ${this.workspace.name}: the agent starts in ${this.workspace.directory ?? "the root"}`,
      );
    const conflicts = await this.prepareBranch();
    const setupFailure = await this.projectSetup(conflicts.length > 0);
    if (setupFailure) return this.finish("failed", setupFailure);
    await this.prepareNotes(issue.title);
    const feedback = await this.readFeedback(conflicts);
    if (this.inputs.plan === "propose") return this.proposePlan(issue, feedback);
    if (this.inputs.plan) {
      this.approvedPlan = await this.readApprovedPlan(this.inputs.plan);
      // Edited or deleted since its approval: what was approved is gone, so a new plan is proposed for approval.
      if (this.approvedPlan === null)
        return this.proposePlan(
          issue,
          feedback,
          "the approved plan's comment was edited or deleted since its approval: a new plan is proposed",
        );
    }
    const loop = freshLoop();

    for (;;) {
      this.checkCancelled();
      const stopped = await this.stopAtBoundary();
      if (stopped) return stopped;
      this.recoverPrimary(loop);

      const iteration = this.result.iterations + 1;
      const agent = this.agents[this.agentIndex]!;
      const { run, headBefore } = await this.runAgent(
        issue,
        iteration,
        agent,
        feedback,
        loop.qualityFailures,
      );
      if (run.spawnError) {
        await this.checkpoint("agent could not start");
        return this.finish("failed", spawnFailureText(agent, run.spawnError));
      }
      const claim = completionClaim(parseSignal(run.output.finalMessage), this.config.completion);
      const signal = claim.signal;
      if (run.budgetStop) {
        // Stopped mid-run at its budget: what it wrote so far is kept, committed and pushed, and the job ends.
        this.result.iterations = iteration;
        await this.appendNote(iteration, agent.preset, signal, `stopped mid-run: ${run.budgetStop}`);
        await this.checkpoint("budget spent");
        return this.finish(
          "budget_exceeded",
          `${run.budgetStop}; the agent was stopped mid-run and its work so far is committed and pushed`,
        );
      }
      const refused = await this.refuseHandback();
      if (refused) return refused;
      const limited = await this.handleAgentError(run, signal, agent, loop);
      if (limited === "retry") continue;
      if (limited) return limited;

      // A real iteration happened.
      if (claim.ignored) this.warn(claim.ignored);
      loop.rateAttempt = 0;
      this.result.iterations = iteration;
      this.result.lastSignal = describeSignal(signal);
      const failed = await this.checkAgentExit(run, signal, iteration, agent);
      if (failed) return failed;

      // Commit and push before anything else, so a killed job loses at most this iteration.
      const newWork = await this.readNewWork(headBefore);
      loop.iterationsWithoutCommit = newWork ? 0 : loop.iterationsWithoutCommit + 1;
      const gate = await this.runGate(iteration, signal);
      const decision = this.decide(iteration, signal, gate.outcome, loop);
      await this.recordAndPush(iteration, agent, signal, decision, gate.text);

      const ended = await this.endFor(decision, signal, issue.title);
      if (ended) return ended;
      loop.qualityFailures = decision.feedQualityFailures ? this.quality.filter((q) => !q.passed) : [];
      await this.updateProgress();
      const after = taskBudgetExceeded(this.config.budgets.task, this.result);
      if (after) return this.finish("budget_exceeded", after);
      // `iterationDelayMs`: spaces out the agent's runs (its API calls); a cancel ends the wait.
      if (this.config.iterationDelayMs > 0) {
        await this.deps.sleep(this.config.iterationDelayMs, this.deps.signal);
      }
    }
  }

  /** Back to the primary agent once the limit that moved the job to a fallback has lifted (`recoverPrimary`). */
  private recoverPrimary(loop: LoopState): void {
    const back = shouldRecoverPrimary({
      recoverPrimary: this.config.recoverPrimary,
      agentIndex: this.agentIndex,
      primaryLimitedUntil: this.primaryLimitedUntil,
      now: this.now(),
    });
    if (!back) return;
    const from = this.agents[this.agentIndex]!;
    this.warn(
      `${this.agents[0]!.preset}'s limit has lifted; back to it from ${from.preset} (recoverPrimary)`,
    );
    this.agentIndex = 0;
    this.primaryLimitedUntil = null;
    // A primary still limited goes back to the fallback at once rather than waiting out its retries again.
    loop.rateAttempt = this.config.rateLimit.retries;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Before the first iteration

  /**
   * The task issue, read after the claim's write (by the claim's last query when it made one: nothing is read
   * or written between that answer and the checks on it).
   */
  private async readTask(): Promise<WorkerIssue> {
    const issue =
      this.issueAfterClaim ??
      (await this.deps.github.readIssueAndLabels(this.inputs.issue, this.stateLabels()));
    this.issueAfterClaim = null;
    return issue;
  }

  /** Why the job must not work on this issue: closed, or its text is not the text the controller approved. */
  private refuseTask(issue: WorkerIssue): string | null {
    if (issue.state === "closed") return `issue #${issue.number} is closed`;
    return taskTextRefusal(issue, this.inputs.taskDigest);
  }

  /** Checks out the task branch (created, or resumed with the default branch merged in); returns the conflicts. */
  private async prepareBranch(): Promise<string[]> {
    const { git } = this.deps;
    const removed = await git.prepare();
    if (removed.length)
      this.log.info(`removed persisted credentials from .git/config: ${removed.join(", ")}`);
    this.setup = await git.setupBranch(this.branch, this.inputs.defaultBranch);
    await git.addExcludes(SCRATCH_EXCLUDES);
    this.log.info(
      this.setup.resumed
        ? `resumed ${this.branch} at ${this.setup.head.slice(0, 12)}`
        : `created ${this.branch} from ${this.inputs.defaultBranch} at ${this.setup.head.slice(0, 12)}`,
    );
    if (!this.setup.resumed) return [];
    const merge = await git.mergeDefault(
      this.inputs.defaultBranch,
      `autopilot: merge ${this.inputs.defaultBranch} into ${this.branch}`,
    );
    this.setup = { ...this.setup, base: merge.base };
    if (merge.merged) this.log.info(`merged ${this.inputs.defaultBranch} into ${this.branch}`);
    if (merge.conflicts.length)
      this.warn(`${this.inputs.defaultBranch} does not merge cleanly: ${merge.conflicts.join(", ")}`);
    return merge.conflicts;
  }

  /** Notes set aside when the PR opened come back for the next round (after the setup, which may reset the tree). */
  private async prepareNotes(title: string): Promise<void> {
    if (this.setup?.resumed && (await this.deps.git.restoreDeletedFile(PROGRESS_NOTES_PATH)))
      this.log.info("restored the progress notes from the branch history");
    await ensureProgressNotes(this.tree, this.inputs.issue, title);
  }

  /** Review comments and checks on the task's PR, with the merge conflicts first when there are any. */
  private async readFeedback(conflicts: string[]): Promise<TaskFeedback> {
    const feedback = await gatherFeedback({
      github: this.deps.github,
      issue: this.inputs.issue,
      branch: this.branch,
      comments: this.commentsAtStart,
      log: this.log,
      warn: (message) => this.warn(message),
    });
    if (feedback.pull) this.result.prNumber = feedback.pull.number;
    if (conflicts.length) feedback.checks.unshift(mergeConflictCheck(this.inputs.defaultBranch, conflicts));
    return feedback;
  }

  // ---------------------------------------------------------------------------------------------------------
  // The steps of an iteration

  /** Iteration boundary: wall clock, budget, session status. A finished run when one of them ends the job. */
  private async stopAtBoundary(): Promise<WorkerRun | null> {
    const elapsed = this.now() - this.startedAt;
    if (elapsed >= this.config.timeoutMinutes * 60_000) {
      return this.finish("timeout", `reached the wall-clock limit (${this.config.timeoutMinutes} min)`);
    }
    const budget = taskBudgetExceeded(this.config.budgets.task, this.result);
    if (budget) return this.finish("budget_exceeded", budget);
    const pause = await this.sessionStop();
    if (pause) {
      await this.checkpoint("pause");
      return this.finish("paused", `session is ${pause}; work so far is committed and pushed`);
    }
    return null;
  }

  /**
   * Runs the agent once on the prompt, then undoes what it may have done to the worker's repository and counts
   * what it spent. Returns its run and HEAD as it was before.
   */
  private async runAgent(
    issue: WorkerIssue,
    iteration: number,
    agent: AgentConfig,
    feedback: TaskFeedback,
    qualityFailures: QualityCommandResult[],
    mode: "work" | "plan" = "work",
  ): Promise<{ run: AgentRunResult; headBefore: string }> {
    const { git } = this.deps;
    const prompt = await this.prompt(issue, iteration, feedback, qualityFailures, mode);
    const headBefore = this.knownHead ?? (await git.headSha());
    // Each iteration's output folds under its own heading in the job log; `finish` ends the last one.
    this.log.group(`iteration ${iteration}/${this.config.maxIterations}: running ${agent.preset}`);
    const run = await this.deps.agent({
      agent,
      prompt,
      issue: this.inputs.issue,
      iteration,
      timeoutMs: this.config.iterationTimeoutMinutes * 60_000,
      cap: this.runCap(),
      directory: this.workspace?.directory ?? null,
      ...(this.deps.signal ? { signal: this.deps.signal } : {}),
    });
    for (const refused of run.refusedEnv) this.warn(`agent env: ${refused.name} not passed (${refused.why})`);
    if (run.directoryRefused) this.warn(run.directoryRefused);
    // The agent may have planted config, switched branches or left a rebase half done.
    if (await git.restoreConfig()) this.warn("the agent changed .git/config; it was restored");
    for (const note of await git.recoverBranch(this.branch)) this.warn(note);
    this.addUsage(priceRun(run, agent, this.config.prices));
    this.commands.push(...run.output.commands);
    this.lastFinalMessage = run.output.finalMessage;
    this.checkCancelled();
    return { run, headBefore };
  }

  /**
   * When the agent's output says it hit an error (auth, quota, a limit): the finished run, or "retry" after
   * waiting or switching to the next agent. Null: no such error, the iteration counts.
   */
  private async handleAgentError(
    run: AgentRunResult,
    signal: Signal,
    agent: AgentConfig,
    loop: LoopState,
  ): Promise<WorkerRun | "retry" | null> {
    const errorKind = this.classify(run, signal);
    if (!errorKind) return this.handleUnrecognisedLimit(run, signal, agent, loop);
    const limited =
      errorKind.kind === "rate_limit" || errorKind.kind === "overloaded" || errorKind.kind === "usage_limit";
    await this.checkpoint(`agent ${errorKind.kind}`);
    if (errorKind.kind === "auth") return this.finish("auth", authFailureText(agent, errorKind.evidence));
    if (errorKind.kind === "quota") return this.finish("quota", quotaFailureText(agent, errorKind.evidence));
    if (!limited) return null;
    const decision = decideRateLimit({
      attempt: loop.rateAttempt,
      retries: this.config.rateLimit.retries,
      agentIndex: this.agentIndex,
      agentCount: this.agents.length,
      baseMs: this.config.rateLimit.baseMs,
      factor: this.config.rateLimit.factor,
      maxWaitMs: this.config.rateLimit.maxWaitMs,
      resetAt: errorKind.resetAt ?? null,
      now: this.now(),
    });
    if (decision.action === "wait") {
      this.log.info(
        `${agent.preset}: ${errorKind.kind}; waiting ${Math.round(decision.ms / 1000)} s (${decision.reason})`,
      );
      loop.rateAttempt++;
      await this.deps.sleep(decision.ms, this.deps.signal);
      return "retry";
    }
    if (decision.action === "switch_agent") {
      const next = this.agents[decision.next]!;
      this.warn(
        `${agent.preset} is ${LIMIT_WORDS[errorKind.kind]}; switching to ${next.preset} (${decision.reason})`,
      );
      if (this.agentIndex === 0) {
        this.primaryLimitedUntil = primaryLimitLiftsAt(
          errorKind.resetAt,
          this.now(),
          this.config.rateLimit.maxWaitMs,
        );
      }
      this.agentIndex = decision.next;
      loop.rateAttempt = 0;
      return "retry";
    }
    this.result.resumeAt = decision.resumeAt;
    return this.finish(
      errorKind.kind === "usage_limit" ? "usage_limited" : "rate_limited",
      `${decision.reason} (${errorKind.evidence ?? errorKind.kind})`,
    );
  }

  /**
   * A failed run whose end looks like a limit the classifier does not know (src/core/agent/limit-hint.ts): "retry" after
   * a backoff while waits are left; null when the run counts as it is (a failure, or a real iteration).
   */
  private async handleUnrecognisedLimit(
    run: AgentRunResult,
    signal: Signal,
    agent: AgentConfig,
    loop: LoopState,
  ): Promise<"retry" | null> {
    const failed = run.output.isError && !run.output.turnLimit && !run.timedOut && signal.kind === "none";
    if (!failed) return null;
    const hint = unrecognisedLimitHint(run.rawOutput);
    if (hint === null) return null;
    const { retries, baseMs, factor, maxWaitMs } = this.config.rateLimit;
    const wait = limitWait({
      attempt: loop.rateAttempt,
      retries,
      baseMs,
      factor,
      maxWaitMs,
      now: this.now(),
    });
    if (!wait) {
      this.warn(
        `${agent.preset} failed with what looks like a limit (${hint}); no wait left of ${retries}: counted as a failure`,
      );
      return null;
    }
    this.warn(
      `${agent.preset} failed with what looks like a limit (${hint}); waiting ${Math.round(wait.ms / 1000)} s (${wait.reason})`,
    );
    await this.checkpoint("agent limit (unrecognised)");
    loop.rateAttempt++;
    await this.deps.sleep(wait.ms, this.deps.signal);
    return "retry";
  }

  /** How the agent's process ended (src/core/agent/agent-exit.ts): the finished run when that fails the job. */
  private async checkAgentExit(
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
      cancelled: this.deps.signal?.aborted ?? false,
    });
    // A cancelled job has already ended above (checkCancelled: checkpoint, `paused`), as the table says.
    if (exit.action === "release") throw new CancelledError();
    if (exit.action === "fail") {
      await this.appendNote(iteration, agent.preset, signal, exit.reason);
      await this.checkpoint("agent failed");
      const detail = run.output.errorText.split("\n").find((l) => l.trim());
      return this.finish("failed", detail ? `${exit.reason}: ${detail.slice(0, 300)}` : exit.reason);
    }
    if (run.timedOut) {
      this.warn(
        `iteration ${iteration} hit the ${this.config.iterationTimeoutMinutes} min limit; its process tree was killed`,
      );
    }
    return null;
  }

  /**
   * The agent's work as its side handed it back was refused (a nested repository, a `.git` path, a link out of
   * the tree, an oversized file: src/core/gates/handback-rules.ts): nothing of it is committed or pushed, what
   * was committed before is, and the job ends naming each entry.
   */
  private async refuseHandback(): Promise<WorkerRun | null> {
    const { refused } = await this.deps.git.workState();
    if (refused.length === 0) return null;
    await this.checkpoint("work refused");
    const shown =
      refused.slice(0, 10).join("; ") + (refused.length > 10 ? `; and ${refused.length - 10} more` : "");
    return this.finish(
      "failed",
      `the agent's work was refused, and nothing of this iteration is committed or pushed: ${shown}`,
    );
  }

  /** Whether the agent made new work this iteration (a commit of its own or changed files). */
  private async readNewWork(headBefore: string): Promise<boolean> {
    const state = await this.deps.git.workState();
    this.knownHead = state.head;
    return state.head !== headBefore || state.changed;
  }

  /**
   * On a completion claim: commits the work, then runs the quality commands. The work is committed before the
   * gate runs (the commands' leftovers are reset away, the work is not); it is pushed with the gate's note when
   * the iteration ends.
   */
  private async runGate(
    iteration: number,
    signal: Signal,
  ): Promise<{ outcome: QualityOutcome; text: string }> {
    if (signal.kind !== "complete") return { outcome: "not_run", text: "" };
    await this.commitWork(iteration, signal);
    this.quality = await this.runQuality();
    const outcome: QualityOutcome =
      this.quality.length === 0 ? "not_run" : this.quality.every((q) => q.passed) ? "pass" : "fail";
    const text = this.quality.length
      ? this.quality
          .map((q) => `${q.passed ? (q.flaky ? "pass (flaky)" : "pass") : "FAIL"} ${q.command}`)
          .join(", ")
      : "no quality commands";
    return { outcome, text };
  }

  /** The completion matrix (src/core/agent/iteration.ts) on this iteration; its warnings are logged. */
  private decide(
    iteration: number,
    signal: Signal,
    quality: QualityOutcome,
    loop: LoopState,
  ): IterationDecision {
    const decision = decideAfterIteration({
      signal: toIterationSignal(signal),
      quality,
      iteration,
      maxIterations: this.config.maxIterations,
      startedAt: this.startedAt,
      now: this.now(),
      timeoutMs: this.config.timeoutMinutes * 60_000,
      iterationsWithoutCommit: loop.iterationsWithoutCommit,
      stuckThreshold: this.config.stuckThreshold,
      stuckStopThreshold: this.config.stuckStopThreshold,
      ignoredCompletions: loop.ignoredCompletions,
      maxIgnoredCompletionCycles: this.config.maxIgnoredCompletionCycles,
      completion: this.config.completion,
    });
    loop.ignoredCompletions = decision.ignoredCompletions;
    for (const warning of decision.warnings) this.warn(warning);
    return decision;
  }

  /** Writes the iteration's progress note, commits, and pushes unless a PR is about to be opened. */
  private async recordAndPush(
    iteration: number,
    agent: AgentConfig,
    signal: Signal,
    decision: IterationDecision,
    qualityText: string,
  ): Promise<void> {
    if (signal.kind !== "complete") {
      await this.appendNote(iteration, agent.preset, signal, decision.reason);
    } else if (qualityText) {
      await this.appendNote(iteration, agent.preset, signal, `${qualityText} → ${decision.reason}`);
    }
    // One push per iteration: every push starts CI on an open PR and wakes the controller. A PR about to be
    // opened is pushed once, after the notes are set aside (complete()).
    await this.commitWork(iteration, signal);
    if (decision.outcome !== "open_pr") await this.pushBranch();
    this.checkCancelled();
  }

  /** The finished run for every outcome but `continue`. */
  private async endFor(
    decision: IterationDecision,
    signal: Signal,
    title: string,
  ): Promise<WorkerRun | null> {
    switch (decision.outcome) {
      case "open_pr":
        return this.complete(title);
      case "blocked":
      case "needs_human":
        return this.endWithSignal(decision.outcome, signal, decision.reason);
      case "timeout":
        return this.finish("timeout", decision.reason);
      case "stuck":
        return this.finish("stuck", decision.reason);
      case "contradiction":
        return this.escalateGate(decision.reason);
      case "continue":
        return null;
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // Pieces of an iteration

  private classify(run: AgentRunResult, signal: Signal) {
    if (run.timedOut || run.output.turnLimit) return null;
    if (!run.output.isError && signal.kind !== "none") return null;
    const found = classifyAgentOutput(run.rawOutput, new Date(this.now()));
    return found.kind === "none"
      ? null
      : withDefaultReset(found, new Date(this.now()), this.config.rateLimit.usageLimitWaitMs);
  }

  private async prompt(
    issue: { number: number; title: string; body: string },
    iteration: number,
    feedback: TaskFeedback,
    qualityFailures: QualityCommandResult[],
    mode: "work" | "plan" = "work",
  ): Promise<string> {
    const budgetNote = taskBudgetNote(this.config.budgets.task, this.result);
    const workspace = this.workspace;
    return buildPrompt({
      repo: this.inputs.repo,
      issue: { number: issue.number, title: issue.title, body: issue.body },
      branch: this.branch,
      iteration,
      maxIterations: this.config.maxIterations,
      humanAnswers: feedback.answers.map((c) => ({ author: c.author ?? "unknown", body: c.body })),
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
      qualityFailures: qualityFailures.map((q) => ({ command: q.command, output: q.output })),
      progressNotes: await readProgressNotes(this.tree, (message) => this.warn(message)),
      ...(budgetNote ? { budgetNote } : {}),
      ...(workspace
        ? {
            workspaceNote:
              `This task belongs to the ${workspace.name} workspace${workspace.directory ? `, ${workspace.directory}: you start there` : ""}. ` +
              "A change runs the quality commands of each workspace whose files it touches, and the repository's " +
              "own only when it touches shared files: keep the change inside the workspace unless the task needs more.",
          }
        : {}),
      completion: this.config.completion,
      mode,
      ...(this.approvedPlan ? { approvedPlan: this.approvedPlan } : {}),
      ...(this.answeredPlan ? { answeredPlan: this.answeredPlan } : {}),
    });
  }

  // ---------------------------------------------------------------------------------------------------------
  // The plan gate (src/core/reconcile/commands/plan-approval.ts)

  /**
   * A planning run: the agent runs once on the planning prompt; nothing it changed is committed or pushed (the
   * job never pushes, and the next job starts from a fresh clone); its final message's plan is posted on the
   * issue, which moves to needs-human until a writer approves the plan or answers with changes.
   */
  private async proposePlan(issue: WorkerIssue, feedback: TaskFeedback, why?: string): Promise<WorkerRun> {
    if (why) this.warn(why);
    this.planning = true;
    this.answeredPlan = await this.readLastPlan();
    const loop = freshLoop();
    for (;;) {
      this.checkCancelled();
      // The wall clock, the task budget and a paused or stopped session hold for a planning run too.
      const stopped = await this.stopAtBoundary();
      if (stopped) return stopped;
      const agent = this.agents[this.agentIndex]!;
      const { run, headBefore } = await this.runAgent(issue, 1, agent, feedback, [], "plan");
      if (run.spawnError) return this.finish("failed", spawnFailureText(agent, run.spawnError));
      const signal = parseSignal(run.output.finalMessage);
      if (run.budgetStop)
        return this.finish("budget_exceeded", `${run.budgetStop}; the planning run was stopped`);
      const limited = await this.handleAgentError(run, signal, agent, loop);
      if (limited === "retry") continue;
      if (limited) return limited;
      this.result.iterations += 1;
      // A run that timed out, was killed or failed has no plan to post, only partial or error text.
      if (run.timedOut || run.exitCode !== 0)
        return this.finish(
          "failed",
          `the planning run ${run.timedOut ? "timed out" : `failed (exit code ${run.exitCode ?? `signal ${run.signal ?? "?"}`})`}: no plan is posted`,
        );
      const state = await this.deps.git.workState();
      if (state.head !== headBefore || state.changed)
        this.warn("the planning run changed files: nothing of it is committed or pushed");
      const plan = planOfFinalMessage(run.output.finalMessage);
      if (!plan) return this.finish("failed", "the planning run gave no plan (its final message was empty)");
      this.result.plan = { digest: planDigest(plan) };
      // The result marker names the plan before the task moves to needs-human: a writer's approval given before
      // the job ends is of this plan (src/core/reconcile/commands/plan-approval.ts).
      await this.handToPerson(
        planComment(this.inputs.issue, plan),
        this.config.labels.needsHuman,
        "post the plan",
        () => this.updateProgress(),
      );
      return this.finish(
        "needs_human",
        `plan proposed: waiting for a writer's \`/autopilot approve #${this.inputs.issue}\` (or a comment with changes)`,
      );
    }
  }

  /**
   * The last plan proposed for the task, for a new planning run to revise: from Autopilot's own newest plan
   * comment (by account id) whose text still has the digest it names; null when there is none.
   */
  private async readLastPlan(): Promise<string | null> {
    const own = await ownComments(this.deps.github, this.commentsAtStart, this.log);
    for (const comment of [...own].reverse()) {
      const plan = planInComment(comment.body);
      if (plan !== null) return plan;
    }
    return null;
  }

  /** The approved plan with this digest, from Autopilot's own plan comment on the issue; null when it has none. */
  private async readApprovedPlan(digest: string): Promise<string | null> {
    const own = await ownComments(this.deps.github, this.commentsAtStart, this.log);
    for (const comment of [...own].reverse()) {
      const plan = planFromComment(comment.body, digest);
      if (plan !== null) return plan;
    }
    return null;
  }

  /**
   * The project's setup (`setup:` in .github/autopilot.yml), once, before the first iteration. It runs the
   * repository's code (install and lifecycle scripts), so it runs the way the quality commands do: inside the
   * worker's sandbox, as the agent's user, without the token. A failure ends the job with the command named:
   * the agent did not write the setup, and its output is not the agent's to act on. Returns the failure, or null.
   */
  private async projectSetup(conflicted: boolean): Promise<string | null> {
    const commands = this.config.setup;
    if (commands.length === 0) return null;
    if (conflicted) {
      // The merge left conflict markers (a lockfile's, perhaps) for the agent to resolve: an install would fail.
      this.warn("`setup` skipped: the merge of the default branch left conflicts for the agent to resolve");
      return null;
    }
    const limitMs = this.config.setupTimeoutMinutes * 60_000;
    const limit = `setupTimeoutMinutes (${this.config.setupTimeoutMinutes} min)`;
    const started = this.now();
    for (const command of commands) {
      this.checkCancelled();
      const left = limitMs - (this.now() - started);
      if (left <= 0) return `project setup ran out of time: ${limit} passed before \`${command}\``;
      this.log.info(`setup: ${command}`);
      const [result] = await this.deps.quality.run([command], left);
      if (result?.output.trim()) this.log.info(result.output);
      if (!result?.passed) {
        const why = !result
          ? "did not run"
          : result.timedOut
            ? `was stopped when ${limit} ran out`
            : `failed (exit code ${result.exitCode ?? "none"})`;
        return (
          `project setup failed: \`${command}\` ${why}; its output is in the worker's log. ` +
          "Fix the command in `setup` of .github/autopilot.yml, or the project"
        );
      }
      this.log.info(`setup passed: ${command} (${Math.round(result.durationMs / 1000)} s)`);
    }
    // What the setup changed in tracked files is not the agent's work (installed packages stay: excluded).
    await this.deps.git.resetWorkTree();
    return null;
  }

  private async runQuality(): Promise<QualityCommandResult[]> {
    const configured = this.config.qualityCommands;
    let commands: string[];
    if (configured === "auto") {
      commands = await this.deps.quality.detect(this.tree);
      this.qualitySource = commands.length ? "detected" : "none";
    } else {
      commands = configured;
      this.qualitySource = "configured";
    }
    const { reruns, coverage } = this.config.quality;
    if (commands.length === 0 && this.config.workspaces.length === 0) {
      if (coverage.threshold === 0) return [];
      // A coverage threshold with nothing to write the report is a gate that cannot pass, not one that is off.
      return [
        {
          command: "quality.coverage",
          passed: false,
          exitCode: null,
          timedOut: false,
          durationMs: 0,
          output:
            `quality.coverage.threshold is ${coverage.threshold}% but no quality command ran to write a coverage ` +
            "report: set qualityCommands (or add the project's test script) so the tests run with coverage.",
        },
      ];
    }
    const results = await this.runScopes(commands, reruns, coverage.threshold > 0 ? coverage : null);
    // Build output and caches the commands left behind are not the agent's work.
    await this.deps.git.resetWorkTree();
    for (const result of results) {
      this.log.info(
        `${result.passed ? "pass" : "FAIL"}: ${result.command} (${Math.round(result.durationMs / 1000)} s)`,
      );
      if (result.flaky)
        this.warn(`flaky: \`${result.command}\` failed before it passed on run ${result.runs ?? 2}`);
    }
    return results;
  }

  /**
   * The quality commands a change runs: with `workspaces`, those of each workspace it touches (in its
   * directory) and the top-level ones only for shared files (src/core/gates/workspace-scope.ts); without, the
   * top-level ones. Every scope shares the step's time. The coverage gate reads the root's report, so it goes
   * with the top-level commands.
   */
  private async runScopes(
    rootCommands: string[],
    reruns: number,
    coverage: QualityGateOptions["coverage"],
  ): Promise<QualityCommandResult[]> {
    const { workspaces } = this.config;
    const scopes =
      workspaces.length > 0
        ? qualityScopes(await this.deps.git.changedPaths(this.setup!.base), workspaces, rootCommands)
        : [{ workspace: null, directory: null, commands: rootCommands }];
    const deadline = this.now() + this.config.iterationTimeoutMinutes * 60_000;
    const results: QualityCommandResult[] = [];
    for (const scope of scopes) {
      if (scope.commands.length === 0) continue;
      const where = scope.workspace === null ? "" : ` (workspace ${scope.workspace})`;
      this.log.info(`quality commands${where}: ${scope.commands.join(" && ")}`);
      const ran = await this.deps.quality.run(
        scope.commands,
        Math.max(1_000, deadline - this.now()),
        { reruns, coverage: scope.workspace === null ? coverage : null },
        scope.directory,
      );
      // A workspace's command is shown as it is reproduced: from the root, in its directory.
      results.push(
        ...ran.map((r) => (scope.directory ? { ...r, command: `cd ${scope.directory} && ${r.command}` } : r)),
      );
    }
    if (workspaces.length > 0 && !scopes.some((s) => s.workspace === null) && coverage)
      this.log.info(
        "quality.coverage: this change touches workspaces only; the root's coverage report is not read",
      );
    return results;
  }

  private async commitWork(iteration: number, signal: Signal): Promise<string | null> {
    const subject = `autopilot: iteration ${iteration} for #${this.inputs.issue}`;
    const message = `${subject}\n\nAttempt ${this.inputs.attempt}, signal ${describeSignal(signal).slice(0, 200)}.\n`;
    return this.committed(await this.deps.git.commitAll(message));
  }

  /** A commit the worker made is the new HEAD; no commit leaves HEAD where it was. */
  private committed(sha: string | null): string | null {
    if (sha !== null) this.knownHead = sha;
    return sha;
  }

  private async pushBranch(): Promise<void> {
    const { git } = this.deps;
    if (this.config.dryRun) {
      this.log.info("dry run: not pushing");
      return;
    }
    const head = this.knownHead ?? undefined;
    // Secret guard: throws SecretPushRefused before a push that carries a held secret's value.
    const push = { branch: this.branch, base: this.setup?.base, head };
    this.result.humanGate = await guardPush(this.deps.pushGuard, push, this.result.humanGate);
    // Counting reads what the push sends and changes nothing: the two git processes run side by side.
    const [pushed, commits] = await Promise.all([
      git.push(this.branch, head),
      this.setup ? git.countCommits(this.setup.base, head) : null,
    ]);
    this.result.headSha = pushed;
    if (commits !== null) this.result.commits = commits;
  }

  /** Commit + push whatever the work tree holds (pause, limits, failures). */
  private async checkpoint(why: string): Promise<void> {
    // A planning run keeps nothing the agent changed (proposePlan): no checkpoint commits or pushes it.
    if (!this.setup || this.planning) return;
    const { git } = this.deps;
    await git.restoreConfig();
    await git.recoverBranch(this.branch);
    this.knownHead = null;
    const sha = await git.commitAll(`autopilot: checkpoint for #${this.inputs.issue} (${why})\n`);
    if (this.config.dryRun) return;
    const head = sha ?? (await git.headSha());
    this.knownHead = head;
    if (sha || head !== this.setup.head) {
      // Secret guard: as in pushBranch.
      const push = { branch: this.branch, base: this.setup.base, head };
      this.result.humanGate = await guardPush(this.deps.pushGuard, push, this.result.humanGate);
      await git.push(this.branch, head);
      this.result.headSha = head;
      this.result.commits = await git.countCommits(this.setup.base);
    }
  }

  private async sessionStop(): Promise<string | null> {
    if (this.inputs.trackingIssue === null) return null;
    try {
      const body = await this.deps.github.getIssueBody(this.inputs.trackingIssue);
      this.sessionLeft = sessionShareLeft(body, this.spend(), this.config.maxParallel);
      const { stop, status } = sessionWantsStop(body, this.spend());
      return stop ? status : null;
    } catch (error) {
      this.warn(`could not read the session status: ${errorMessage(error)}`);
      return null;
    }
  }

  /**
   * What the next run may use: what is left of the task's budget and of this worker's share of the session's
   * (read at the iteration boundary); null when neither sets a limit.
   */
  private runCap(): RunCap | null {
    const used = this.spend();
    const task = this.config.budgets.task;
    const smaller = (a: number | null, b: number | null) =>
      a === null ? b : b === null ? a : Math.min(a, b);
    const tokens = smaller(
      task.tokens === null ? null : Math.max(0, task.tokens - used.tokens),
      this.sessionLeft?.tokens ?? null,
    );
    const usd = smaller(
      task.usd === null ? null : Math.max(0, task.usd - used.usd),
      this.sessionLeft?.usd ?? null,
    );
    return tokens === null && usd === null ? null : { tokens, usd, prices: this.config.prices };
  }

  private spend() {
    const { tokens, costUsd } = this.result;
    return { issue: this.inputs.issue, tokens: tokens.input + tokens.output, usd: costUsd };
  }

  private addUsage(run: AgentRunResult): void {
    this.jobUsage.input += run.output.usage.input;
    this.jobUsage.output += run.output.usage.output;
    this.jobUsage.costUsd += run.output.costUsd;
    this.syncUsage();
  }

  private syncUsage(): void {
    this.result.tokens = {
      input: this.carried.input + this.jobUsage.input,
      output: this.carried.output + this.jobUsage.output,
    };
    this.result.costUsd = Math.round((this.carried.costUsd + this.jobUsage.costUsd) * 1e6) / 1e6;
  }

  private async appendNote(
    iteration: number,
    preset: string,
    signal: Signal,
    outcome: string,
  ): Promise<void> {
    const note = {
      attempt: this.inputs.attempt,
      iteration,
      at: this.now(),
      preset,
      signal: describeSignal(signal),
      outcome,
    };
    await appendProgressNote(this.tree, note, (message) => this.warn(message));
  }

  // ---------------------------------------------------------------------------------------------------------
  // Endings

  private async complete(title: string): Promise<WorkerRun> {
    const { git, github } = this.deps;
    const base = this.setup!.base;
    const matched = matchHumanGate(
      { diff: await git.diffFrom(base), paths: await git.changedPaths(base), commands: this.commands },
      {
        enabled: this.config.humanGate.enabled,
        patterns: this.config.humanGate.patterns,
        paths: this.config.humanGate.paths,
      },
    );
    // Symbolic links and `.gitmodules`, read from the branch's objects (src/core/gates/handback-rules.ts).
    const treeHits = this.config.humanGate.enabled ? await git.gateHits(base) : [];
    const hits = [...matched.hits, ...treeHits];
    const gate = { fired: hits.length > 0, hits };
    this.result.humanGate = { fired: gate.fired, rules: gate.hits };
    if (gate.fired) this.log.info(`human gate fired: ${gate.hits.map((r) => r.rule).join(", ")}`);

    const labels = this.config.labels;
    // The notes are the worker's, not the project's: they leave the branch before review so they never reach
    // the default branch (where every task's notes would collide). A later round restores them from history.
    this.committed(
      await git.removeFile(
        PROGRESS_NOTES_PATH,
        `autopilot: set the progress notes aside for review (#${this.inputs.issue})\n`,
      ),
    );
    // The iteration's work, its note and the notes set aside go out in one push.
    await this.pushBranch();
    if (this.config.dryRun) {
      this.log.info("dry run: no pull request is opened");
      return this.finish("complete", "complete; quality commands pass (dry run: no pull request)");
    }
    const agent = this.agents[this.agentIndex]!;
    const candidate = this.inputs.candidate;
    const body = renderPullBody({
      issue: this.inputs.issue,
      result: { ...this.result, status: "finished", result: "complete" },
      quality: this.quality,
      qualitySource: this.qualitySource,
      agent: agentLabel(agent),
      summary: this.lastFinalMessage,
    });
    // A candidate's PR says so in its title; the one chosen continues under the task's own title.
    const prTitle = `${candidate ? `[candidate ${candidate} of ${this.config.bestOf.candidates.length}] ` : ""}${title.trim()} (#${this.inputs.issue})`;
    let pull = await github.findOpenPull(this.branch);
    if (pull) {
      await github.updatePull(pull.number, { title: prTitle, body });
    } else {
      pull = await github.createPull({
        title: prTitle,
        body,
        head: this.branch,
        base: this.inputs.defaultBranch,
      });
    }
    this.result.prNumber = pull.number;
    // A candidate's task stays in progress: the controller chooses among the candidates (best-of.ts).
    if (candidate)
      return this.finish("complete", `candidate ${candidate}: pull request #${pull.number} opened`);
    // The PR's label and the task's move to review: one GraphQL mutation when the node ids are known.
    await github.labelForReview(pull.number, this.inputs.issue, labels.review, labels.inProgress);
    return this.finish(
      "complete",
      `pull request #${pull.number} ${gate.fired ? "opened; the human gate fired" : "opened"}`,
    );
  }

  private async endWithSignal(
    kind: "blocked" | "needs_human",
    signal: Signal,
    reason: string,
  ): Promise<WorkerRun> {
    const text =
      signal.kind === "blocked" ? signal.reason : signal.kind === "needs_human" ? signal.question : reason;
    const label = kind === "blocked" ? this.config.labels.blocked : this.config.labels.needsHuman;
    // A blocker gets no comment of its own: the controller's alert on the issue quotes it with the one next
    // step (src/core/session/alerts.ts), and this run's progress comment shows it as its reason.
    await this.handToPerson(
      kind === "blocked" ? null : renderQuestionComment(text, label),
      label,
      kind === "blocked" ? "label the task blocked" : "post the question",
    );
    return this.finish(kind, reason);
  }

  /** Posts `body` on the issue and moves it from in-progress to `label` (not in a dry run); failing only warns. */
  private async handToPerson(
    body: string | null,
    label: string,
    what: string,
    beforeLabel?: () => Promise<void>,
  ): Promise<void> {
    // A candidate that stops leaves the round, not the task: the other candidates go on (best-of.ts).
    if (this.config.dryRun || this.inputs.candidate) return;
    try {
      if (body !== null) await this.deps.github.createComment(this.inputs.issue, body);
      await beforeLabel?.();
      await this.deps.github.moveLabel(this.inputs.issue, label, this.config.labels.inProgress);
    } catch (error) {
      this.warn(`could not ${what}: ${errorMessage(error)}`);
    }
  }

  /**
   * The test gate kept failing (the contradiction guard of iteration.ts): the task goes to a person with the
   * failing output (gate-escalation.ts) instead of ending as a failure — document 003's escalation to the human
   * gate. Ends as `needs_human`: the controller treats it like the agent's own question.
   */
  private async escalateGate(reason: string): Promise<WorkerRun> {
    const label = this.config.labels.needsHuman;
    const failures = this.quality.filter((q) => !q.passed);
    await this.handToPerson(
      renderGateEscalationComment(failures, reason, label),
      label,
      "hand the failing gate to a person",
    );
    const names = failures.map((q) => q.command).join(", ") || "the quality gate";
    return this.finish("needs_human", `test gate keeps failing (${names}): ${reason}`);
  }

  /** The hosts the agent's proxy refused so far, into the result (the progress comment and the job's outputs). */
  private noteRefusedHosts(): void {
    const refused = this.deps.network?.refused() ?? [];
    if (refused.length) this.result.refusedHosts = refused.slice(0, 20);
  }

  private progressBody(): string {
    this.noteRefusedHosts();
    const agent = this.agents[this.agentIndex];
    return renderProgressComment({
      result: this.result,
      elapsedMs: this.now() - this.startedAt,
      runUrl: this.inputs.runUrl ?? null,
      agent: agent ? agentLabel(agent) : "none",
      warnings: this.warnings,
    });
  }

  private async updateProgress(): Promise<void> {
    this.result.updatedAt = new Date(this.now()).toISOString();
    if (this.progressCommentId === null || this.config.dryRun) return;
    try {
      await this.deps.github.updateComment(this.progressCommentId, this.progressBody());
    } catch (error) {
      this.warn(`could not update the progress comment: ${errorMessage(error)}`);
    }
  }

  private finishWithoutWriting(outcome: WorkerOutcome, reason: string): WorkerRun {
    this.result.status = "finished";
    this.result.result = outcome;
    this.result.reason = reason;
    this.result.updatedAt = new Date(this.now()).toISOString();
    return this.snapshot();
  }

  private async finish(outcome: WorkerOutcome, reason: string): Promise<WorkerRun> {
    this.result.status = "finished";
    this.result.result = outcome;
    this.result.reason = reason;
    if (this.setup) {
      try {
        this.result.headSha = await this.deps.git.headSha();
        this.result.commits = await this.deps.git.countCommits(this.setup.base);
      } catch {
        /* keep what the last push recorded */
      }
    }
    this.log.endGroup();
    this.log.info(`result: ${outcome} — ${reason}`);
    await this.updateProgress();
    return this.snapshot();
  }

  private snapshot(): WorkerRun {
    this.noteRefusedHosts();
    return {
      result: structuredClone(this.result),
      quality: this.quality,
      warnings: this.warnings,
      elapsedMs: this.now() - this.startedAt,
      progressCommentId: this.progressCommentId,
      requests: this.deps.github.requestCount,
    };
  }
}
