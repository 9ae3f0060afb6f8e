/** REST handlers of issue comments and of reactions on issues, their comments and pull request review comments. */
import type { Comment, ReactionContent, Repo } from "../store.js";
import { isAuthorOrTriage } from "./repo-authorization.js";
import {
  bodyObject,
  fail,
  issueOf,
  list,
  num,
  type RestHandler,
  type RestRequest,
  repoOf,
  sortByDate,
  str,
} from "./rest-helpers.js";

/** The body of a new or edited comment: at most 65,536 characters. */
function commentBody(req: RestRequest): string {
  const body = str(bodyObject(req), "body") ?? "";
  if (body.length > 65536) {
    fail(422, "Validation Failed", [
      {
        resource: "IssueComment",
        code: "custom",
        field: "body",
        message: "body is too long (maximum is 65536 characters)",
      },
    ]);
  }
  return body;
}

function commentOf(req: RestRequest, repo: Repo): Comment {
  const comment = req.store.getComment(repo.fullName, num(req.params.comment_id));
  if (!comment) fail(404, "Not Found");
  return comment;
}

/** The path's comment, when the caller wrote it or may write to the repository. */
function editableCommentOf(req: RestRequest, repo: Repo): Comment {
  const comment = commentOf(req, repo);
  if (!isAuthorOrTriage(req, repo, comment.user, "write"))
    fail(403, "Resource not accessible by personal access token");
  return comment;
}

export const commentEndpoints: Record<string, RestHandler> = {
  "issues/list-comments": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const since = req.query.since ? new Date(req.query.since) : null;
    const comments = req.store
      .listComments(repo.fullName, issue.number)
      .filter((c) => !since || c.updatedAt.getTime() >= since.getTime());
    return list(req, comments, (c) => req.shapes.comment(repo, c));
  },

  "issues/list-comments-for-repo": (req) => {
    const repo = repoOf(req);
    const since = req.query.since ? new Date(req.query.since) : null;
    let comments = req.store
      .listComments(repo.fullName)
      .filter((c) => !since || c.updatedAt.getTime() >= since.getTime());
    comments = sortByDate(
      comments,
      (c) => (req.query.sort === "updated" ? c.updatedAt : c.createdAt),
      req.query.direction,
      "asc",
    );
    return list(req, comments, (c) => req.shapes.comment(repo, c));
  },

  "issues/create-comment": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const body = commentBody(req);
    const comment = req.store.createComment(repo.fullName, issue.number, body, req.identity.login);
    return {
      status: 201,
      body: req.shapes.comment(repo, comment),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/comments/${comment.id}` },
    };
  },

  "issues/get-comment": (req) => {
    const repo = repoOf(req);
    const comment = commentOf(req, repo);
    return { status: 200, body: req.shapes.comment(repo, comment) };
  },

  "issues/update-comment": (req) => {
    const repo = repoOf(req);
    const comment = editableCommentOf(req, repo);
    const body = commentBody(req);
    req.store.updateComment(repo.fullName, comment.id, body, req.identity.login);
    return { status: 200, body: req.shapes.comment(repo, comment) };
  },

  "issues/delete-comment": (req) => {
    const repo = repoOf(req);
    const comment = editableCommentOf(req, repo);
    req.store.deleteComment(repo.fullName, comment.id, req.identity.login);
    return { status: 204 };
  },

  "reactions/list-for-issue-comment": (req) => {
    const repo = repoOf(req);
    const reactions = req.store
      .listReactions(repo.fullName, { commentId: num(req.params.comment_id) })
      .filter((r) => !req.query.content || r.content === req.query.content);
    return list(req, reactions, (r) => req.shapes.reaction(r));
  },

  "reactions/create-for-issue-comment": (req) => {
    const repo = repoOf(req);
    const content = str(bodyObject(req), "content") as ReactionContent;
    const { reaction, created } = req.store.addReaction(
      repo.fullName,
      { commentId: num(req.params.comment_id) },
      content,
      req.identity.login,
    );
    return { status: created ? 201 : 200, body: req.shapes.reaction(reaction) };
  },

  "reactions/create-for-pull-request-review-comment": (req) => {
    const repo = repoOf(req);
    const content = str(bodyObject(req), "content") as ReactionContent;
    const { reaction, created } = req.store.addReviewCommentReaction(
      repo.fullName,
      num(req.params.comment_id),
      content,
      req.identity.login,
    );
    return { status: created ? 201 : 200, body: req.shapes.reaction(reaction) };
  },

  "reactions/delete-for-issue-comment": (req) => {
    const repo = repoOf(req);
    req.store.deleteReaction(
      repo.fullName,
      { commentId: num(req.params.comment_id) },
      num(req.params.reaction_id),
    );
    return { status: 204 };
  },

  "reactions/list-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const reactions = req.store
      .listReactions(repo.fullName, { issueNumber: issue.number })
      .filter((r) => !req.query.content || r.content === req.query.content);
    return list(req, reactions, (r) => req.shapes.reaction(r));
  },

  "reactions/create-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const content = str(bodyObject(req), "content") as ReactionContent;
    const { reaction, created } = req.store.addReaction(
      repo.fullName,
      { issueNumber: issue.number },
      content,
      req.identity.login,
    );
    return { status: created ? 201 : 200, body: req.shapes.reaction(reaction) };
  },

  "reactions/delete-for-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.deleteReaction(repo.fullName, { issueNumber: issue.number }, num(req.params.reaction_id));
    return { status: 204 };
  },
};
