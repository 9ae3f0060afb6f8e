/** Pinned issues, sub-issues and issue dependencies (blocked by). */
import type { Issue } from "./issue-records.js";
import type { RepoRef } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { StoreWithIssues } from "./with-issues.js";

export class StoreWithIssueLinks extends StoreWithIssues {
  /** Pins an issue; at most 3 per repository (GitHub's limit) — a 4th fails with a 422 StoreError. */
  pinIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.pull) throw new StoreError(422, "Pull requests cannot be pinned");
    if (issue.pinned) return issue;
    const pinned = [...state.issues.values()].filter((i) => i.pinned).length;
    if (pinned >= 3) throw new StoreError(422, "You can't pin more than 3 issues");
    issue.pinned = true;
    issue.events.push(this.event("pinned", actor));
    this.emit({ name: "issues", action: "pinned", repo: state.repo, sender: actor, issue });
    return issue;
  }

  unpinIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.pinned) return issue;
    issue.pinned = false;
    issue.events.push(this.event("unpinned", actor));
    this.emit({ name: "issues", action: "unpinned", repo: state.repo, sender: actor, issue });
    return issue;
  }

  listPinnedIssues(repo: RepoRef): Issue[] {
    return this.listIssues(repo).filter((i) => i.pinned);
  }

  // ----- sub-issues and dependencies ----------------------------------------------------------------------

  /** Makes `child` a sub-issue of `parent` (both issue numbers). A child has one parent (422 otherwise). */
  addSubIssue(repo: RepoRef, parent: number, child: number, actor: string, replaceParent = false): Issue {
    const state = this.state(repo);
    const p = this.requireIssue(repo, parent);
    const c = this.requireIssue(repo, child);
    if (p.pull || c.pull) throw new StoreError(422, "Pull requests cannot be sub-issues");
    if (parent === child) throw new StoreError(422, "An issue cannot be its own sub-issue");
    if (c.parent !== null && c.parent !== parent) {
      if (!replaceParent)
        throw new StoreError(422, "Issue may not contain duplicate sub-issues or already has a parent");
      this.removeSubIssue(repo, c.parent, child, actor);
    }
    for (let up: number | null = parent; up !== null; up = this.getIssue(repo, up)?.parent ?? null) {
      if (up === child) throw new StoreError(422, "Sub-issue would create a cycle");
    }
    if (!p.subIssues.includes(child)) p.subIssues.push(child);
    c.parent = parent;
    p.events.push(this.event("sub_issue_added", actor, { subIssue: child }));
    this.emitSubIssues(state, "sub_issue_added", actor, p, c);
    this.emitSubIssues(state, "parent_issue_added", actor, c, p);
    return c;
  }

  removeSubIssue(repo: RepoRef, parent: number, child: number, actor: string): Issue {
    const state = this.state(repo);
    const p = this.requireIssue(repo, parent);
    const c = this.requireIssue(repo, child);
    if (c.parent !== parent) throw new StoreError(404, "Not Found");
    p.subIssues = p.subIssues.filter((n) => n !== child);
    c.parent = null;
    p.events.push(this.event("sub_issue_removed", actor, { subIssue: child }));
    this.emitSubIssues(state, "sub_issue_removed", actor, p, c);
    return c;
  }

  /** A `sub_issues` webhook: `issue` is the one the action is about, `other` the parent or child. */
  private emitSubIssues(
    state: RepoState,
    action: "sub_issue_added" | "sub_issue_removed" | "parent_issue_added",
    sender: string,
    issue: Issue,
    other: Issue,
  ): void {
    this.emit({ name: "sub_issues", action, repo: state.repo, sender, issue, other });
  }

  /** Records that `number` is blocked by `blocker` (GitHub's issue dependencies). */
  addBlockedBy(repo: RepoRef, number: number, blocker: number, actor: string): Issue {
    const issue = this.requireIssue(repo, number);
    const other = this.requireIssue(repo, blocker);
    if (number === blocker) throw new StoreError(422, "An issue cannot block itself");
    if (!issue.blockedBy.includes(other.number)) {
      issue.blockedBy.push(other.number);
      issue.events.push(this.event("blocked_by_added", actor));
    }
    return other;
  }

  removeBlockedBy(repo: RepoRef, number: number, blocker: number, actor: string): Issue {
    const issue = this.requireIssue(repo, number);
    const other = this.requireIssue(repo, blocker);
    if (!issue.blockedBy.includes(blocker)) throw new StoreError(404, "Not Found");
    issue.blockedBy = issue.blockedBy.filter((n) => n !== blocker);
    issue.events.push(this.event("blocked_by_removed", actor));
    return other;
  }

  /** Issues that `number` blocks. */
  listBlocking(repo: RepoRef, number: number): Issue[] {
    return this.listIssues(repo).filter((i) => i.blockedBy.includes(number));
  }
}
