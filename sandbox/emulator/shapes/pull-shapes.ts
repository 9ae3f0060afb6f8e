/** Pull requests, reviews and review comments, as GitHub's JSON shows them. */
import { autoMergeRequestOf } from "../merge/merge-automation-state.js";
import type { Issue, PullFields, Repo, Review, ReviewComment } from "../store.js";
import { IssueShapes } from "./issue-shapes.js";
import { type JsonObject, iso } from "./json-shape.js";

export class PullShapes extends IssueShapes {
  /**
   * A pull request's enabled auto-merge, null when off (sandbox/emulator/merge/merge-automation-state.ts).
   * https://docs.github.com/rest/pulls/pulls#get-a-pull-request — `auto_merge`.
   */
  private autoMerge(repo: Repo, issue: Issue): JsonObject | null {
    const request = autoMergeRequestOf(this.store, repo.fullName, issue.number);
    if (!request) return null;
    return {
      enabled_by: this.user(request.enabledBy),
      merge_method: request.method,
      commit_title: request.commitHeadline ?? "",
      commit_message: request.commitBody ?? "",
    };
  }

  /**
   * One side of a pull request. A fork PR's head is the fork's: its label, owner and repository (`fork: true`),
   * not the base repository's — https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
   */
  private branchSide(repo: Repo, side: { ref: string; sha: string }, fork?: string): JsonObject {
    const owner = fork ? fork.slice(0, fork.indexOf("/")) : repo.owner;
    return {
      label: `${owner}:${side.ref}`,
      ref: side.ref,
      sha: side.sha,
      user: this.user(owner),
      repo: fork ? this.forkRepository(repo, fork) : this.repository(repo),
    };
  }

  /** A fork of `repo` named `fullName`, as far as its pull requests show it (the sandbox keeps no forks). */
  private forkRepository(repo: Repo, fullName: string): JsonObject {
    const [owner = "", name = ""] = fullName.split("/");
    // Every URL of the base repository, pointed at the fork.
    const shape = JSON.parse(
      JSON.stringify(this.repository(repo)).split(`/${repo.fullName}`).join(`/${fullName}`),
    ) as JsonObject;
    let id = 0;
    for (const c of fullName.toLowerCase()) id = (id * 31 + c.charCodeAt(0)) % 1_000_000_000;
    return {
      ...shape,
      id: 2_000_000_000 + id,
      node_id: `R_fork_${Buffer.from(fullName).toString("base64url")}`,
      name,
      full_name: fullName,
      owner: this.user(owner),
      fork: true,
    };
  }

  /** `pull-request` (full) for `GET /pulls/{n}` and webhooks. */
  pull(repo: Repo, issue: Issue & { pull: PullFields }): JsonObject {
    const p = issue.pull;
    const api = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}`;
    const issueApi = `${this.repoApi(repo)}/issues/${issue.number}`;
    return {
      url: api,
      id: p.id,
      node_id: p.nodeId,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueApi,
      commits_url: `${api}/commits`,
      review_comments_url: `${api}/comments`,
      review_comment_url: `${this.repoApi(repo)}/pulls/comments{/number}`,
      comments_url: `${issueApi}/comments`,
      statuses_url: `${this.repoApi(repo)}/statuses/${p.head.sha}`,
      number: issue.number,
      state: issue.state,
      locked: issue.locked,
      title: issue.title,
      user: this.user(issue.user),
      body: issue.body,
      labels: this.store.labelsOf(repo.fullName, issue).map((l) => this.label(repo, l)),
      milestone: null,
      active_lock_reason: issue.activeLockReason,
      created_at: iso(issue.createdAt),
      updated_at: iso(issue.updatedAt),
      closed_at: iso(issue.closedAt),
      merged_at: iso(p.mergedAt),
      merge_commit_sha: p.mergeCommitSha,
      assignee: issue.assignees[0] ? this.user(issue.assignees[0]) : null,
      assignees: issue.assignees.map((a) => this.user(a)),
      requested_reviewers: p.requestedReviewers.map((r) => this.user(r)),
      requested_teams: [],
      head: this.branchSide(repo, p.head, p.headRepo),
      base: this.branchSide(repo, p.base),
      _links: {
        self: { href: api },
        html: { href: html },
        issue: { href: issueApi },
        comments: { href: `${issueApi}/comments` },
        review_comments: { href: `${api}/comments` },
        review_comment: { href: `${this.repoApi(repo)}/pulls/comments{/number}` },
        commits: { href: `${api}/commits` },
        statuses: { href: `${this.repoApi(repo)}/statuses/${p.head.sha}` },
      },
      author_association: this.authorAssociation(repo, issue.user),
      auto_merge: this.autoMerge(repo, issue),
      draft: p.draft,
      merged: p.merged,
      mergeable: p.mergeable,
      rebaseable: p.mergeable,
      mergeable_state: p.mergeableState,
      merged_by: p.mergedBy ? this.user(p.mergedBy) : null,
      comments: this.store.listComments(repo.fullName, issue.number).length,
      review_comments: 0,
      maintainer_can_modify: p.maintainerCanModify,
      commits: p.commits,
      additions: p.additions,
      deletions: p.deletions,
      changed_files: p.changedFiles,
    };
  }

  /** `pull-request-simple` (list items): the full shape minus the counters. */
  pullSimple(repo: Repo, issue: Issue & { pull: PullFields }): JsonObject {
    const full = this.pull(repo, issue);
    for (const key of [
      "merged",
      "mergeable",
      "rebaseable",
      "mergeable_state",
      "merged_by",
      "comments",
      "review_comments",
      "maintainer_can_modify",
      "commits",
      "additions",
      "deletions",
      "changed_files",
    ]) {
      delete full[key];
    }
    return full;
  }

  review(repo: Repo, issue: Issue, review: Review): JsonObject {
    const pullApi = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}#pullrequestreview-${review.id}`;
    return {
      id: review.id,
      node_id: review.nodeId,
      user: this.user(review.user),
      body: review.body,
      state: review.state,
      html_url: html,
      pull_request_url: pullApi,
      author_association: this.authorAssociation(repo, review.user),
      _links: { html: { href: html }, pull_request: { href: pullApi } },
      submitted_at: iso(review.submittedAt) ?? undefined,
      commit_id: review.commitId,
    };
  }

  reviewComment(repo: Repo, issue: Issue, comment: ReviewComment): JsonObject {
    const pullApi = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const url = `${this.repoApi(repo)}/pulls/comments/${comment.id}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}#discussion_r${comment.id}`;
    return {
      url,
      id: comment.id,
      node_id: comment.nodeId,
      pull_request_review_id: comment.reviewId,
      diff_hunk: "",
      path: comment.path,
      commit_id: comment.commitId,
      original_commit_id: comment.commitId,
      user: this.user(comment.user),
      body: comment.body,
      created_at: iso(comment.createdAt),
      updated_at: iso(comment.createdAt),
      html_url: html,
      pull_request_url: pullApi,
      author_association: this.authorAssociation(repo, comment.user),
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pullApi } },
      line: comment.line ?? undefined,
      side: "RIGHT",
      ...(comment.inReplyTo !== undefined ? { in_reply_to_id: comment.inReplyTo } : {}),
    };
  }
}
