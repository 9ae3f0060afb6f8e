/** GraphQL pull requests and their reviews. */
import type { Issue, PullFields, Repo, Review } from "../store.js";
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
      merged: p.merged,
      mergedAt: isoDate(p.mergedAt),
      mergedBy: this.actor(p.mergedBy),
      mergeCommit: p.mergeCommitSha ? () => this.commit(repo, p.mergeCommitSha!) : null,
      mergeable: p.mergeable === null ? "UNKNOWN" : p.mergeable ? "MERGEABLE" : "CONFLICTING",
      mergeStateStatus: p.mergeableState.toUpperCase(),
      headRefName: p.head.ref,
      headRefOid: p.head.sha,
      baseRefName: p.base.ref,
      baseRefOid: p.base.sha,
      headRef: async () => (issue.state === "open" ? this.ref(repo, `refs/heads/${p.head.ref}`) : null),
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
      reviewThreads: (args: PageArgs) => connection("reviewThreads", [] as Obj[], args, (t) => t),
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
