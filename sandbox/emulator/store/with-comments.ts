/** Issue and pull request comments, and reactions to comments and issues. */
import type { Comment, Reaction, ReactionContent } from "./issue-records.js";
import { reactOnce } from "./reaction-records.js";
import { encodeNodeId } from "./node-ids.js";
import type { RepoRef } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { type Permission, permissionAtLeast } from "./user-records.js";
import { StoreWithIssueLinks } from "./with-issue-links.js";

export class StoreWithComments extends StoreWithIssueLinks {
  /** Comments on an issue or PR; emits `issue_comment.created`. */
  createComment(repo: RepoRef, number: number, body: string, author: string, createdAt?: Date): Comment {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.locked && !permissionAtLeast(this.getPermissionSafe(state, author), "write")) {
      throw new StoreError(403, "Unable to create comment because issue is locked.");
    }
    const id = this.id();
    const at = createdAt ?? this.now();
    const comment: Comment = {
      id,
      nodeId: encodeNodeId("IssueComment", id),
      issueNumber: number,
      body,
      user: author,
      createdAt: at,
      updatedAt: at,
      lastEdit: null,
      reactions: [],
    };
    state.comments.set(id, comment);
    issue.updatedAt = at;
    this.emit({ name: "issue_comment", action: "created", repo: state.repo, sender: author, issue, comment });
    return comment;
  }

  private getPermissionSafe(state: RepoState, login: string): Permission {
    return this.getPermission(state.repo.fullName, login);
  }

  getComment(repo: RepoRef, id: number): Comment | undefined {
    return this.state(repo).comments.get(id);
  }

  /** Comments of one issue (oldest first), or of the whole repository when `number` is omitted. */
  listComments(repo: RepoRef, number?: number): Comment[] {
    const all = [...this.state(repo).comments.values()];
    return number === undefined ? all : all.filter((c) => c.issueNumber === number);
  }

  updateComment(repo: RepoRef, id: number, body: string, actor: string): Comment {
    const state = this.state(repo);
    const comment = state.comments.get(id);
    if (!comment) throw new StoreError(404, "Not Found");
    const from = comment.body;
    comment.body = body;
    comment.updatedAt = this.now();
    comment.lastEdit = { at: comment.updatedAt, editor: actor };
    const issue = this.requireIssue(repo, comment.issueNumber);
    this.emit({
      name: "issue_comment",
      action: "edited",
      repo: state.repo,
      sender: actor,
      issue,
      comment,
      changes: { body: { from } },
    });
    return comment;
  }

  deleteComment(repo: RepoRef, id: number, actor: string): void {
    const state = this.state(repo);
    const comment = state.comments.get(id);
    if (!comment) throw new StoreError(404, "Not Found");
    state.comments.delete(id);
    const issue = this.requireIssue(repo, comment.issueNumber);
    this.emit({ name: "issue_comment", action: "deleted", repo: state.repo, sender: actor, issue, comment });
  }

  /** Adds a reaction to a comment (`{ commentId }`) or an issue (`{ issueNumber }`); an existing one is returned. */
  addReaction(
    repo: RepoRef,
    target: { commentId: number } | { issueNumber: number },
    content: ReactionContent,
    user: string,
  ): { reaction: Reaction; created: boolean } {
    return reactOnce(this.reactionList(repo, target), user, content, () => this.id(), this.now());
  }

  listReactions(repo: RepoRef, target: { commentId: number } | { issueNumber: number }): Reaction[] {
    return [...this.reactionList(repo, target)];
  }

  deleteReaction(
    repo: RepoRef,
    target: { commentId: number } | { issueNumber: number },
    reactionId: number,
  ): void {
    const list = this.reactionList(repo, target);
    const index = list.findIndex((r) => r.id === reactionId);
    if (index < 0) throw new StoreError(404, "Not Found");
    list.splice(index, 1);
  }

  private reactionList(repo: RepoRef, target: { commentId: number } | { issueNumber: number }): Reaction[] {
    if ("commentId" in target) {
      const comment = this.getComment(repo, target.commentId);
      if (!comment) throw new StoreError(404, "Not Found");
      return comment.reactions;
    }
    return this.requireIssue(repo, target.issueNumber).reactions;
  }
}
