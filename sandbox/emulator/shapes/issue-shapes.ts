/** Issues, comments, reactions and issue events, as GitHub's JSON shows them. */
import type { Comment, Issue, IssueEvent, Reaction, Repo } from "../store.js";
import { AccountShapes } from "./account-shapes.js";
import { type JsonObject, iso } from "./json-shape.js";

export class IssueShapes extends AccountShapes {
  private reactionRollup(url: string, reactions: Reaction[]): JsonObject {
    const count = (content: string) => reactions.filter((r) => r.content === content).length;
    return {
      url,
      total_count: reactions.length,
      "+1": count("+1"),
      "-1": count("-1"),
      laugh: count("laugh"),
      hooray: count("hooray"),
      confused: count("confused"),
      heart: count("heart"),
      rocket: count("rocket"),
      eyes: count("eyes"),
    };
  }

  /** `issue` (issues and PR-issues: the latter carry the `pull_request` key). */
  issue(repo: Repo, issue: Issue): JsonObject {
    const api = `${this.repoApi(repo)}/issues/${issue.number}`;
    const labels = this.store.labelsOf(repo.fullName, issue).map((l) => this.label(repo, l));
    const comments = this.store.listComments(repo.fullName, issue.number).length;
    const subIssues = issue.subIssues
      .map((n) => this.store.getIssue(repo.fullName, n))
      .filter((i): i is Issue => !!i);
    const completed = subIssues.filter((i) => i.state === "closed").length;
    const blocking = this.store.listBlocking(repo.fullName, issue.number);
    const openBlockers = issue.blockedBy.filter(
      (n) => this.store.getIssue(repo.fullName, n)?.state === "open",
    ).length;
    const result: JsonObject = {
      url: api,
      repository_url: this.repoApi(repo),
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: `${this.repoHtml(repo)}/${issue.pull ? "pull" : "issues"}/${issue.number}`,
      id: issue.id,
      node_id: issue.nodeId,
      number: issue.number,
      title: issue.title,
      user: this.user(issue.user),
      labels,
      state: issue.state,
      locked: issue.locked,
      assignee: issue.assignees[0] ? this.user(issue.assignees[0]) : null,
      assignees: issue.assignees.map((a) => this.user(a)),
      milestone: null,
      comments,
      created_at: iso(issue.createdAt),
      updated_at: iso(issue.updatedAt),
      closed_at: iso(issue.closedAt),
      author_association: this.authorAssociation(repo, issue.user),
      active_lock_reason: issue.activeLockReason,
      body: issue.body,
      closed_by: issue.closedBy ? this.user(issue.closedBy) : null,
      reactions: this.reactionRollup(`${api}/reactions`, issue.reactions),
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
      state_reason: issue.stateReason,
      draft: issue.pull?.draft ?? false,
      sub_issues_summary: {
        total: subIssues.length,
        completed,
        percent_completed: subIssues.length ? Math.floor((completed * 100) / subIssues.length) : 0,
      },
      issue_dependencies_summary: {
        blocked_by: openBlockers,
        blocking: blocking.filter((i) => i.state === "open").length,
        total_blocked_by: issue.blockedBy.length,
        total_blocking: blocking.length,
      },
    };
    if (issue.parent !== null) result.parent_issue_url = `${this.repoApi(repo)}/issues/${issue.parent}`;
    if (issue.pull) {
      result.pull_request = {
        url: `${this.repoApi(repo)}/pulls/${issue.number}`,
        html_url: `${this.repoHtml(repo)}/pull/${issue.number}`,
        diff_url: `${this.repoHtml(repo)}/pull/${issue.number}.diff`,
        patch_url: `${this.repoHtml(repo)}/pull/${issue.number}.patch`,
        merged_at: iso(issue.pull.mergedAt),
      };
    }
    return result;
  }

  comment(repo: Repo, comment: Comment): JsonObject {
    const api = `${this.repoApi(repo)}/issues/comments/${comment.id}`;
    const issue = this.store.getIssue(repo.fullName, comment.issueNumber);
    return {
      url: api,
      html_url: `${this.repoHtml(repo)}/${issue?.pull ? "pull" : "issues"}/${comment.issueNumber}#issuecomment-${comment.id}`,
      issue_url: `${this.repoApi(repo)}/issues/${comment.issueNumber}`,
      id: comment.id,
      node_id: comment.nodeId,
      user: this.user(comment.user),
      created_at: iso(comment.createdAt),
      updated_at: iso(comment.updatedAt),
      author_association: this.authorAssociation(repo, comment.user),
      body: comment.body,
      reactions: this.reactionRollup(`${api}/reactions`, comment.reactions),
      performed_via_github_app: null,
    };
  }

  reaction(reaction: Reaction): JsonObject {
    return {
      id: reaction.id,
      node_id: reaction.nodeId,
      user: this.user(reaction.user),
      content: reaction.content,
      created_at: iso(reaction.createdAt),
    };
  }

  issueEvent(repo: Repo, issue: Issue, event: IssueEvent): JsonObject {
    const result: JsonObject = {
      id: event.id,
      node_id: event.nodeId,
      url: `${this.repoApi(repo)}/issues/events/${event.id}`,
      actor: this.user(event.actor),
      event: event.event,
      commit_id: event.commitId ?? null,
      commit_url: event.commitId ? `${this.repoApi(repo)}/commits/${event.commitId}` : null,
      created_at: iso(event.createdAt),
      performed_via_github_app: null,
    };
    if (event.label) result.label = { name: event.label.name, color: event.label.color };
    if (event.rename) result.rename = { from: event.rename.from, to: event.rename.to };
    if (event.lockReason !== undefined) result.lock_reason = event.lockReason;
    if (event.stateReason !== undefined) result.state_reason = event.stateReason;
    if (event.assignee) {
      result.assignee = this.user(event.assignee);
      result.assigner = this.user(event.actor);
    }
    if (event.requestedReviewer) {
      result.requested_reviewer = this.user(event.requestedReviewer);
      result.review_requester = this.user(event.actor);
    }
    void issue;
    return result;
  }
}
