/**
 * Steering a running task: between two iterations, what a writer wrote on the task's issue, or on its pull
 * request's conversation, since the job read them reaches the agent's next prompt — fenced as data like every
 * person's words (src/core/agent/prompt.ts), after the same checks as the feedback read at the start
 * (feedback.ts `writersOnly`: a writer's, not a bot's, not a command, not one of Autopilot's markers). A
 * stranger's comment never reaches it. Each comment the agent gets is marked with an "eyes" reaction, so the
 * writer sees it arrived.
 *
 * Each thread is read with one conditional request (`since` the job's start, the same URL every time): while
 * nothing changed, GitHub answers 304, which costs nothing. An edit of a comment the job has already read is not
 * new words: only comments the job has not seen count.
 */
import type { WorkerComment } from "../../github/worker-github-data.js";
import { writersOnly } from "./feedback.js";
import { errorMessage, type JobContext } from "./job-context.js";

/**
 * `since` is the runner's clock, GitHub compares with its own: a margin so that a runner clock ahead of GitHub's
 * does not hide a comment written just after the job started. What the margin brings in twice is skipped by id.
 */
const CLOCK_MARGIN_MS = 10 * 60_000;

/** What a steering read found: the writers' new comments, and every comment id it read (to skip next time). */
interface Steering {
  comments: WorkerComment[];
  read: number[];
}

/**
 * The writers' comments on the issue and on `pull` (its conversation) not in `seen`, oldest first. A failed
 * read, or a permission GitHub did not answer, only warns: the agent goes on without them, and the next boundary
 * reads them again.
 */
export async function steer(
  ctx: JobContext,
  seen: ReadonlySet<number>,
  pull: number | null,
): Promise<Steering> {
  const { github } = ctx.deps;
  const since = new Date(ctx.startedAt - CLOCK_MARGIN_MS).toISOString();
  const fresh: WorkerComment[] = [];
  for (const thread of pull === null ? [ctx.inputs.issue] : [ctx.inputs.issue, pull]) {
    try {
      const listed = await github.listCommentsSince(thread, since);
      fresh.push(...listed.filter((c) => !seen.has(c.id)));
    } catch (error) {
      ctx.warn(`could not read new comments on #${thread}: ${errorMessage(error)}`);
    }
  }
  fresh.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);
  let comments: WorkerComment[];
  try {
    comments = await writersOnly(github, fresh, ctx.inputs.issue, ctx.log);
  } catch (error) {
    // A permission GitHub did not answer (a rate limit is no answer: transport/errors.ts) leaves these comments
    // unread, for the next boundary to check again; the iteration goes on without them rather than the job failing.
    ctx.warn(`could not check who wrote the new comments: ${errorMessage(error)}`);
    return { comments: [], read: [] };
  }
  for (const comment of comments) {
    ctx.log.info(
      `steering: @${comment.author} commented (${comment.id}); the agent gets it in this iteration`,
    );
    try {
      if (!ctx.config.dryRun) await github.reactToComment(comment.id, "eyes");
    } catch (error) {
      ctx.log.debug(`could not react to comment ${comment.id}: ${errorMessage(error)}`);
    }
  }
  return { comments, read: fresh.map((c) => c.id) };
}
