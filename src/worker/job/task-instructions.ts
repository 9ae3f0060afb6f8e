/**
 * The instructions writers gave for this task with `/autopilot fix` or `/autopilot follow-up`, for the agent's
 * prompt. The controller answers each such command with a comment on the task issue whose marker names the
 * command's comment (src/core/reconcile/commands/fix-follow-up.ts); the worker reads that comment itself and
 * keeps it only when its author has write access now and it is a fix or follow-up of this very task (on the task
 * issue, on the task's open pull request, or naming the task by number). The controller's quote beside the marker
 * is never used: what reaches the agent is what the writer wrote, as GitHub returns it.
 */
import { commentOfInstructionsMarker } from "../../core/contract.js";
import { parseCommand } from "../../core/tasks/commands.js";
import { canWrite } from "../../core/world.js";
import type { WorkerGitHub } from "../../github/worker-github.js";
import type { WorkerComment } from "../../github/worker-github-data.js";
import { ownComments } from "./own-comments.js";

/** At most this many, the newest: earlier rounds' instructions were for those rounds. */
const MAX_INSTRUCTIONS = 3;

export interface TaskInstruction {
  author: string;
  kind: "fix" | "follow-up";
  body: string;
  createdAt: string;
}

export async function gatherInstructions(options: {
  github: Pick<WorkerGitHub, "getSelfId" | "getComment" | "getPermission">;
  issue: number;
  /** The task's open pull request, when there is one (a command there names the task without `#N`). */
  pull: number | null;
  /** The task issue's comments, as read when the job started. */
  comments: readonly WorkerComment[];
  log: { debug(message: string): void };
  warn: (message: string) => void;
}): Promise<TaskInstruction[]> {
  const { github, log } = options;
  const marked = options.comments.filter((c) => commentOfInstructionsMarker(c.body) !== null);
  if (marked.length === 0) return [];
  // Only Autopilot's own comments point at instructions: by the token's account id, as for its result marker.
  const own = await ownComments(github, marked);
  const ids = [...new Set(own.map((c) => commentOfInstructionsMarker(c.body)!))].slice(-MAX_INSTRUCTIONS);
  const kept: TaskInstruction[] = [];
  for (const id of ids) {
    try {
      const source = await github.getComment(id);
      const read = source ? await instructionOf(github, source, options) : "it was deleted";
      if (typeof read === "string") log.debug(`instructions of comment ${id} left out: ${read}`);
      else kept.push(read);
    } catch (error) {
      options.warn(
        `could not read the instructions of comment ${id}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return kept.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** The writer's instructions in a command comment, or why it is not this task's writer's instructions. */
async function instructionOf(
  github: Pick<WorkerGitHub, "getPermission">,
  source: WorkerComment,
  options: { issue: number; pull: number | null },
): Promise<TaskInstruction | string> {
  if (!source.author || source.authorType === "Bot" || source.author.endsWith("[bot]"))
    return "not a person's";
  // Where it was given decides what a command without `#N` is about: GitHub always says (`issue_url`).
  const where = source.issue ?? null;
  if (where === null) return "GitHub did not say where it was given";
  const parsed = parseCommand(source.body, { issue: where, trackingIssue: null });
  if (parsed?.kind !== "command") return "no command in it";
  const command = parsed.command;
  if (command.name !== "fix" && command.name !== "follow-up") return `a \`${command.name}\` command`;
  // Named by number, or given without one on the task's open pull request.
  const forTask =
    command.issue === options.issue ||
    (options.pull !== null && where === options.pull && command.issue === where);
  if (!forTask) return `for #${command.issue}, not this task`;
  const permission = await github.getPermission(source.author);
  if (!canWrite(permission)) return `${source.author} has ${permission} access`;
  return {
    author: source.author,
    kind: command.name,
    body: command.instructions,
    createdAt: source.createdAt,
  };
}
