/**
 * An iteration's outcome: the completion matrix (src/core/agent/iteration.ts) on the signal and the gate, the
 * progress note, the commit and push, and — when the matrix ends the job — its ending: the pull request opened
 * (after the human gate's rules), the task handed to a person (blocked, a question, a gate that keeps failing),
 * or a timeout or stuck loop reported.
 */
import {
  decideAfterIteration,
  type IterationDecision,
  type QualityOutcome,
} from "../../core/agent/iteration.js";
import { PROGRESS_NOTES_PATH } from "../../core/agent/prompt.js";
import type { Signal } from "../../core/agent/signals.js";
import { type AgentConfig, agentLabel } from "../../core/config/index.js";
import { failingSet } from "../../core/agent/failing-set.js";
import { matchHumanGate } from "../../core/gates/human-gate.js";
import type { WorkerPull } from "../../github/worker-github-data.js";
import type { WorkerRun } from "../worker-deps.js";
import { commitWork, committed, pushBranch } from "./commit.js";
import { finish, handToPerson } from "./ending.js";
import { renderGateEscalationComment } from "./gate-escalation.js";
import { toIterationSignal } from "./iteration-signal.js";
import type { JobContext, LoopState } from "./job-context.js";
import { renderPullBody, renderQuestionComment } from "./progress-comment.js";
import { appendNote } from "./report.js";

/**
 * The completion matrix on this iteration; its warnings are logged. Writes the loop's `ignoredCompletions` and
 * `lastContradiction`.
 */
export function decide(
  ctx: JobContext,
  iteration: number,
  signal: Signal,
  quality: QualityOutcome,
  loop: LoopState,
): IterationDecision {
  const { config } = ctx;
  const decision = decideAfterIteration({
    signal: toIterationSignal(signal),
    quality,
    iteration,
    maxIterations: config.maxIterations,
    startedAt: ctx.startedAt,
    now: ctx.now(),
    timeoutMs: config.timeoutMinutes * 60_000,
    iterationsWithoutCommit: loop.iterationsWithoutCommit,
    stuckThreshold: config.stuckThreshold,
    stuckStopThreshold: config.stuckStopThreshold,
    ignoredCompletions: loop.ignoredCompletions,
    maxIgnoredCompletionCycles: config.maxIgnoredCompletionCycles,
    failing: quality === "fail" ? failingSet(ctx.state.quality) : [],
    lastContradiction: loop.lastContradiction,
    completion: config.completion,
  });
  loop.ignoredCompletions = decision.ignoredCompletions;
  loop.lastContradiction = decision.lastContradiction;
  for (const warning of decision.warnings) ctx.warn(warning);
  return decision;
}

/** Writes the iteration's progress note, commits, and pushes unless a PR is about to be opened. */
export async function recordAndPush(
  ctx: JobContext,
  iteration: number,
  agent: AgentConfig,
  signal: Signal,
  decision: IterationDecision,
  qualityText: string,
): Promise<void> {
  if (signal.kind !== "complete") {
    await appendNote(ctx, iteration, agent.preset, signal, decision.reason);
  } else if (qualityText) {
    await appendNote(ctx, iteration, agent.preset, signal, `${qualityText} → ${decision.reason}`);
  }
  // One push per iteration: every push starts CI on an open PR and wakes the controller. A PR about to be
  // opened is pushed once, after the notes are set aside (openPull). A loop that goes on pushes while the
  // agent's next turn runs (pushBranch); a job that ends here pushes before it ends.
  await commitWork(ctx, iteration, signal);
  if (decision.outcome !== "open_pr") await pushBranch(ctx, { background: decision.outcome === "continue" });
  ctx.checkCancelled();
}

/** The human gate's rules on the branch's change (its diff, paths and the agent's commands, and its objects). */
async function humanGate(ctx: JobContext, base: string) {
  const { git } = ctx.deps;
  const { humanGate: rules } = ctx.config;
  const matched = matchHumanGate(
    { diff: await git.diffFrom(base), paths: await git.changedPaths(base), commands: ctx.state.commands },
    { enabled: rules.enabled, patterns: rules.patterns, paths: rules.paths },
  );
  // Symbolic links and `.gitmodules`, read from the branch's objects (src/core/gates/handback-rules.ts).
  const treeHits = rules.enabled ? await git.gateHits(base) : [];
  const hits = [...matched.hits, ...treeHits];
  return { fired: hits.length > 0, hits };
}

/** The pull request of a complete task, opened or updated and not yet marked ready; whether the human gate fired. */
interface PublishedPull {
  pull: WorkerPull;
  gateFired: boolean;
}

/**
 * The task is complete: its notes set aside, the branch pushed, the pull request opened or updated. A dry run
 * and a best-of candidate end here; otherwise the pull request is marked ready by `readyPull` (after the
 * reviewer, src/worker/job/review.ts, when there is one).
 */
export async function publishPull(
  ctx: JobContext,
  title: string,
): Promise<PublishedPull | { ended: WorkerRun }> {
  const { git, github } = ctx.deps;
  const { state, config, inputs } = ctx;
  const gate = await humanGate(ctx, state.setup!.base);
  state.result.humanGate = { fired: gate.fired, rules: gate.hits };
  if (gate.fired) ctx.log.info(`human gate fired: ${gate.hits.map((r) => r.rule).join(", ")}`);

  // The notes are the worker's, not the project's: they leave the branch before review so they never reach
  // the default branch (where every task's notes would collide). A later round restores them from history.
  committed(
    ctx,
    await git.removeFile(
      PROGRESS_NOTES_PATH,
      `autopilot: set the progress notes aside for review (#${inputs.issue})\n`,
    ),
  );
  // The iteration's work, its note and the notes set aside go out in one push.
  await pushBranch(ctx);
  if (config.dryRun) {
    ctx.log.info("dry run: no pull request is opened");
    return {
      ended: await finish(ctx, "complete", "complete; quality commands pass (dry run: no pull request)"),
    };
  }
  const agent = ctx.agents[state.agentIndex]!;
  const candidate = inputs.candidate;
  const body = renderPullBody({
    issue: inputs.issue,
    result: { ...state.result, status: "finished", result: "complete" },
    quality: state.quality,
    qualitySource: state.qualitySource,
    agent: agentLabel(agent),
    summary: state.lastFinalMessage,
  });
  // A candidate's PR says so in its title; the one chosen continues under the task's own title.
  const prTitle = `${candidate ? `[candidate ${candidate} of ${config.bestOf.candidates.length}] ` : ""}${title.trim()} (#${inputs.issue})`;
  let pull = await github.findOpenPull(ctx.branch);
  if (pull) {
    await github.updatePull(pull.number, { title: prTitle, body });
  } else {
    pull = await github.createPull({ title: prTitle, body, head: ctx.branch, base: inputs.defaultBranch });
  }
  state.result.prNumber = pull.number;
  // A candidate's task stays in progress: the controller chooses among the candidates (best-of.ts).
  if (candidate)
    return {
      ended: await finish(ctx, "complete", `candidate ${candidate}: pull request #${pull.number} opened`),
    };
  return { pull, gateFired: gate.fired };
}

/** The pull request counts as ready: labeled for review with the task, and the job ends complete. */
export async function readyPull(
  ctx: JobContext,
  published: PublishedPull,
  note?: string,
): Promise<WorkerRun> {
  const { pull, gateFired } = published;
  // The PR's label and the task's move to review: one GraphQL mutation when the node ids are known.
  const { labels } = ctx.config;
  await ctx.deps.github.labelForReview(pull.number, ctx.inputs.issue, labels.review, labels.inProgress);
  const opened = gateFired ? "opened; the human gate fired" : "opened";
  return finish(ctx, "complete", `pull request #${pull.number} ${opened}${note ? `; ${note}` : ""}`);
}

async function openPull(ctx: JobContext, title: string): Promise<WorkerRun> {
  const published = await publishPull(ctx, title);
  return "ended" in published ? published.ended : readyPull(ctx, published);
}

async function endWithSignal(
  ctx: JobContext,
  kind: "blocked" | "needs_human",
  signal: Signal,
  reason: string,
): Promise<WorkerRun> {
  const text =
    signal.kind === "blocked" ? signal.reason : signal.kind === "needs_human" ? signal.question : reason;
  const label = kind === "blocked" ? ctx.config.labels.blocked : ctx.config.labels.needsHuman;
  // A blocker gets no comment of its own: the controller's alert on the issue quotes it with the one next
  // step (src/core/session/alerts.ts), and this run's progress comment shows it as its reason.
  await handToPerson(
    ctx,
    kind === "blocked" ? null : renderQuestionComment(text, label, ctx.inputs.issue),
    label,
    kind === "blocked" ? "label the task blocked" : "post the question",
  );
  return finish(ctx, kind, reason);
}

/**
 * The test gate kept failing (the contradiction guard of iteration.ts): the task goes to a person with the
 * failing output (gate-escalation.ts) instead of ending as a failure — document 003's escalation to the human
 * gate. Ends as `needs_human`: the controller treats it like the agent's own question.
 */
async function escalateGate(ctx: JobContext, reason: string): Promise<WorkerRun> {
  const label = ctx.config.labels.needsHuman;
  const failures = ctx.state.quality.filter((q) => !q.passed);
  await handToPerson(
    ctx,
    renderGateEscalationComment(failures, reason, label),
    label,
    "hand the failing gate to a person",
  );
  const names = failures.map((q) => q.command).join(", ") || "the quality gate";
  return finish(ctx, "needs_human", `test gate keeps failing (${names}): ${reason}`);
}

/** The finished run for every outcome but `continue`. */
export async function endFor(
  ctx: JobContext,
  decision: IterationDecision,
  signal: Signal,
  title: string,
): Promise<WorkerRun | null> {
  switch (decision.outcome) {
    case "open_pr":
      return openPull(ctx, title);
    case "blocked":
    case "needs_human":
      return endWithSignal(ctx, decision.outcome, signal, decision.reason);
    case "timeout":
      return finish(ctx, "timeout", decision.reason);
    case "stuck":
      return finish(ctx, "stuck", decision.reason);
    case "contradiction":
      return escalateGate(ctx, decision.reason);
    case "continue":
      return null;
  }
}
