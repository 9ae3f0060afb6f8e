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

/** Writes our progress comment: the existing one updated, or a new one. Returns its id and whether it is new. */
export async function writeProgressComment(
  github: WorkerGitHub,
  issue: number,
  existing: WorkerComment | null,
  body: string,
): Promise<{ commentId: number; created: boolean }> {
  if (existing) {
    await github.updateComment(existing.id, body);
    return { commentId: existing.id, created: false };
  }
  const created = await github.createComment(issue, body);
  return { commentId: created.id, created: true };
}

/**
 * After our write (writeProgressComment): whether another run holds the attempt. `elsewhere` says why it does
 * (our new comment is then deleted: the caller no longer has one), null when the attempt is ours.
 *
 * A new comment is followed by one read of the issue's comments and of the issue itself
 * (`readIssueWithComments`, one GraphQL query, every comment): `issue` is the issue as it is after our write,
 * which is when the job reads it anyway (null when GitHub did not answer that part: the job then reads the
 * issue itself), and `stateLabels` are the labels whose node ids the query learns for later transitions.
 */
export async function claimRival(options: {
  github: WorkerGitHub;
  attempt: { issue: number; attempt: number; dispatchId: string };
  written: { commentId: number; created: boolean };
  stateLabels: string[];
}): Promise<{ elsewhere: string | null; issue: WorkerIssue | null }> {
  const { github, attempt, written } = options;
  if (!written.created) {
    // Re-read: a concurrent run that wrote after us owns the attempt.
    const reread = await github.getComment(written.commentId);
    const marker = reread ? parseWorkerResult(reread.body) : null;
    if (marker && marker.dispatchId !== attempt.dispatchId && marker.attempt === attempt.attempt)
      return { elsewhere: `dispatch ${marker.dispatchId} claimed the attempt at the same time`, issue: null };
    return { elsewhere: null, issue: null };
  }
  // Two first runs may both have found no comment: the older comment wins, the other run withdraws.
  const read = await github.readIssueWithComments(attempt.issue, options.stateLabels);
  const again = await ownComments(github, read.comments);
  const rivals = again.filter((c) => {
    const parsed = parseWorkerResult(c.body);
    return parsed?.issue === attempt.issue && c.id !== written.commentId;
  });
  if (rivals.some((c) => c.id < written.commentId)) {
    await github.deleteComment(written.commentId);
    return { elsewhere: "another run created the progress comment first", issue: null };
  }
  return { elsewhere: null, issue: read.issue ?? null };
}
