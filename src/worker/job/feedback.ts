/**
 * What people said about the task since it started, for the agent's prompt: answers on the issue and review
 * feedback on the pull request, from people with write access only, and the failing checks of the PR's head.
 */
import { AUTOPILOT_MARKER_PREFIX } from "../../core/contract.js";
import { parseCommand } from "../../core/tasks/commands.js";
import { canWrite } from "../../core/world.js";
import type { WorkerGitHub } from "../../github/worker-github.js";
import type {
  FailingCheck,
  ReviewFeedback,
  WorkerComment,
  WorkerPull,
} from "../../github/worker-github-data.js";
import type { JobContext } from "./job-context.js";
import { gatherInstructions, type TaskInstruction } from "./task-instructions.js";

export interface TaskFeedback {
  answers: WorkerComment[];
  /** Writers' `/autopilot fix` and `follow-up` instructions, oldest first (task-instructions.ts). */
  instructions: TaskInstruction[];
  reviews: ReviewFeedback[];
  checks: FailingCheck[];
  pull: WorkerPull | null;
}

interface Authored {
  author: string | null;
  authorType: string | null;
  body: string;
}

/**
 * What people with write access wrote, in order: bots, Autopilot's own markers and `/autopilot` commands are
 * left out (a command anywhere in a comment makes it one for Autopilot, as the controller reads it, answers.ts:
 * a `fix`'s words reach the agent only through the worker's own check of them, task-instructions.ts), and so is
 * everyone whose permission (asked of GitHub, cached for the job) is below write.
 */
export async function writersOnly<T extends Authored>(
  github: WorkerGitHub,
  items: T[],
  issue: number,
  log: { debug(message: string): void },
): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) {
    if (!item.author || item.authorType === "Bot" || item.author.endsWith("[bot]")) continue;
    if (item.body.includes(AUTOPILOT_MARKER_PREFIX)) continue;
    if (parseCommand(item.body, { issue, trackingIssue: null }) !== null) continue;
    const permission = await github.getPermission(item.author);
    if (canWrite(permission)) kept.push(item);
    else log.debug(`ignoring text by ${item.author} (${permission} access)`);
  }
  return kept;
}

/**
 * Reads the feedback. Bots, Autopilot's own markers and `/autopilot` commands are no feedback; a failure to
 * read the pull request's part is warned about and leaves it empty.
 */
export async function gatherFeedback(options: {
  github: WorkerGitHub;
  /** The task issue. */
  issue: number;
  branch: string;
  /** The task issue's comments, as read when the job started. */
  comments: WorkerComment[];
  log: { debug(message: string): void };
  warn: (message: string) => void;
}): Promise<TaskFeedback> {
  const { github, log } = options;
  const writers = <T extends Authored>(items: T[]) => writersOnly(github, items, options.issue, log);
  const answers = await writers(options.comments);
  let pull: WorkerPull | null = null;
  let reviews: ReviewFeedback[] = [];
  let checks: FailingCheck[] = [];
  try {
    pull = await github.findOpenPull(options.branch);
    if (pull) {
      reviews = await writers(await github.listReviewFeedback(pull.number));
      checks = await github.listFailingChecks(pull.headSha);
    }
  } catch (error) {
    options.warn(
      `could not read the pull request's feedback: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const instructions = await gatherInstructions({
    github,
    issue: options.issue,
    pull: pull?.number ?? null,
    comments: options.comments,
    log,
    warn: options.warn,
  });
  return { answers, instructions, reviews, checks, pull };
}

/** A merge conflict with the default branch, told to the agent the way a failing check is. */
function mergeConflictCheck(base: string, files: string[]): FailingCheck {
  return {
    name: `merge with ${base}`,
    conclusion: "conflict",
    title: `${base} has moved on and no longer merges cleanly into this branch`,
    summary: [
      `Run \`git merge origin/${base}\`, resolve the conflicts, make sure the tests still pass, and commit the merge`,
      "(a plain merge commit: do not rebase). Conflicting files:",
      ...files.map((file) => `- ${file}`),
    ].join("\n"),
    text: null,
    url: null,
  };
}

/** Review comments and checks on the task's PR, with the merge conflicts first when there are any. */
export async function readFeedback(
  ctx: JobContext,
  comments: WorkerComment[],
  conflicts: string[],
): Promise<TaskFeedback> {
  const feedback = await gatherFeedback({
    github: ctx.deps.github,
    issue: ctx.inputs.issue,
    branch: ctx.branch,
    comments,
    log: ctx.log,
    warn: (message) => ctx.warn(message),
  });
  if (feedback.pull) ctx.state.result.prNumber = feedback.pull.number;
  if (conflicts.length) feedback.checks.unshift(mergeConflictCheck(ctx.inputs.defaultBranch, conflicts));
  return feedback;
}
