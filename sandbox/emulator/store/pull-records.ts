/** The pull-request-only part of an issue: branches, merge state, reviews. */
import type { Reaction } from "./reaction-records.js";
import { fullRef } from "./ref-names.js";

export interface GitSide {
  /** Branch name, without `refs/heads/`. */
  ref: string;
  sha: string;
}

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING" | "DISMISSED";

export interface Review {
  id: number;
  nodeId: string;
  user: string;
  body: string;
  state: ReviewState;
  /** The PR head SHA when the review was created. */
  commitId: string;
  submittedAt: Date | null;
  /** Inline comments left with the review (on a file and line of the diff). */
  comments: ReviewComment[];
}

/** An inline pull request review comment (GET /repos/{o}/{r}/pulls/{n}/comments). */
export interface ReviewComment {
  id: number;
  nodeId: string;
  reviewId: number;
  user: string;
  body: string;
  path: string;
  line: number | null;
  commitId: string;
  createdAt: Date;
  /** The first comment of the conversation this one replies to (REST `in_reply_to_id`); absent: it starts one. */
  inReplyTo?: number;
  /**
   * Reactions to it (https://docs.github.com/en/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment).
   */
  reactions: Reaction[];
  /**
   * On a conversation's first comment: who resolved the conversation (GraphQL `resolveReviewThread`), null while
   * it is open.
   */
  resolvedBy?: string | null;
}

export type MergeMethod = "merge" | "squash" | "rebase";

/** Pull-request-only fields of an {@link Issue}. */
export interface PullFields {
  /** The pull request's own id (different from the issue id, as on GitHub). */
  id: number;
  nodeId: string;
  head: GitSide;
  base: GitSide;
  draft: boolean;
  merged: boolean;
  mergedAt: Date | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  /** null while "GitHub" has not computed it yet (refreshed on read). */
  mergeable: boolean | null;
  mergeableState: "clean" | "dirty" | "unstable" | "blocked" | "behind" | "unknown" | "draft";
  requestedReviewers: string[];
  reviews: Review[];
  /** Files changed and commits ahead, as of the last refresh. */
  additions: number;
  deletions: number;
  changedFiles: number;
  commits: number;
  maintainerCanModify: boolean;
  /**
   * `owner/name` of the fork the head branch lives in; absent for a branch of this repository. The fork's
   * branch is kept in this repository's git as `refs/forks/<owner>/heads/<branch>` (GitHub keeps a fork
   * network's objects together and exposes a fork PR's head as `refs/pull/N/head`):
   * https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/proposing-changes-to-your-work-with-pull-requests/creating-a-pull-request-from-a-fork
   */
  headRepo?: string;
}

/** Where a fork's branch is kept in the base repository's git (see `PullFields.headRepo`). */
export function forkBranchRef(forkOwner: string, branch: string): string {
  return `refs/forks/${forkOwner.toLowerCase()}/heads/${branch}`;
}

/** The ref a pull request's head SHA is read from. */
export function headRefOf(pull: PullFields): string {
  return pull.headRepo ? forkBranchRef(pull.headRepo.split("/")[0]!, pull.head.ref) : fullRef(pull.head.ref);
}
