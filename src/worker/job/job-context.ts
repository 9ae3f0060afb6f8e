/**
 * What every phase of the worker's job reads, and the job's state (docs/ARCHITECTURE.md, "The route of one
 * worker iteration"). The sequence (job.ts) makes one context per job and hands it to each phase in turn; each
 * field of the state names the phase or service that writes it, so a reader knows where a value comes from.
 */
import type { AgentConfig, AutopilotConfig } from "../../core/config/index.js";
import { candidateBranchName, taskBranchName } from "../../core/contract.js";
import { weakerIsolationText, type WorkerResult } from "../../core/tasks/worker-result.js";
import type { BranchSetup } from "../checkout/private-git.js";
import type { QualityCommandResult } from "../processes/quality.js";
import type { WorkerDeps, WorkerInputs, WorkerLog } from "../worker-deps.js";

/** Tokens and dollars, as a meter counts them. */
interface Usage {
  input: number;
  output: number;
  costUsd: number;
}

export interface JobState {
  /** The result marker the job reports: every phase adds to it; ending.ts sets its status and result. */
  result: WorkerResult;
  /** Shown on the progress comment and returned with the run: `warn` below. */
  warnings: string[];
  /** The commands the agent ran (the human gate reads them): agent-turn.ts. */
  commands: string[];
  /** The progress comment's id once written: claim.ts (null again when the claim withdraws). */
  progressCommentId: number | null;
  /** The task branch as checked out (its base, HEAD, whether resumed): prepare.ts. */
  setup: BranchSetup | null;
  /** The quality commands of the last gate that ran, and where they came from: quality-gate.ts. */
  quality: QualityCommandResult[];
  qualitySource: "configured" | "detected" | "none";
  /** Earlier attempts' spend (the task's budget counts it): claim.ts. This job's own: spend.ts. */
  carried: Usage;
  jobUsage: Usage;
  /** The agent's last final message (the pull request's summary): agent-turn.ts. */
  lastFinalMessage: string;
  /** The workspace the task's labels route it to (`workspaces[].label`): prepare.ts. */
  workspace: AutopilotConfig["workspaces"][number] | null;
  /** This worker's share of the session budget's remainder, read at an iteration boundary: iteration-boundary.ts. */
  sessionLeft: { tokens: number | null; usd: number | null } | null;
  /** The agent in use, and when the primary's limit lifts once a limit moved the job on: agent-turn.ts. */
  agentIndex: number;
  primaryLimitedUntil: number | null;
  /** Why the job left its primary and which agent it left, until it goes back: agent-turn.ts. */
  agentFallback: { reason: string; from: string } | null;
  /**
   * HEAD of the worker's repository as the worker last saw or made it (commit.ts, and the new-work read of
   * agent-turn.ts), so an iteration need not ask git where HEAD was before the agent ran. Null: ask.
   */
  knownHead: string | null;
  /**
   * The push of a continuing iteration, running while the agent's next turn does (commit.ts); settled before
   * any other push, after that turn, and at the job's end. Null: none running.
   */
  pendingPush: Promise<void> | null;
  /** The plan a writer approved (the plan gate), and the one a planning run revises: plan.ts. */
  approvedPlan: string | null;
  answeredPlan: string | null;
  /** This job is a planning run: nothing the agent changes is committed or pushed (plan.ts sets it). */
  planning: boolean;
  /** The reviewer's runs in this job and what they spent (in the totals too): review.ts. */
  review: { runs: number; tokens: number; costUsd: number };
}

export interface JobContext {
  readonly inputs: WorkerInputs;
  readonly config: AutopilotConfig;
  readonly deps: WorkerDeps;
  readonly log: WorkerLog;
  /** The branch the job works on: the task's, or a best-of candidate's. */
  readonly branch: string;
  /** The agents in the order the job may use them (a candidate is its one agent). */
  readonly agents: AgentConfig[];
  readonly startedAt: number;
  /** The agent's work tree, where the progress notes live and the quality commands are detected. */
  readonly tree: string;
  readonly state: JobState;
  now(): number;
  /** A warning for the log, the progress comment and the run's result. */
  warn(message: string): void;
  /** Throws CancelledError once the job's signal is aborted. */
  checkCancelled(): void;
}

/** What one iteration of the loop hands the next (the loop's own state, not the job's). */
export interface LoopState {
  /** The failed quality commands the next prompt shows the agent: outcome.ts. */
  qualityFailures: QualityCommandResult[];
  /** Completion claims the gate did not accept, in a row, and what failed at the last of them: outcome.ts. */
  ignoredCompletions: number;
  lastContradiction: readonly string[] | null;
  /** Iterations without new work, in a row: the sequence. */
  iterationsWithoutCommit: number;
  /**
   * Waits for the current agent's limits so far, classified or only looking like one (limit-hint.ts): one bound,
   * `rateLimit.retries` (back to 0 after a real iteration or a switch): agent-turn.ts.
   */
  rateAttempt: number;
}

/** A loop's state before its first iteration. */
export function freshLoop(): LoopState {
  return {
    qualityFailures: [],
    ignoredCompletions: 0,
    lastContradiction: null,
    iterationsWithoutCommit: 0,
    rateAttempt: 0,
  };
}

export class CancelledError extends Error {
  constructor() {
    super("the job was cancelled");
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The labels the job may move the task to, and the one it moves it from (their node ids: one-request moves). */
export function stateLabels(ctx: JobContext): string[] {
  const { review, blocked, needsHuman, inProgress } = ctx.config.labels;
  return [review, blocked, needsHuman, inProgress];
}

/** The context of one job, before its claim. */
export function createJobContext(
  inputs: WorkerInputs,
  config: AutopilotConfig,
  deps: WorkerDeps,
): JobContext {
  const candidate = inputs.candidate ? config.bestOf.candidates[inputs.candidate - 1] : undefined;
  const branch = inputs.candidate
    ? candidateBranchName(config.branchPrefix, inputs.issue, inputs.candidate)
    : taskBranchName(config.branchPrefix, inputs.issue);
  const startedAt = deps.clock();
  // A candidate of a best-of round is its one agent: a fallback would make it another candidate.
  const agents = inputs.candidate
    ? candidate
      ? [candidate]
      : []
    : [config.agents.primary, ...config.agents.fallbacks];
  const now = new Date(startedAt).toISOString();
  const weaker = weakerIsolationText(config.isolation);
  const state: JobState = {
    result: {
      version: 1,
      issue: inputs.issue,
      attempt: inputs.attempt,
      dispatchId: inputs.dispatchId,
      status: "running",
      iterations: 0,
      maxIterations: config.maxIterations,
      commits: 0,
      branch,
      tokens: { input: 0, output: 0 },
      costUsd: 0,
      humanGate: { fired: false, rules: [] },
      ...(weaker ? { agentAccess: weaker } : {}),
      ...(deps.network?.access ? { networkAccess: deps.network.access } : {}),
      startedAt: now,
      updatedAt: now,
    },
    warnings: [],
    commands: [],
    progressCommentId: null,
    setup: null,
    quality: [],
    qualitySource: "none",
    carried: { input: 0, output: 0, costUsd: 0 },
    jobUsage: { input: 0, output: 0, costUsd: 0 },
    lastFinalMessage: "",
    workspace: null,
    sessionLeft: null,
    agentIndex: 0,
    primaryLimitedUntil: null,
    agentFallback: null,
    knownHead: null,
    pendingPush: null,
    approvedPlan: null,
    answeredPlan: null,
    planning: false,
    review: { runs: 0, tokens: 0, costUsd: 0 },
  };
  return {
    inputs,
    config,
    deps,
    log: deps.log,
    branch,
    agents,
    startedAt,
    tree: deps.workTree ?? inputs.workspace,
    state,
    now: () => deps.clock(),
    warn(message) {
      state.warnings.push(message);
      deps.log.warning(message);
    },
    checkCancelled() {
      if (deps.signal?.aborted) throw new CancelledError();
    },
  };
}
