/** Issues: opening, editing, closing, locking and labeling them. */
import type { Issue, IssueEvent, IssueState, LockReason, StateReason } from "./issue-records.js";
import { encodeNodeId } from "./node-ids.js";
import type { Label, RepoRef } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { StoreWithLabels } from "./with-labels.js";

interface CreateIssueInput {
  title: string;
  body?: string | null;
  labels?: string[];
  assignees?: string[];
  /** Login of the author (must exist as a user, or be a bot login). */
  author: string;
  createdAt?: Date;
}

interface UpdateIssueInput {
  title?: string;
  body?: string | null;
  state?: IssueState;
  stateReason?: StateReason;
  labels?: string[];
  assignees?: string[];
}

export class StoreWithIssues extends StoreWithLabels {
  /** Opens an issue (emits `issues.opened`, then `issues.labeled` per label, each recorded as an event). */
  createIssue(repo: RepoRef, input: CreateIssueInput): Issue {
    const state = this.state(repo);
    const issue = this.newIssue(state, input.title, input.body ?? null, input.author, input.createdAt);
    issue.assignees = [...(input.assignees ?? [])];
    this.emit({ name: "issues", action: "opened", repo: state.repo, sender: input.author, issue });
    if (input.labels?.length) this.applyLabels(state, issue, input.labels, input.author);
    return issue;
  }

  protected newIssue(
    state: RepoState,
    title: string,
    body: string | null,
    author: string,
    createdAt?: Date,
  ): Issue {
    if (!title.trim()) {
      throw new StoreError(422, "Validation Failed", [
        { resource: "Issue", code: "missing_field", field: "title" },
      ]);
    }
    const id = this.id();
    const at = createdAt ?? this.now();
    const issue: Issue = {
      id,
      nodeId: encodeNodeId("Issue", id),
      number: state.nextNumber++,
      title,
      body,
      user: author,
      state: "open",
      stateReason: null,
      labels: [],
      assignees: [],
      locked: false,
      activeLockReason: null,
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      closedBy: null,
      events: [],
      reactions: [],
      parent: null,
      subIssues: [],
      blockedBy: [],
      pinned: false,
    };
    state.issues.set(issue.number, issue);
    return issue;
  }

  /** An issue or pull request by number. */
  getIssue(repo: RepoRef, number: number): Issue | undefined {
    return this.state(repo).issues.get(number);
  }

  getIssueById(repo: RepoRef, id: number): Issue | undefined {
    for (const issue of this.state(repo).issues.values()) if (issue.id === id) return issue;
    return undefined;
  }

  /** Like {@link getIssue} but throws a 404 StoreError. */
  requireIssue(repo: RepoRef, number: number): Issue {
    const issue = this.getIssue(repo, number);
    if (!issue) throw new StoreError(404, "Not Found");
    return issue;
  }

  /** Every issue and pull request of a repository, in number order. */
  listIssues(repo: RepoRef): Issue[] {
    return [...this.state(repo).issues.values()];
  }

  /** Edits title/body/state/labels/assignees; emits edited/closed/reopened/labeled/unlabeled. */
  updateIssue(repo: RepoRef, number: number, patch: UpdateIssueInput, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    const changes: { title?: { from: string }; body?: { from: string | null } } = {};
    if (patch.title !== undefined && patch.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.events.push(this.event("renamed", actor, { rename: { from: issue.title, to: patch.title } }));
      issue.title = patch.title;
    }
    if (patch.body !== undefined && patch.body !== issue.body) {
      changes.body = { from: issue.body };
      issue.body = patch.body;
      const edits = issue.contentEdits ?? [];
      if (edits.length === 0) edits.push({ at: issue.createdAt, editor: issue.user });
      edits.push({ at: this.now(), editor: actor });
      issue.contentEdits = edits;
    }
    if (changes.title || changes.body) {
      issue.updatedAt = this.now();
      this.emitIssueOrPull(state, issue, "edited", actor, { changes });
    }
    if (patch.labels !== undefined) this.setLabels(repo, number, patch.labels, actor);
    if (patch.assignees !== undefined) {
      const next = new Set(patch.assignees.map((a) => a.toLowerCase()));
      for (const a of issue.assignees) {
        if (!next.has(a.toLowerCase())) issue.events.push(this.event("unassigned", actor, { assignee: a }));
      }
      for (const a of patch.assignees) {
        if (!issue.assignees.some((x) => x.toLowerCase() === a.toLowerCase())) {
          issue.events.push(this.event("assigned", actor, { assignee: a }));
        }
      }
      issue.assignees = [...patch.assignees];
    }
    if (patch.state === "closed" && issue.state === "open") {
      this.closeIssue(repo, number, actor, patch.stateReason ?? "completed");
    } else if (patch.state === "open" && issue.state === "closed") {
      this.reopenIssue(repo, number, actor);
    } else if (patch.stateReason !== undefined && patch.stateReason !== null && issue.state === "closed") {
      issue.stateReason = patch.stateReason;
    }
    return issue;
  }

  /** Closes an issue (or an unmerged PR) with a reason; emits `issues.closed` / `pull_request.closed`. */
  closeIssue(repo: RepoRef, number: number, actor: string, reason: StateReason = "completed"): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.state === "closed") return issue;
    const at = this.now();
    issue.state = "closed";
    issue.stateReason = issue.pull ? null : (reason ?? "completed");
    issue.closedAt = at;
    issue.closedBy = actor;
    issue.updatedAt = at;
    issue.events.push(this.event("closed", actor, { stateReason: issue.stateReason, commitId: null }));
    this.emitIssueOrPull(state, issue, "closed", actor);
    return issue;
  }

  /**
   * Deletes an issue for good, with its comments, as an admin can on GitHub (GraphQL `deleteIssue`); emits
   * `issues.deleted`. Afterwards the number answers 404.
   */
  deleteIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.pull) throw new StoreError(422, "Pull requests cannot be deleted");
    state.issues.delete(number);
    for (const [id, comment] of state.comments) if (comment.issueNumber === number) state.comments.delete(id);
    this.emit({ name: "issues", action: "deleted", repo: state.repo, sender: actor, issue });
    return issue;
  }

  reopenIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.state === "open") return issue;
    if (issue.pull?.merged)
      throw new StoreError(422, "Validation Failed: merged pull requests cannot be reopened");
    issue.state = "open";
    issue.stateReason = issue.pull ? null : "reopened";
    issue.closedAt = null;
    issue.closedBy = null;
    issue.updatedAt = this.now();
    issue.events.push(this.event("reopened", actor));
    this.emitIssueOrPull(state, issue, "reopened", actor);
    return issue;
  }

  lockIssue(repo: RepoRef, number: number, actor: string, reason: LockReason = null): void {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    issue.locked = true;
    issue.activeLockReason = reason;
    issue.events.push(this.event("locked", actor, { lockReason: reason }));
    if (!issue.pull) this.emit({ name: "issues", action: "locked", repo: state.repo, sender: actor, issue });
  }

  unlockIssue(repo: RepoRef, number: number, actor: string): void {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.locked) throw new StoreError(404, "Not Found");
    issue.locked = false;
    issue.activeLockReason = null;
    issue.events.push(this.event("unlocked", actor));
    if (!issue.pull)
      this.emit({ name: "issues", action: "unlocked", repo: state.repo, sender: actor, issue });
  }

  /** A new issue event record (the caller appends it to the issue's `events`). */
  protected event(
    kind: IssueEvent["event"],
    actor: string,
    extra: Partial<Omit<IssueEvent, "id" | "nodeId" | "event" | "actor" | "createdAt">> = {},
  ): IssueEvent {
    const id = this.id();
    return { id, nodeId: encodeNodeId("Event", id), event: kind, actor, createdAt: this.now(), ...extra };
  }

  /** Adds labels (creating unknown ones, as GitHub does); records `labeled` events with the actor. */
  addLabels(repo: RepoRef, number: number, labels: string[], actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    this.applyLabels(state, issue, labels, actor);
    return this.labelsOf(repo, issue);
  }

  /** Replaces an issue's labels; emits unlabeled for removed and labeled for added ones. */
  setLabels(repo: RepoRef, number: number, labels: string[], actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    const wanted = new Set(labels.map((l) => l.toLowerCase()));
    for (const name of [...issue.labels]) {
      if (!wanted.has(name.toLowerCase())) this.unapplyLabel(state, issue, name, actor);
    }
    this.applyLabels(state, issue, labels, actor);
    return this.labelsOf(repo, issue);
  }

  /** Removes one label; 404 when the issue does not carry it (as GitHub). */
  removeLabel(repo: RepoRef, number: number, name: string, actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.labels.some((l) => l.toLowerCase() === name.toLowerCase())) {
      throw new StoreError(404, "Label does not exist");
    }
    this.unapplyLabel(state, issue, name, actor);
    return this.labelsOf(repo, issue);
  }

  /** Removes every label of an issue. */
  clearLabels(repo: RepoRef, number: number, actor: string): void {
    this.setLabels(repo, number, [], actor);
  }

  /** The label records an issue carries, in the order applied. */
  labelsOf(repo: RepoRef, issue: Issue): Label[] {
    const state = this.state(repo);
    return issue.labels.map((name) => state.labels.get(name.toLowerCase())).filter((l): l is Label => !!l);
  }

  private applyLabels(state: RepoState, issue: Issue, labels: string[], actor: string): void {
    for (const name of labels) {
      if (issue.labels.some((l) => l.toLowerCase() === name.toLowerCase())) continue;
      const label = this.ensureLabel(state, name);
      issue.labels.push(label.name);
      issue.updatedAt = this.now();
      issue.events.push(this.event("labeled", actor, { label: { name: label.name, color: label.color } }));
      this.emitIssueOrPull(state, issue, "labeled", actor, { label });
    }
  }

  private unapplyLabel(state: RepoState, issue: Issue, name: string, actor: string): void {
    const index = issue.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (index < 0) return;
    const [removed] = issue.labels.splice(index, 1);
    const label = state.labels.get(removed!.toLowerCase()) ?? this.ensureLabel(state, removed!);
    issue.updatedAt = this.now();
    issue.events.push(this.event("unlabeled", actor, { label: { name: label.name, color: label.color } }));
    this.emitIssueOrPull(state, issue, "unlabeled", actor, { label });
  }

  /** Who last applied a label to an issue (from its `labeled` events), or null. */
  whoLabeled(repo: RepoRef, number: number, label: string): string | null {
    const issue = this.requireIssue(repo, number);
    for (let i = issue.events.length - 1; i >= 0; i--) {
      const e = issue.events[i]!;
      if (e.event === "labeled" && e.label?.name.toLowerCase() === label.toLowerCase()) return e.actor;
    }
    return null;
  }
}
