/**
 * The worker believes a result marker only in a comment its own account wrote: GitHub's account id of the
 * comment's author must be the token's own (`getSelfId`), never a login or a `Bot` type someone else can
 * also have. A marker anyone else wrote cannot make the worker give up its claim or carry a spent budget.
 */
import { logSafe } from "../../core/tasks/authorship.js";
import { mentionsWorkerResult } from "../../core/contract.js";
import type { WorkerGitHub } from "../../github/worker-github.js";
import type { WorkerComment } from "../../github/worker-github-data.js";

export async function ownComments(
  github: Pick<WorkerGitHub, "getSelfId">,
  comments: WorkerComment[],
  log?: { warning(message: string): void },
): Promise<WorkerComment[]> {
  const self = await github.getSelfId();
  const own: WorkerComment[] = [];
  for (const comment of comments) {
    if (self !== null && comment.authorId === self) {
      own.push(comment);
    } else if (mentionsWorkerResult(comment.body)) {
      log?.warning(
        `ignoring a worker-result marker in comment ${comment.id} by ${logSafe(comment.author ?? "unknown", 60)}, which this worker's account did not write: ${logSafe(comment.body)}`,
      );
    }
  }
  return own;
}
