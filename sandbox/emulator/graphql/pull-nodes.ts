/** GraphQL pull requests, their reviews, auto-merge requests and merge queue entries. */
import { mergeRequirementsOf, mergeStateOf } from "../merge/merge-requirements.js";
import {
  type MergeQueueEntry,
  autoMergeRequestOf,
  mergeAutomationStateOf,
  queueEntryOf,
  queueKey,
} from "../merge/merge-automation-state.js";
import type { Issue, PullFields, Repo, Review, ReviewComment } from "../store.js";
import { encodeNodeId } from "../store/node-ids.js";
import { type Obj, isoDate, pullState } from "./graphql-values.js";
import { type PageArgs, connection } from "./relay-connection.js";
import { RepositoryNodes } from "./repository-nodes.js";

export abstract class PullNodes extends RepositoryNodes {
  review(repo: Repo, pull: Issue & { pull: PullFields }, review: Review): Obj {
    return {
      __typename: "PullRequestReview",
      id: review.nodeId,
      databaseId: review.id,
      fullDatabaseId: String(review.id),
      author: this.actor(review.user),
      authorAssociation: this.ctx.shapes.authorAssociation(repo, review.user),
      body: review.body,
      bodyText: review.body,
      state: review.state,
      submittedAt: isoDate(review.submittedAt),
      createdAt: isoDate(review.submittedAt ?? pull.createdAt),
      updatedAt: isoDate(review.submittedAt ?? pull.createdAt),
      publishedAt: isoDate(review.submittedAt),
      url: `${this.ctx.shapes.repoHtml(repo)}/pull/${pull.number}#pullrequestreview-${review.id}`,
      commit: () => this.commit(repo, review.commitId),
      pullRequest: () => this.pull(repo, pull),
    };
  }

  /**
   * https://docs.github.com/en/graphql/reference/objects#pullrequestreviewthread: the conversation an inline
   * comment starts, with the replies to it, resolved by `resolveReviewThread`.
   */
  reviewThread(
    repo: Repo,
    pull: Issue & { pull: PullFields },
    comment: ReviewComment,
    replies: readonly ReviewComment[] = [],
  ): Obj {
    const resolved = !!comment.resolvedBy;
    return {
      __typename: "PullRequestReviewThread",
      id: encodeNodeId("PullRequestReviewThread", comment.id),
      isResolved: resolved,
      isCollapsed: resolved,
      // The sandbox does not follow a line across pushes: a conversation never becomes outdated.
      isOutdated: false,
      path: comment.path,
      line: comment.line,
      originalLine: comment.line,
      startLine: null,
      originalStartLine: null,
      diffSide: "RIGHT",
      startDiffSide: null,
      subjectType: comment.line === null ? "FILE" : "LINE",
      resolvedBy: comment.resolvedBy ? this.actor(comment.resolvedBy) : null,
      viewerCanReply: true,
      viewerCanResolve: !resolved,
      viewerCanUnresolve: resolved,
      comments: (args: PageArgs) =>
        connection(
          "comments",
          [comment, ...[...replies].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())],
          args,
          (c) => this.reviewComment(repo, pull, c),
        ),
      pullRequest: () => this.pull(repo, pull),
      repository: () => this.repository(repo),
    };
  }

  /** https://docs.github.com/en/graphql/reference/objects#pullrequestreviewcomment */
  reviewComment(repo: Repo, pull: Issue & { pull: PullFields }, comment: ReviewComment): Obj {
    return {
      __typename: "PullRequestReviewComment",
      id: comment.nodeId,
      databaseId: comment.id,
      fullDatabaseId: String(comment.id),
      author: this.actor(comment.user),
      authorAssociation: this.ctx.shapes.authorAssociation(repo, comment.user),
      body: comment.body,
      bodyText: comment.body,
      path: comment.path,
      line: comment.line,
      originalLine: comment.line,
      createdAt: isoDate(comment.createdAt),
      updatedAt: isoDate(comment.createdAt),
      publishedAt: isoDate(comment.createdAt),
      url: `${this.ctx.shapes.repoHtml(repo)}/pull/${pull.number}#discussion_r${comment.id}`,
      viewerDidAuthor: comment.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
      reactionGroups: () => this.reactionGroups(comment.reactions),
      commit: () => this.commit(repo, comment.commitId),
      pullRequest: () => this.pull(repo, pull),
    };
  }

  /** https://docs.github.com/graphql/reference/objects#mergequeueentry */
  mergeQueueEntry(repo: Repo, entry: MergeQueueEntry, position: number): Obj {
    const pull = this.store.getPull(repo.fullName, entry.pull) as (Issue & { pull: PullFields }) | undefined;
    return {
      __typename: "MergeQueueEntry",
      id: entry.id,
      position,
      state: entry.state,
      enqueuedAt: isoDate(entry.enqueuedAt),
      enqueuer: this.actor(entry.enqueuer),
      jump: entry.jump,
      solo: true,
      estimatedTimeToMerge: null,
      baseCommit: entry.group ? () => this.commit(repo, entry.group!.baseSha) : null,
      headCommit: entry.group ? () => this.commit(repo, entry.group!.sha) : null,
      pullRequest: pull ? () => this.pull(repo, pull) : null,
      mergeQueue: () => this.mergeQueue(repo, entry.base),
    };
  }

  /** A branch's merge queue; null when the branch does not require one. https://docs.github.com/graphql/reference/objects#mergequeue */
  mergeQueue(repo: Repo, branch: string): Obj | null {
    if (!mergeRequirementsOf(this.store, repo, branch).mergeQueue) return null;
    const entries = mergeAutomationStateOf(this.store).queues.get(queueKey(repo.fullName, branch)) ?? [];
    return {
      __typename: "MergeQueue",
      id: `MQ_${repo.nodeId}_${branch}`,
      url: `${this.ctx.shapes.repoHtml(repo)}/queue/${branch}`,
      resourcePath: `/${repo.fullName}/queue/${branch}`,
      nextEntryEstimatedTimeToMerge: null,
      repository: () => this.repository(repo),
      entries: (args: PageArgs) =>
        connection("entries", entries, args, (e) => this.mergeQueueEntry(repo, e, entries.indexOf(e) + 1)),
    };
  }

  pull(repo: Repo, issue: Issue & { pull: PullFields }): Obj {
    const p = issue.pull;
    const store = this.store;
    const reviewsOf = (states?: string[] | null) =>
      p.reviews.filter((r) =>
        states?.length
          ? states.includes(r.state)
          : r.state !== "PENDING" || r.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
      );
    const latestReviews = () => {
      const byUser = new Map<string, Review>();
      for (const r of p.reviews)
        if (r.state !== "PENDING" && r.state !== "COMMENTED") byUser.set(r.user.toLowerCase(), r);
      return [...byUser.values()];
    };
    return {
      ...this.issue(repo, issue),
      __typename: "PullRequest",
      id: p.nodeId,
      databaseId: p.id,
      fullDatabaseId: String(p.id),
      url: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}`,
      resourcePath: `/${repo.fullName}/pull/${issue.number}`,
      state: pullState(issue),
      isDraft: p.draft,
      // https://docs.github.com/graphql/reference/objects#pullrequest — `autoMergeRequest` (null when off),
      // `mergeQueueEntry`, `isInMergeQueue`, `isMergeQueueEnabled`.
      autoMergeRequest: (() => {
        const request = autoMergeRequestOf(store, repo.fullName, issue.number);
        if (!request) return null;
        return {
          __typename: "AutoMergeRequest",
          enabledAt: isoDate(request.enabledAt),
          enabledBy: this.actor(request.enabledBy),
          mergeMethod: request.method.toUpperCase(),
          commitHeadline: request.commitHeadline,
          commitBody: request.commitBody,
          authorEmail: request.authorEmail,
          pullRequest: () => this.pull(repo, issue),
        };
      })(),
      mergeQueueEntry: (() => {
        const found = queueEntryOf(store, repo.fullName, issue.number);
        return found ? this.mergeQueueEntry(repo, found.entry, found.position) : null;
      })(),
      isInMergeQueue: queueEntryOf(store, repo.fullName, issue.number) !== null,
      isMergeQueueEnabled: mergeRequirementsOf(store, repo, p.base.ref).mergeQueue,
      merged: p.merged,
      mergedAt: isoDate(p.mergedAt),
      mergedBy: this.actor(p.mergedBy),
      mergeCommit: p.mergeCommitSha ? () => this.commit(repo, p.mergeCommitSha!) : null,
      mergeable: p.mergeable === null ? "UNKNOWN" : p.mergeable ? "MERGEABLE" : "CONFLICTING",
      // Computed on read, as the REST merge does, from the base and head as they are now (a push to the base
      // since the PR last recorded it makes the head BEHIND).
      mergeStateStatus: async () => {
        if (issue.state === "open") await store.refreshPull(repo.fullName, issue.number);
        return (await mergeStateOf(store, repo, issue)).toUpperCase();
      },
      headRefName: p.head.ref,
      headRefOid: p.head.sha,
      baseRefName: p.base.ref,
      baseRefOid: p.base.sha,
      // The head branch while it exists, merged or not ("Identifies the head Ref associated with the pull
      // request": https://docs.github.com/en/graphql/reference/objects#pullrequest); null once deleted. A fork's
      // branches are not kept by the sandbox, so a fork PR's is null.
      headRef: async () => (p.headRepo ? null : this.ref(repo, `refs/heads/${p.head.ref}`)),
      baseRef: async () => this.ref(repo, `refs/heads/${p.base.ref}`),
      // A fork PR's head repository is the fork (the sandbox keeps no record of it beyond its name):
      // https://docs.github.com/en/graphql/reference/objects#pullrequest
      headRepository: () => (p.headRepo ? this.forkRepository(repo, p.headRepo) : this.repository(repo)),
      headRepositoryOwner: () => this.actor(p.headRepo ? p.headRepo.split("/")[0]! : repo.owner),
      baseRepository: () => this.repository(repo),
      isCrossRepository: Boolean(p.headRepo),
      maintainerCanModify: p.maintainerCanModify,
      additions: p.additions,
      deletions: p.deletions,
      changedFiles: p.changedFiles,
      permalink: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}`,
      commits: async (args: PageArgs) => {
        let shas: string[] = [];
        try {
          const diff = await store.compare(repo.fullName, p.base.sha, p.head.sha);
          shas = (diff.commits ?? []).map((c) => c.sha);
        } catch {
          shas = [];
        }
        if (shas[shas.length - 1] !== p.head.sha) shas.push(p.head.sha);
        return connection("commits", shas, args, (sha) => ({
          __typename: "PullRequestCommit",
          id: `PRC_${sha}`,
          commit: this.commit(repo, sha),
          url: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}/commits/${sha}`,
          pullRequest: () => this.pull(repo, issue),
        }));
      },
      reviews: (args: PageArgs & { states?: string[] | null; author?: string | null }) =>
        connection(
          "reviews",
          reviewsOf(args.states).filter(
            (r) => !args.author || r.user.toLowerCase() === args.author.toLowerCase(),
          ),
          args,
          (r) => this.review(repo, issue, r),
        ),
      latestReviews: (args: PageArgs) =>
        connection("latestReviews", latestReviews(), args, (r) => this.review(repo, issue, r)),
      latestOpinionatedReviews: (args: PageArgs) =>
        connection("latestOpinionatedReviews", latestReviews(), args, (r) => this.review(repo, issue, r)),
      reviewDecision: (() => {
        const latest = latestReviews();
        if (latest.some((r) => r.state === "CHANGES_REQUESTED")) return "CHANGES_REQUESTED";
        if (latest.some((r) => r.state === "APPROVED")) return "APPROVED";
        return p.requestedReviewers.length ? "REVIEW_REQUIRED" : null;
      })(),
      reviewRequests: (args: PageArgs) =>
        connection("reviewRequests", p.requestedReviewers, args, (login) => ({
          __typename: "ReviewRequest",
          id: `RR_${p.id}_${login}`,
          requestedReviewer: this.actor(login),
        })),
      timelineItems: this.timeline(repo, issue, "PullRequestTimelineItems"),
      // A conversation per inline comment that replies to none, with its replies (a pending review is its
      // author's only).
      reviewThreads: (args: PageArgs) => {
        const comments = p.reviews.filter((r) => r.state !== "PENDING").flatMap((r) => r.comments);
        return connection(
          "reviewThreads",
          comments.filter((c) => c.inReplyTo === undefined),
          args,
          (c) =>
            this.reviewThread(
              repo,
              issue as Issue & { pull: PullFields },
              c,
              comments.filter((r) => r.inReplyTo === c.id),
            ),
        );
      },
      closingIssuesReferences: (args: PageArgs) => {
        const numbers = [
          ...(issue.body ?? "").matchAll(/\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/gi),
        ].map((m) => Number(m[1]));
        const issues = numbers
          .map((n) => store.getIssue(repo.fullName, n))
          .filter((i): i is Issue => !!i && !i.pull);
        return connection("closingIssuesReferences", issues, args, (i) => this.issue(repo, i));
      },
    };
  }
}
