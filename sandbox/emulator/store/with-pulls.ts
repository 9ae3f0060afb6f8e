/** Pull requests: opening, refreshing from git, editing and merging them. */
import type { Issue, IssueState } from "./issue-records.js";
import { encodeNodeId } from "./node-ids.js";
import { type MergeMethod, type PullFields, forkBranchRef, headRefOf } from "./pull-records.js";
import { fullRef, syntheticSha } from "./ref-names.js";
import { type RepoRef, repoKeyOf } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import type { StoreEvent } from "./store-events.js";
import { StoreWithChecks } from "./with-checks.js";

interface CreatePullInput {
  title: string;
  body?: string | null;
  /** Head branch name (`feature` or `owner:feature`). */
  head: string;
  /** Base branch name. */
  base: string;
  draft?: boolean;
  author: string;
  maintainerCanModify?: boolean;
}

interface UpdatePullInput {
  title?: string;
  body?: string | null;
  state?: IssueState;
  base?: string;
}

export class StoreWithPulls extends StoreWithChecks {
  /** Opens a pull request from an existing branch; emits `pull_request.opened`. */
  async createPull(repo: RepoRef, input: CreatePullInput): Promise<Issue> {
    const state = this.state(repo);
    const headBranch = input.head.includes(":") ? input.head.slice(input.head.indexOf(":") + 1) : input.head;
    // `head: "user:branch"` names a branch in that user's fork when the user is not the repository's owner:
    // https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request
    const headOwner = input.head.includes(":") ? input.head.slice(0, input.head.indexOf(":")) : null;
    const fork =
      headOwner && headOwner.toLowerCase() !== state.repo.owner.toLowerCase()
        ? `${headOwner}/${state.repo.name}`
        : undefined;
    const headSha = await this.resolveRef(
      repo,
      fork ? forkBranchRef(headOwner!, headBranch) : fullRef(headBranch),
    );
    const baseSha = await this.resolveRef(repo, fullRef(input.base));
    const invalid = (field: string) =>
      new StoreError(422, "Validation Failed", [{ resource: "PullRequest", field, code: "invalid" }]);
    if (!headSha) throw invalid("head");
    if (!baseSha) throw invalid("base");
    for (const other of state.issues.values()) {
      if (
        other.pull &&
        other.state === "open" &&
        other.pull.head.ref === headBranch &&
        other.pull.headRepo === fork &&
        other.pull.base.ref === input.base
      ) {
        throw new StoreError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: `A pull request already exists for ${state.repo.owner}:${headBranch}.`,
          },
        ]);
      }
    }
    if (headSha === baseSha) {
      throw new StoreError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `No commits between ${input.base} and ${headBranch}`,
        },
      ]);
    }
    const issue = this.newIssue(state, input.title, input.body ?? null, input.author);
    const pullId = this.id();
    issue.pull = {
      id: pullId,
      nodeId: encodeNodeId("PullRequest", pullId),
      head: { ref: headBranch, sha: headSha },
      base: { ref: input.base, sha: baseSha },
      draft: input.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      mergeable: null,
      mergeableState: "unknown",
      requestedReviewers: [],
      reviews: [],
      additions: 0,
      deletions: 0,
      changedFiles: 0,
      commits: 0,
      maintainerCanModify: input.maintainerCanModify ?? true,
      ...(fork ? { headRepo: fork } : {}),
    };
    await this.refreshPull(repo, issue.number);
    this.emit({
      name: "pull_request",
      action: "opened",
      repo: state.repo,
      sender: input.author,
      pull: issue,
    });
    return issue;
  }

  /** A pull request (an issue with `pull` set), or undefined. */
  getPull(repo: RepoRef, number: number): Issue | undefined {
    const issue = this.getIssue(repo, number);
    return issue?.pull ? issue : undefined;
  }

  requirePull(repo: RepoRef, number: number): Issue & { pull: PullFields } {
    const issue = this.getIssue(repo, number);
    if (!issue?.pull) throw new StoreError(404, "Not Found");
    return issue as Issue & { pull: PullFields };
  }

  listPulls(repo: RepoRef): Array<Issue & { pull: PullFields }> {
    return this.listIssues(repo).filter((i): i is Issue & { pull: PullFields } => !!i.pull);
  }

  /**
   * Recomputes a PR's head/base SHAs, diff stats and mergeability from git (GitHub does this lazily; the
   * REST and GraphQL layers call it before answering).
   */
  async refreshPull(repo: RepoRef, number: number): Promise<Issue & { pull: PullFields }> {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const pull = issue.pull;
    const key = repoKeyOf(state.repo.fullName);
    if (issue.state === "open") {
      const headSha = await this.resolveRef(repo, headRefOf(pull));
      if (headSha) pull.head.sha = headSha;
      const baseSha = await this.resolveRef(repo, fullRef(pull.base.ref));
      if (baseSha) pull.base.sha = baseSha;
      try {
        const diff = await this.compare(repo, pull.base.sha, pull.head.sha);
        pull.additions = diff.files.reduce((n, f) => n + f.additions, 0);
        pull.deletions = diff.files.reduce((n, f) => n + f.deletions, 0);
        pull.changedFiles = diff.files.length;
        pull.commits = diff.ahead_by;
      } catch {
        // a vanished branch leaves the last known numbers
      }
      let clean = true;
      if (this.gitBackend?.canMerge)
        clean = await this.gitBackend.canMerge(key, pull.base.ref, pull.head.sha);
      pull.mergeable = clean;
      pull.mergeableState = pull.draft ? "draft" : clean ? this.cleanStateFor(state, pull.head.sha) : "dirty";
    }
    return issue;
  }

  /** Edits a PR (title/body/state/base); emits edited/closed/reopened. */
  updatePull(repo: RepoRef, number: number, patch: UpdatePullInput, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const changes: {
      title?: { from: string };
      body?: { from: string | null };
      base?: { ref: { from: string } };
    } = {};
    if (patch.title !== undefined && patch.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = patch.title;
    }
    if (patch.body !== undefined && patch.body !== issue.body) {
      changes.body = { from: issue.body };
      issue.body = patch.body;
    }
    if (patch.base !== undefined && patch.base !== issue.pull.base.ref) {
      changes.base = { ref: { from: issue.pull.base.ref } };
      issue.pull.base.ref = patch.base;
      issue.pull.mergeable = null;
      issue.pull.mergeableState = "unknown";
    }
    if (Object.keys(changes).length) {
      issue.updatedAt = this.now();
      this.emit({
        name: "pull_request",
        action: "edited",
        repo: state.repo,
        sender: actor,
        pull: issue,
        changes,
      });
    }
    if (patch.state === "closed") this.closeIssue(repo, number, actor);
    else if (patch.state === "open") this.reopenIssue(repo, number, actor);
    return issue;
  }

  /**
   * Merges a PR through the git backend (or in memory): 405 when not mergeable or already merged, 409 when
   * `sha` does not match the head. Closes the PR as merged, emits `pull_request.closed` (merged) and the
   * base branch's `push`.
   */
  async mergePull(
    repo: RepoRef,
    number: number,
    options: {
      method?: MergeMethod;
      commitTitle?: string;
      commitMessage?: string;
      sha?: string;
      /**
       * A commit already built on the base (a merge queue's merge group): the base fast-forwards to it instead
       * of a new merge being made, so what lands is exactly what the checks ran on.
       */
      preparedSha?: string;
    },
    actor: string,
  ): Promise<{ sha: string; merged: true; message: string }> {
    const state = this.state(repo);
    const issue = await this.refreshPull(repo, number);
    const pull = issue.pull;
    if (pull.merged) throw new StoreError(405, "Pull Request is not mergeable");
    if (issue.state !== "open") throw new StoreError(405, "Pull Request is not mergeable");
    if (pull.draft) throw new StoreError(405, "Pull Request is still a draft");
    if (options.sha && options.sha !== pull.head.sha) {
      throw new StoreError(409, "Head branch was modified. Review and try the merge again.");
    }
    const method = options.method ?? "merge";
    const title =
      options.commitTitle ??
      (method === "merge"
        ? `Merge pull request #${number} from ${state.repo.owner}/${pull.head.ref}`
        : `${issue.title} (#${number})`);
    const message = options.commitMessage ? `${title}\n\n${options.commitMessage}` : title;
    const before = pull.base.sha;
    let sha: string;
    if (options.preparedSha) {
      if (this.gitBackend) {
        if (!this.gitBackend.updateRef)
          throw new StoreError(422, "Updating refs is not supported by the git backend");
        await this.gitBackend.updateRef(
          repoKeyOf(state.repo.fullName),
          fullRef(pull.base.ref),
          options.preparedSha,
          false,
        );
      } else {
        state.refs.set(fullRef(pull.base.ref), options.preparedSha);
      }
      sha = options.preparedSha;
    } else if (this.gitBackend) {
      const outcome = await this.gitBackend.mergeBranches(
        repoKeyOf(state.repo.fullName),
        pull.base.ref,
        pull.head.ref,
        method,
        message,
      );
      if ("conflict" in outcome) {
        pull.mergeable = false;
        pull.mergeableState = "dirty";
        throw new StoreError(405, "Pull Request is not mergeable");
      }
      sha = outcome.sha;
    } else {
      if (pull.mergeable === false) throw new StoreError(405, "Pull Request is not mergeable");
      sha = method === "rebase" ? pull.head.sha : syntheticSha(before, pull.head.sha, message);
      state.refs.set(fullRef(pull.base.ref), sha);
    }
    const at = this.now();
    pull.merged = true;
    pull.mergedAt = at;
    pull.mergedBy = actor;
    pull.mergeCommitSha = sha;
    pull.mergeable = null;
    pull.mergeableState = "unknown";
    pull.base.sha = before;
    issue.state = "closed";
    issue.closedAt = at;
    issue.closedBy = actor;
    issue.updatedAt = at;
    issue.events.push(this.event("merged", actor, { commitId: sha }));
    issue.events.push(this.event("closed", actor, { commitId: sha }));
    await this.recordWebCommit(
      state.repo.fullName,
      pull.base.ref,
      { before, sha, actor, message, at, merge: options.preparedSha ? "merge_queue_merge" : "pr_merge" },
      false,
    );
    this.emit({ name: "pull_request", action: "closed", repo: state.repo, sender: actor, pull: issue });
    this.closeLinkedIssues(state, issue, actor, sha);
    return { sha, merged: true, message: "Pull Request successfully merged" };
  }

  /**
   * "Update branch": merges the base into the head branch as a new commit by `actor`, which moves the head (a
   * `push` and `pull_request` `synchronize`, so checks run again). 422 when there is nothing to merge or it
   * conflicts. https://docs.github.com/rest/pulls/pulls#update-a-pull-request-branch
   */
  async updatePullBranch(repo: RepoRef, number: number, actor: string): Promise<string> {
    const state = this.state(repo);
    const issue = await this.refreshPull(repo, number);
    const pull = issue.pull;
    if (pull.headRepo)
      throw new StoreError(422, "The sandbox updates branches of this repository only, not of forks.");
    const diff = await this.compare(repo, pull.base.sha, pull.head.sha);
    if ((diff.behind_by ?? 0) === 0)
      throw new StoreError(422, "There are no new commits on the base branch.");
    const before = pull.head.sha;
    const message = `Merge branch '${pull.base.ref}' into ${pull.head.ref}`;
    let sha: string;
    if (this.gitBackend) {
      const outcome = await this.gitBackend.mergeBranches(
        repoKeyOf(state.repo.fullName),
        pull.head.ref,
        fullRef(pull.base.ref),
        "merge",
        message,
      );
      if ("conflict" in outcome) throw new StoreError(422, "merge conflict between base and head");
      sha = outcome.sha;
    } else {
      sha = syntheticSha(before, pull.base.sha, message);
    }
    await this.recordWebCommit(
      state.repo.fullName,
      pull.head.ref,
      { before, sha, actor, message, at: this.now() },
      !this.gitBackend,
    );
    return sha;
  }

  /**
   * The push of one commit GitHub made on `actor`'s behalf (a merge, a branch update), authored with the
   * actor's noreply address (a bot's login is not a valid local part: GitHub's generic noreply then).
   */
  private async recordWebCommit(
    repo: string,
    branch: string,
    commit: {
      before: string;
      sha: string;
      actor: string;
      message: string;
      at: Date;
      merge?: "pr_merge" | "merge_queue_merge";
    },
    moveRef: boolean,
  ): Promise<void> {
    const { before, sha, actor, message, at } = commit;
    await this.recordPush(
      {
        ...(commit.merge ? { merge: commit.merge } : {}),
        repo,
        ref: fullRef(branch),
        before,
        after: sha,
        pusher: actor,
        commits: [
          {
            id: sha,
            message,
            timestamp: at.toISOString(),
            author: {
              name: actor,
              email: /^[A-Za-z0-9-]+$/.test(actor)
                ? `${actor}@users.noreply.github.com`
                : "noreply@github.com",
              username: actor,
            },
          },
        ],
      },
      moveRef,
    );
  }

  /**
   * Announces a change GitHub's own merge mechanisms made (sandbox/emulator/merge/merge-automation.ts): auto-merge
   * enabled or disabled, a pull request entering or leaving a merge queue, a merge group asking for checks.
   */
  announce(
    event:
      | Extract<StoreEvent, { name: "merge_group" }>
      | (Extract<StoreEvent, { name: "pull_request" }> & {
          action: "auto_merge_enabled" | "auto_merge_disabled" | "enqueued" | "dequeued";
        }),
  ): void {
    if (event.name === "pull_request") event.pull.updatedAt = this.now();
    this.emit(event);
  }

  /** GitHub closes `Closes #N` / `Fixes #N` issues when a PR merges into the default branch. */
  private closeLinkedIssues(
    state: RepoState,
    pull: Issue & { pull: PullFields },
    actor: string,
    sha: string,
  ): void {
    if (pull.pull.base.ref !== state.repo.defaultBranch) return;
    const pattern = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/gi;
    for (const match of (pull.body ?? "").matchAll(pattern)) {
      const target = state.issues.get(Number(match[1]));
      if (!target || target.pull || target.state === "closed") continue;
      this.closeIssue(state.repo.fullName, target.number, actor, "completed");
      const last = target.events[target.events.length - 1];
      if (last?.event === "closed") last.commitId = sha;
    }
  }
}
