/**
 * The reviewer's verdict posted as a pull-request review (REST "Create a review for a pull request",
 * https://docs.github.com/en/rest/pulls/reviews#create-a-review-for-a-pull-request), with line comments. The
 * event is always `COMMENT`: the review is written by the account that opened the pull request, and GitHub
 * refuses `APPROVE` and `REQUEST_CHANGES` on one's own pull request (422); the verdict is in the body's hidden
 * marker (src/core/contract.ts `reviewMarker`), which the controller reads from the review at the head.
 */
import type { AutopilotOctokit } from "./transport/octokit.js";
import { status } from "./worker-github-data.js";

export interface ReviewToPost {
  /** The head the review is about: a review of an older commit never reads as one of a newer. */
  commitId: string;
  body: string;
  comments: { path: string; line: number; body: string }[];
}

/**
 * Posts the review. GitHub refuses the whole review when one comment's line is not on the diff (422, "Pull
 * request review thread line must be part of the diff", "Path could not be resolved"): the worker sends only
 * lines the diff shows (src/core/agent/diff-lines.ts), and should GitHub still refuse, the comments go into the
 * body and the review is sent once more, so the verdict is never lost to a line number.
 */
export async function createPullReview(
  octokit: AutopilotOctokit,
  where: { owner: string; repo: string },
  pr: number,
  review: ReviewToPost,
): Promise<void> {
  const send = (body: string, comments: ReviewToPost["comments"]) =>
    octokit.rest.pulls.createReview({
      ...where,
      pull_number: pr,
      commit_id: review.commitId,
      event: "COMMENT",
      body,
      ...(comments.length ? { comments: comments.map((c) => ({ ...c, side: "RIGHT" as const })) } : {}),
    });
  try {
    await send(review.body, review.comments);
  } catch (error) {
    if (status(error) !== 422 || review.comments.length === 0) throw error;
    await send(withCommentsInBody(review), []);
  }
}

/** The line comments written out above the body's closing marker (its last line). */
function withCommentsInBody(review: ReviewToPost): string {
  const lines = review.body.split("\n");
  const marker = lines.pop() ?? "";
  const listed = review.comments.map(
    (c) => `- \`${c.path.replace(/[`\r\n]/g, "")}\` line ${c.line}:\n${c.body.replace(/^/gm, "  ")}`,
  );
  return [...lines, "", "Line comments GitHub did not place on the diff:", ...listed, "", marker].join("\n");
}
