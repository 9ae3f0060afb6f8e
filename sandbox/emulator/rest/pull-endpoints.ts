/** REST handlers of pull requests: the pull requests, their reviewers, files, commits and reviews. */
import type { Issue, IssueState, MergeMethod, PullFields } from "../store.js";
import { commitJson, diffEntry, PULL_FILES_MAX, servedDiffFiles } from "./git-shapes.js";
import { mergeRefusal, mergeStateOf } from "../merge/merge-requirements.js";
import { isAuthorOrTriage } from "./repo-authorization.js";
import { reviewLineRefusal } from "./review-lines.js";
import {
  bodyObject,
  fail,
  list,
  num,
  pullOf,
  type RestHandler,
  repoOf,
  str,
  strOrNull,
} from "./rest-helpers.js";

/** The `comments` of POST …/reviews (already shape-checked against GitHub's description by the validator). */
function reviewCommentsInput(raw: unknown[]): { path: string; body: string; line?: number; side?: string }[] {
  return raw.flatMap((entry) => {
    if (typeof entry !== "object" || entry === null) return [];
    const { path, body, line, side } = entry as {
      path?: unknown;
      body?: unknown;
      line?: unknown;
      side?: unknown;
    };
    if (typeof path !== "string" || typeof body !== "string") return [];
    return [
      {
        path,
        body,
        ...(typeof line === "number" ? { line } : {}),
        ...(typeof side === "string" ? { side } : {}),
      },
    ];
  });
}

export const pullEndpoints: Record<string, RestHandler> = {
  "pulls/list": async (req) => {
    const repo = repoOf(req);
    const q = req.query;
    const state = q.state ?? "open";
    const head = q.head ? (q.head.includes(":") ? q.head.slice(q.head.indexOf(":") + 1) : q.head) : null;
    const headOwner = q.head?.includes(":") ? q.head.slice(0, q.head.indexOf(":")) : null;
    let pulls = req.store
      .listPulls(repo.fullName)
      .filter((p) => state === "all" || p.state === state)
      .filter(
        (p) =>
          !head ||
          // `head=user:ref-name` matches the owner of the head's repository (a fork's owner for fork PRs):
          // https://docs.github.com/en/rest/pulls/pulls#list-pull-requests
          (p.pull.head.ref === head &&
            (!headOwner ||
              headOwner.toLowerCase() === (p.pull.headRepo?.split("/")[0] ?? repo.owner).toLowerCase())),
      )
      .filter((p) => !q.base || p.pull.base.ref === q.base);
    const dir = (q.direction ?? (q.sort && q.sort !== "created" ? "desc" : "desc")) === "asc" ? 1 : -1;
    const key =
      q.sort === "updated" ? (p: Issue) => p.updatedAt.getTime() : (p: Issue) => p.createdAt.getTime();
    pulls = [...pulls].sort((a, b) => dir * (key(a) - key(b)) || dir * (a.number - b.number));
    return list(req, pulls, (p) => req.shapes.pullSimple(repo, p));
  },

  "pulls/create": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const pull = await req.store.createPull(repo.fullName, {
      title: str(b, "title") ?? "",
      body: strOrNull(b, "body") ?? null,
      head: str(b, "head") ?? "",
      base: str(b, "base") ?? "",
      draft: b.draft === true,
      author: req.identity.login,
      ...(typeof b.maintainer_can_modify === "boolean"
        ? { maintainerCanModify: b.maintainer_can_modify }
        : {}),
    });
    return {
      status: 201,
      body: req.shapes.pull(repo, pull as Issue & { pull: PullFields }),
      headers: { location: `${req.shapes.repoApi(repo)}/pulls/${pull.number}` },
    };
  },

  "pulls/get": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    await req.store.refreshPull(repo.fullName, pull.number);
    // `mergeable_state` counts the base branch's protection and rulesets (sandbox/emulator/merge/merge-requirements.ts).
    const body = {
      ...req.shapes.pull(repo, pull),
      mergeable_state: await mergeStateOf(req.store, repo, pull),
    };
    return { status: 200, body };
  },

  "pulls/update": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    if (!isAuthorOrTriage(req, repo, pull.user, "write"))
      fail(403, "Resource not accessible by personal access token");
    req.store.updatePull(
      repo.fullName,
      pull.number,
      {
        ...(str(b, "title") !== undefined ? { title: str(b, "title")! } : {}),
        ...("body" in b ? { body: strOrNull(b, "body") ?? null } : {}),
        ...(str(b, "state") ? { state: str(b, "state") as IssueState } : {}),
        ...(str(b, "base") ? { base: str(b, "base")! } : {}),
      },
      req.identity.login,
    );
    await req.store.refreshPull(repo.fullName, pull.number);
    return { status: 200, body: req.shapes.pull(repo, pull) };
  },

  "pulls/merge": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    // The base branch's protection and rulesets come first (sandbox/emulator/merge/merge-requirements.ts).
    if (pull.state === "open" && !pull.pull.merged) {
      await req.store.refreshPull(repo.fullName, pull.number);
      const refusal = await mergeRefusal(req.store, repo, pull);
      if (refusal) fail(refusal.status, refusal.message);
    }
    const result = await req.store.mergePull(
      repo.fullName,
      pull.number,
      {
        ...(str(b, "merge_method") ? { method: str(b, "merge_method") as MergeMethod } : {}),
        ...(str(b, "commit_title") ? { commitTitle: str(b, "commit_title")! } : {}),
        ...(str(b, "commit_message") ? { commitMessage: str(b, "commit_message")! } : {}),
        ...(str(b, "sha") ? { sha: str(b, "sha")! } : {}),
      },
      req.identity.login,
    );
    return { status: 200, body: { sha: result.sha, merged: true, message: result.message } };
  },

  // https://docs.github.com/rest/pulls/pulls#update-a-pull-request-branch — 202 while GitHub merges the base
  // into the head; 422 when `expected_head_sha` is not the head, nothing is new on the base, or it conflicts.
  "pulls/update-branch": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    if (!isAuthorOrTriage(req, repo, pull.user, "write"))
      fail(403, "Resource not accessible by personal access token");
    await req.store.refreshPull(repo.fullName, pull.number);
    if (pull.state !== "open") fail(422, "Pull request is closed");
    const expected = str(b, "expected_head_sha");
    if (expected && expected !== pull.pull.head.sha)
      fail(422, "expected_head_sha does not match the pull request's HEAD");
    await req.store.updatePullBranch(repo.fullName, pull.number, req.identity.login);
    return {
      status: 202,
      body: {
        message: "Updating pull request branch.",
        url: `${req.shapes.repoHtml(repo)}/pull/${pull.number}`,
      },
    };
  },

  "pulls/check-if-merged": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    return { status: pull.pull.merged ? 204 : 404 };
  },

  "pulls/list-requested-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    return {
      status: 200,
      body: { users: pull.pull.requestedReviewers.map((r) => req.shapes.user(r)), teams: [] },
    };
  },

  "pulls/request-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const reviewers = Array.isArray(b.reviewers) ? b.reviewers.map(String) : [];
    if (reviewers.some((r) => r.toLowerCase() === pull.user.toLowerCase())) {
      fail(422, "Review cannot be requested from pull request author.");
    }
    req.store.requestReviewers(repo.fullName, pull.number, reviewers, req.identity.login);
    return { status: 201, body: req.shapes.pullSimple(repo, pull) };
  },

  "pulls/remove-requested-reviewers": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    req.store.removeRequestedReviewers(
      repo.fullName,
      pull.number,
      Array.isArray(b.reviewers) ? b.reviewers.map(String) : [],
      req.identity.login,
    );
    return { status: 200, body: req.shapes.pullSimple(repo, pull) };
  },

  "pulls/list-files": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const diff = await req.store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    const files = servedDiffFiles(diff.files, PULL_FILES_MAX);
    return list(req, files, (f) => diffEntry(req, repo, pull.pull.head.sha, f));
  },

  "pulls/list-commits": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const diff = await req.store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    const commits = diff.commits ?? [];
    return list(req, commits, (c) => commitJson(req, repo, c.sha, c));
  },

  "pulls/list-reviews": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const viewer = req.identity.login.toLowerCase();
    const reviews = pull.pull.reviews.filter((r) => r.state !== "PENDING" || r.user.toLowerCase() === viewer);
    return list(req, reviews, (r) => req.shapes.review(repo, pull, r));
  },

  "pulls/list-review-comments": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const comments = pull.pull.reviews.filter((r) => r.state !== "PENDING").flatMap((r) => r.comments);
    return list(req, comments, (c) => req.shapes.reviewComment(repo, pull, c));
  },

  "pulls/get-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const review = pull.pull.reviews.find((r) => r.id === num(req.params.review_id));
    if (!review) fail(404, "Not Found");
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  "pulls/create-review": async (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const event = str(b, "event") as "APPROVE" | "REQUEST_CHANGES" | "COMMENT" | undefined;
    const comments = Array.isArray(b.comments) ? reviewCommentsInput(b.comments) : [];
    // Each comment on a line of the pull request's diff, or the whole review is refused (review-lines.ts). The
    // in-memory mode holds no file contents, so no diff: it has nothing to check the lines against.
    if (comments.length > 0 && req.store.getGitBackend()) {
      const diff = await req.store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
      const refusal = reviewLineRefusal(diff.files, comments);
      if (refusal)
        fail(422, "Unprocessable Entity", [
          { resource: "PullRequestReview", code: "custom", message: refusal },
        ]);
    }
    const review = req.store.createReview(repo.fullName, pull.number, {
      author: req.identity.login,
      ...(str(b, "body") !== undefined ? { body: str(b, "body")! } : {}),
      ...(event ? { event } : {}),
      ...(str(b, "commit_id") ? { commitId: str(b, "commit_id")! } : {}),
      ...(comments.length ? { comments } : {}),
    });
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  // https://docs.github.com/en/rest/pulls/comments#create-a-reply-for-a-review-comment (store/with-reviews.ts).
  "pulls/create-reply-for-review-comment": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const body = str(bodyObject(req), "body");
    if (!body) fail(422, "Validation Failed");
    const reply = req.store.replyToReviewComment(
      repo.fullName,
      pull.number,
      num(req.params.comment_id),
      body!,
      req.identity.login,
    );
    return { status: 201, body: req.shapes.reviewComment(repo, pull, reply) };
  },

  "pulls/submit-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const b = bodyObject(req);
    const review = pull.pull.reviews.find((r) => r.id === num(req.params.review_id));
    if (!review) fail(404, "Not Found");
    if (review.user.toLowerCase() !== req.identity.login.toLowerCase()) fail(404, "Not Found");
    req.store.submitReview(
      repo.fullName,
      pull.number,
      review.id,
      str(b, "event") as "APPROVE" | "REQUEST_CHANGES" | "COMMENT",
      str(b, "body"),
      req.identity.login,
    );
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },

  "pulls/dismiss-review": (req) => {
    const repo = repoOf(req);
    const pull = pullOf(req, repo);
    const review = req.store.dismissReview(
      repo.fullName,
      pull.number,
      num(req.params.review_id),
      req.identity.login,
    );
    return { status: 200, body: req.shapes.review(repo, pull, review) };
  },
};
