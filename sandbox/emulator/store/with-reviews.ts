/** Pull request review requests and reviews. */
import type { Issue, Reaction, ReactionContent } from "./issue-records.js";
import { reactOnce } from "./reaction-records.js";
import { encodeNodeId } from "./node-ids.js";
import type { PullFields, Review, ReviewComment } from "./pull-records.js";
import type { RepoRef } from "./repo-records.js";
import { StoreError } from "./store-error.js";
import { StoreWithPulls } from "./with-pulls.js";

interface CreateReviewInput {
  author: string;
  body?: string;
  /** Without an event the review stays PENDING until {@link SandboxStore.submitReview}. */
  event?: "APPROVE" | "REQUEST_CHANGES" | "COMMENT";
  commitId?: string;
  /** Inline comments on the diff. */
  comments?: { path: string; body: string; line?: number }[];
}

export class StoreWithReviews extends StoreWithPulls {
  requestReviewers(repo: RepoRef, number: number, reviewers: string[], actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    for (const reviewer of reviewers) {
      if (!this.getUser(reviewer)) {
        throw new StoreError(
          422,
          "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the repository.",
        );
      }
      if (issue.pull.requestedReviewers.some((r) => r.toLowerCase() === reviewer.toLowerCase())) continue;
      issue.pull.requestedReviewers.push(reviewer);
      issue.events.push(this.event("review_requested", actor, { requestedReviewer: reviewer }));
      this.emit({
        name: "pull_request",
        action: "review_requested",
        repo: state.repo,
        sender: actor,
        pull: issue,
        requestedReviewer: reviewer,
      });
    }
    return issue;
  }

  removeRequestedReviewers(repo: RepoRef, number: number, reviewers: string[], actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const drop = new Set(reviewers.map((r) => r.toLowerCase()));
    const removed = issue.pull.requestedReviewers.filter((r) => drop.has(r.toLowerCase()));
    issue.pull.requestedReviewers = issue.pull.requestedReviewers.filter((r) => !drop.has(r.toLowerCase()));
    for (const reviewer of removed) {
      this.emit({
        name: "pull_request",
        action: "review_request_removed",
        repo: state.repo,
        sender: actor,
        pull: issue,
        requestedReviewer: reviewer,
      });
    }
    return issue;
  }

  /**
   * Creates a review with `commitId` = the PR head now (unless given). With an event it is submitted at once
   * (emits `pull_request_review.submitted`); without one it stays PENDING.
   */
  createReview(repo: RepoRef, number: number, input: CreateReviewInput): Review {
    const issue = this.requirePull(repo, number);
    if (input.event && input.event !== "COMMENT" && issue.user.toLowerCase() === input.author.toLowerCase()) {
      throw new StoreError(422, "Unprocessable Entity", [
        { resource: "PullRequestReview", code: "custom", message: "Can not approve your own pull request" },
      ]);
    }
    if (input.event === "REQUEST_CHANGES" || input.event === "COMMENT") {
      if (!input.body?.trim() && input.event === "REQUEST_CHANGES") {
        throw new StoreError(422, "Unprocessable Entity", [
          {
            resource: "PullRequestReview",
            code: "custom",
            message: "Body is required for event REQUEST_CHANGES",
          },
        ]);
      }
    }
    const id = this.id();
    const review: Review = {
      id,
      nodeId: encodeNodeId("PullRequestReview", id),
      user: input.author,
      body: input.body ?? "",
      state: "PENDING",
      commitId: input.commitId ?? issue.pull.head.sha,
      submittedAt: null,
      comments: [],
    };
    for (const comment of input.comments ?? []) {
      const commentId = this.id();
      review.comments.push({
        id: commentId,
        nodeId: encodeNodeId("PullRequestReviewComment", commentId),
        reviewId: id,
        user: input.author,
        body: comment.body,
        path: comment.path,
        line: comment.line ?? null,
        commitId: review.commitId,
        createdAt: this.now(),
        reactions: [],
      });
    }
    issue.pull.reviews.push(review);
    if (input.event) this.submitReview(repo, number, id, input.event, input.body, input.author);
    return review;
  }

  /** Submits a PENDING review. */
  submitReview(
    repo: RepoRef,
    number: number,
    reviewId: number,
    event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT",
    body: string | undefined,
    actor: string,
  ): Review {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const review = issue.pull.reviews.find((r) => r.id === reviewId);
    if (!review) throw new StoreError(404, "Not Found");
    if (review.state !== "PENDING") {
      throw new StoreError(422, "Unprocessable Entity", [
        { resource: "PullRequestReview", code: "custom", message: "Can not submit a non-pending review" },
      ]);
    }
    review.state =
      event === "APPROVE" ? "APPROVED" : event === "REQUEST_CHANGES" ? "CHANGES_REQUESTED" : "COMMENTED";
    if (body !== undefined) review.body = body;
    review.submittedAt = this.now();
    issue.pull.requestedReviewers = issue.pull.requestedReviewers.filter(
      (r) => r.toLowerCase() !== review.user.toLowerCase(),
    );
    this.emit({
      name: "pull_request_review",
      action: "submitted",
      repo: state.repo,
      sender: actor,
      pull: issue,
      review,
    });
    return review;
  }

  dismissReview(repo: RepoRef, number: number, reviewId: number, actor: string): Review {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const review = issue.pull.reviews.find((r) => r.id === reviewId);
    if (!review) throw new StoreError(404, "Not Found");
    review.state = "DISMISSED";
    this.emit({
      name: "pull_request_review",
      action: "dismissed",
      repo: state.repo,
      sender: actor,
      pull: issue,
      review,
    });
    return review;
  }

  /**
   * A reply in the conversation of review comment `commentId` (REST "Create a reply for a review comment":
   * https://docs.github.com/en/rest/pulls/comments#create-a-reply-for-a-review-comment, "Replies to replies are
   * not supported": a reply to a reply goes to the conversation's first comment). As on GitHub the reply comes
   * with a review of its own, submitted as a comment.
   */
  replyToReviewComment(
    repo: RepoRef,
    number: number,
    commentId: number,
    body: string,
    author: string,
  ): ReviewComment {
    const issue = this.requirePull(repo, number);
    const all = issue.pull.reviews.filter((r) => r.state !== "PENDING").flatMap((r) => r.comments);
    const target = all.find((c) => c.id === commentId);
    if (!target) throw new StoreError(404, "Not Found");
    const root =
      target.inReplyTo !== undefined ? (all.find((c) => c.id === target.inReplyTo) ?? target) : target;
    const review = this.createReview(repo, number, { author, body: "", commitId: issue.pull.head.sha });
    const id = this.id();
    const reply: ReviewComment = {
      id,
      nodeId: encodeNodeId("PullRequestReviewComment", id),
      reviewId: review.id,
      user: author,
      body,
      path: root.path,
      line: root.line,
      commitId: issue.pull.head.sha,
      createdAt: this.now(),
      inReplyTo: root.id,
      reactions: [],
    };
    review.comments.push(reply);
    this.submitReview(repo, number, review.id, "COMMENT", "", author);
    return reply;
  }

  /** The pull request an inline review comment is on, or null. */
  pullOfReviewComment(repo: RepoRef, commentId: number): (Issue & { pull: PullFields }) | null {
    for (const issue of this.state(repo).issues.values())
      if (issue.pull?.reviews.some((r) => r.comments.some((c) => c.id === commentId)))
        return issue as Issue & { pull: PullFields };
    return null;
  }

  /**
   * Adds a reaction to a review comment of a submitted review; an existing one of the same user and content is
   * returned (https://docs.github.com/en/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment:
   * 200 when it exists already, 201 when created).
   */
  addReviewCommentReaction(
    repo: RepoRef,
    commentId: number,
    content: ReactionContent,
    user: string,
  ): { reaction: Reaction; created: boolean } {
    const comment = [...this.state(repo).issues.values()]
      .flatMap((i) => i.pull?.reviews ?? [])
      .filter((r) => r.state !== "PENDING")
      .flatMap((r) => r.comments)
      .find((c) => c.id === commentId);
    if (!comment) throw new StoreError(404, "Not Found");
    return reactOnce(comment.reactions, user, content, () => this.id(), this.now());
  }

  /**
   * Resolves (or opens again) the review conversation an inline comment starts. "You can resolve a conversation in
   * a pull request if you opened the pull request or if you have write access to the repository"
   * (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/commenting-on-a-pull-request#resolving-conversations):
   * the caller checks who may.
   */
  setReviewThreadResolved(
    repo: RepoRef,
    commentId: number,
    actor: string,
    resolved: boolean,
  ): { pull: Issue & { pull: PullFields }; comment: ReviewComment } {
    const state = this.state(repo);
    for (const issue of state.issues.values()) {
      if (!issue.pull) continue;
      for (const review of issue.pull.reviews) {
        const found = review.comments.find((c) => c.id === commentId);
        if (!found || review.state === "PENDING") continue;
        // The conversation's state is kept on its first comment.
        const comment =
          found.inReplyTo !== undefined
            ? (issue.pull.reviews.flatMap((r) => r.comments).find((c) => c.id === found.inReplyTo) ?? found)
            : found;
        const was = !!comment.resolvedBy;
        comment.resolvedBy = resolved ? actor : null;
        if (was !== resolved)
          this.emit({
            name: "pull_request_review_thread",
            action: resolved ? "resolved" : "unresolved",
            repo: state.repo,
            sender: actor,
            pull: issue,
            comment,
          });
        return { pull: issue as Issue & { pull: PullFields }, comment };
      }
    }
    throw new StoreError(404, "Could not resolve to a PullRequestReviewThread");
  }
}
