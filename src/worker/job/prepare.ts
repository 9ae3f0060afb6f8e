/**
 * Before the first iteration: the task read and checked (open, its text the text the controller approved), the
 * task branch checked out (created, or resumed with the default branch merged in), the project's `setup:` run
 * in the sandbox, the progress notes ready, and what people said about the task read for the prompt.
 */
import { PROGRESS_NOTES_PATH } from "../../core/agent/prompt.js";
import { agentLabel } from "../../core/config/index.js";
import { workspaceOfTask } from "../../core/gates/workspace-scope.js";
import type { WorkerComment, WorkerIssue } from "../../github/worker-github-data.js";
import { SCRATCH_EXCLUDES, type WorkerRun } from "../worker-deps.js";
import { finish } from "./ending.js";
import { readFeedback, type TaskFeedback } from "./feedback.js";
import { type JobContext, stateLabels } from "./job-context.js";
import { ensureProgressNotes } from "./progress-notes.js";
import { taskTextRefusal } from "./task-text-check.js";

/** What the loop starts from. */
export interface Prepared {
  issue: WorkerIssue;
  feedback: TaskFeedback;
}

/** Why the job must not work on this issue: closed, or its text is not the text the controller approved. */
function refuseTask(ctx: JobContext, issue: WorkerIssue): string | null {
  if (issue.state === "closed") return `issue #${issue.number} is closed`;
  return taskTextRefusal(issue, ctx.inputs.taskDigest);
}

/** Checks out the task branch (created, or resumed with the default branch merged in); returns the conflicts. */
async function prepareBranch(ctx: JobContext): Promise<string[]> {
  const { git } = ctx.deps;
  const { inputs, state, branch } = ctx;
  const removed = await git.prepare();
  if (removed.length) ctx.log.info(`removed persisted credentials from .git/config: ${removed.join(", ")}`);
  const setup = await git.setupBranch(branch, inputs.defaultBranch);
  state.setup = setup;
  await git.addExcludes(SCRATCH_EXCLUDES);
  ctx.log.info(
    setup.resumed
      ? `resumed ${branch} at ${setup.head.slice(0, 12)}`
      : `created ${branch} from ${inputs.defaultBranch} at ${setup.head.slice(0, 12)}`,
  );
  if (!setup.resumed) return [];
  const merge = await git.mergeDefault(
    inputs.defaultBranch,
    `autopilot: merge ${inputs.defaultBranch} into ${branch}`,
  );
  state.setup = { ...setup, base: merge.base };
  if (merge.merged) ctx.log.info(`merged ${inputs.defaultBranch} into ${branch}`);
  if (merge.conflicts.length)
    ctx.warn(`${inputs.defaultBranch} does not merge cleanly: ${merge.conflicts.join(", ")}`);
  return merge.conflicts;
}

/**
 * The project's setup (`setup:` in .github/autopilot.yml), once, before the first iteration. It runs the
 * repository's code (install and lifecycle scripts), so it runs the way the quality commands do: inside the
 * worker's sandbox, as the agent's user, without the token. A failure ends the job with the command named:
 * the agent did not write the setup, and its output is not the agent's to act on. Returns the failure, or null.
 */
async function projectSetup(ctx: JobContext, conflicted: boolean): Promise<string | null> {
  const commands = ctx.config.setup;
  if (commands.length === 0) return null;
  if (conflicted) {
    // The merge left conflict markers (a lockfile's, perhaps) for the agent to resolve: an install would fail.
    ctx.warn("`setup` skipped: the merge of the default branch left conflicts for the agent to resolve");
    return null;
  }
  const limitMs = ctx.config.setupTimeoutMinutes * 60_000;
  const limit = `setupTimeoutMinutes (${ctx.config.setupTimeoutMinutes} min)`;
  const started = ctx.now();
  for (const command of commands) {
    ctx.checkCancelled();
    const left = limitMs - (ctx.now() - started);
    if (left <= 0) return `project setup ran out of time: ${limit} passed before \`${command}\``;
    ctx.log.info(`setup: ${command}`);
    const [result] = await ctx.deps.quality.run([command], left);
    if (result?.output.trim()) ctx.log.info(result.output);
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
    ctx.log.info(`setup passed: ${command} (${Math.round(result.durationMs / 1000)} s)`);
  }
  // What the setup changed in tracked files is not the agent's work (installed packages stay: excluded).
  await ctx.deps.git.resetWorkTree();
  return null;
}

/** Notes set aside when the PR opened come back for the next round (after the setup, which may reset the tree). */
async function prepareNotes(ctx: JobContext, title: string): Promise<void> {
  if (ctx.state.setup?.resumed && (await ctx.deps.git.restoreDeletedFile(PROGRESS_NOTES_PATH)))
    ctx.log.info("restored the progress notes from the branch history");
  await ensureProgressNotes(ctx.tree, ctx.inputs.issue, title);
}

/**
 * The job after the claim, up to the first iteration: the finished run when the task may not be worked.
 * `comments` are the issue's as the claim read them; `claimedIssue` the issue when the claim's last query read it
 * (nothing is read or written between that answer and the checks on it), else it is read here.
 */
export async function prepare(
  ctx: JobContext,
  comments: WorkerComment[],
  claimedIssue: WorkerIssue | null,
): Promise<{ ended: WorkerRun } | Prepared> {
  const issue =
    claimedIssue ?? (await ctx.deps.github.readIssueAndLabels(ctx.inputs.issue, stateLabels(ctx)));
  const refusal = refuseTask(ctx, issue);
  if (refusal) return { ended: await finish(ctx, "failed", refusal) };
  const { inputs, config } = ctx;
  if (ctx.agents.length === 0)
    return {
      ended: await finish(
        ctx,
        "failed",
        `candidate ${inputs.candidate} of a best-of round is not in \`bestOf.candidates\` of the configuration`,
      ),
    };
  if (inputs.candidate)
    ctx.log.info(
      `best of ${config.bestOf.candidates.length}: candidate ${inputs.candidate} (${agentLabel(ctx.agents[0]!)}) on ${ctx.branch}`,
    );
  const workspace = workspaceOfTask(issue.labels, config.workspaces);
  ctx.state.workspace = workspace;
  if (workspace)
    ctx.log.info(`workspace ${workspace.name}: the agent starts in ${workspace.directory ?? "the root"}`);
  const conflicts = await prepareBranch(ctx);
  const setupFailure = await projectSetup(ctx, conflicts.length > 0);
  if (setupFailure) return { ended: await finish(ctx, "failed", setupFailure) };
  await prepareNotes(ctx, issue.title);
  const feedback = await readFeedback(ctx, comments, conflicts);
  return { issue, feedback };
}
