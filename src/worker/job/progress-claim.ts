/**
 * Taking the attempt through the progress comment (docs/ARCHITECTURE.md, "Claim"): read the worker's own
 * comments for an earlier result marker of the task, then write ours and check that no concurrent run of the
 * same attempt wrote after us or created its comment first. The decision itself is src/worker/job/claim-decision.ts.
 */
import { parseWorkerResult, type WorkerResult } from "../../core/tasks/worker-result.js";
import type { WorkerGitHub } from "../../github/worker-github.js";
import type { WorkerComment, WorkerIssue } from "../../github/worker-github-data.js";
import { ownComments } from "./own-comments.js";

interface ExistingProgress {
  comment: WorkerComment;
  parsed: WorkerResult | null;
}

/** The task issue's comments, and the worker's own progress comment of this task if there is one. */
export async function readProgress(
  github: WorkerGitHub,
  issue: number,
  log: { warning(message: string): void },
): Promise<{ comments: WorkerComment[]; existing: ExistingProgress | null }> {
  // With the token's own account in the same query: ownComments below needs it.
  const comments = await github.listIssueCommentsAndSelf(issue);
  const mine = (await ownComments(github, comments, log))
    .map((comment) => ({ comment, parsed: parseWorkerResult(comment.body) }))
    .filter((entry) => entry.parsed?.issue === issue);
  return { comments, existing: mine[0] ?? null };
}

/**
 * Writes our progress comment (updating the existing one, or creating it). `written` learns its id as soon as
 * it exists (null again when we withdraw), so a job that fails later still reports there. Returns why another
 * run holds the attempt, or null when it is ours.
 *
 * A new comment is followed by one read of the issue's comments and of the issue itself
 * (`readIssueWithComments`, one GraphQL query, every comment): `issueRead` gets the issue as it is after our
 * write, which is when the job reads it anyway (not when GitHub did not answer the query: the job then reads
 * the issue itself), and `stateLabels` are the labels whose node ids the query learns for later transitions.
 */
export async function writeProgressClaim(options: {
  github: WorkerGitHub;
  attempt: { issue: number; attempt: number; dispatchId: string };
  existing: WorkerComment | null;
  body: string;
  written: (commentId: number | null) => void;
  stateLabels?: string[];
  issueRead?: (issue: WorkerIssue) => void;
}): Promise<string | null> {
  const { github, attempt, existing, body, written } = options;
  if (existing) {
    await github.updateComment(existing.id, body);
    written(existing.id);
    // Re-read: a concurrent run that wrote after us owns the attempt.
    const reread = await github.getComment(existing.id);
    const marker = reread ? parseWorkerResult(reread.body) : null;
    if (marker && marker.dispatchId !== attempt.dispatchId && marker.attempt === attempt.attempt) {
      written(null);
      return `dispatch ${marker.dispatchId} claimed the attempt at the same time`;
    }
    return null;
  }
  const created = await github.createComment(attempt.issue, body);
  written(created.id);
  // Two first runs may both have found no comment: the older comment wins, the other run withdraws.
  const read = await github.readIssueWithComments(attempt.issue, options.stateLabels ?? []);
  const again = await ownComments(github, read.comments);
  const rivals = again.filter((c) => {
    const parsed = parseWorkerResult(c.body);
    return parsed?.issue === attempt.issue && c.id !== created.id;
  });
  if (rivals.some((c) => c.id < created.id)) {
    await github.deleteComment(created.id);
    written(null);
    return "another run created the progress comment first";
  }
  if (read.issue) options.issueRead?.(read.issue);
  return null;
}
