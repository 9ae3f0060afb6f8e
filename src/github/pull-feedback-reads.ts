/**
 * What the worker reads of a task's pull request for the agent's prompt: the failing checks and statuses of its
 * head, and the review feedback (reviews with a body, inline comments not in a resolved conversation).
 */
import { FAILING, type FailingCheck, type ReviewFeedback } from "./worker-github-data.js";
import { RESOLVED_REVIEW_COMMENTS_QUERY } from "./worker-queries.js";
import type { AutopilotOctokit } from "./transport/octokit.js";

export async function listFailingChecks(
  octokit: AutopilotOctokit,
  owner: string,
  repo: string,
  ref: string,
): Promise<FailingCheck[]> {
  const failing: FailingCheck[] = [];
  const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
    owner,
    repo,
    ref,
    filter: "latest",
    per_page: 100,
  });
  for (const run of runs) {
    if (run.status !== "completed" || !run.conclusion || !FAILING.has(run.conclusion)) continue;
    failing.push({
      name: run.name,
      conclusion: run.conclusion,
      title: run.output?.title ?? null,
      summary: run.output?.summary ?? null,
      text: run.output?.text ?? null,
      url: run.html_url ?? run.details_url ?? null,
    });
  }
  const { data: combined } = await octokit.rest.repos.getCombinedStatusForRef({
    owner,
    repo,
    ref,
    per_page: 100,
  });
  for (const item of combined.statuses) {
    if (item.state !== "failure" && item.state !== "error") continue;
    failing.push({
      name: item.context,
      conclusion: item.state,
      title: null,
      summary: item.description ?? null,
      text: null,
      url: item.target_url ?? null,
    });
  }
  return failing;
}

export async function listReviewFeedback(
  octokit: AutopilotOctokit,
  owner: string,
  repo: string,
  pr: number,
): Promise<ReviewFeedback[]> {
  const [reviews, comments] = await Promise.all([
    octokit.paginate(octokit.rest.pulls.listReviews, {
      owner,
      repo,
      pull_number: pr,
      per_page: 100,
    }),
    octokit.paginate(octokit.rest.pulls.listReviewComments, {
      owner,
      repo,
      pull_number: pr,
      per_page: 100,
    }),
  ]);
  const feedback: ReviewFeedback[] = [];
  for (const review of reviews) {
    if (!review.body?.trim()) continue;
    feedback.push({
      kind: "review",
      author: review.user?.login ?? null,
      authorType: review.user?.type ?? null,
      state: review.state ?? null,
      body: review.body,
      path: null,
      line: null,
      createdAt: review.submitted_at ?? "",
    });
  }
  const resolved = await resolvedReviewComments(octokit, owner, repo, pr);
  for (const comment of comments) {
    if (resolved.has(comment.id)) continue;
    feedback.push({
      kind: "review_comment",
      author: comment.user?.login ?? null,
      authorType: comment.user?.type ?? null,
      state: null,
      body: comment.body,
      path: comment.path ?? null,
      line: comment.line ?? comment.original_line ?? null,
      createdAt: comment.created_at,
    });
  }
  return feedback.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * Ids of the inline comments in resolved review conversations: GitHub's REST listing does not say which are
 * resolved. No answer: none are left out (the agent sees one comment too many, never one too few).
 */
async function resolvedReviewComments(
  octokit: AutopilotOctokit,
  owner: string,
  repo: string,
  pr: number,
): Promise<Set<number>> {
  try {
    const data = await octokit.graphql<{
      repository?: {
        pullRequest?: {
          reviewThreads?: {
            nodes?: ({
              isResolved: boolean;
              comments?: { nodes?: ({ databaseId?: number | null } | null)[] };
            } | null)[];
          };
        } | null;
      } | null;
    }>(RESOLVED_REVIEW_COMMENTS_QUERY, { owner, name: repo, number: pr });
    const ids = new Set<number>();
    for (const thread of data.repository?.pullRequest?.reviewThreads?.nodes ?? []) {
      if (!thread?.isResolved) continue;
      for (const c of thread.comments?.nodes ?? [])
        if (typeof c?.databaseId === "number") ids.add(c.databaseId);
    }
    return ids;
  } catch {
    return new Set();
  }
}
