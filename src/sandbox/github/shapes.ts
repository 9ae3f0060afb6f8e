/**
 * Store records → GitHub's JSON shapes (REST responses and webhook payloads share them, as on GitHub).
 */
import type {
  CheckRun,
  CheckSuite,
  Comment,
  CommitStatus,
  Issue,
  IssueEvent,
  Label,
  PullFields,
  Reaction,
  Repo,
  Review,
  ReviewComment,
  SandboxStore,
  User,
  Workflow,
  WorkflowJob,
  WorkflowRun,
} from "./store.js";
import { encodeNodeId, permissionAtLeast } from "./store.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
export type JsonObject = { [key: string]: Json | undefined };

/** The noreply address GitHub gives a login (bots get GitHub's own). */
export function noreplyEmail(login: string): string {
  return /^[A-Za-z0-9-]+$/.test(login) ? `${login}@users.noreply.github.com` : "noreply@github.com";
}

function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

/** Serializes store records with the sandbox's URLs. */
export class Shapes {
  constructor(
    private readonly store: SandboxStore,
    /** REST root (`http://127.0.0.1:PORT`). */
    readonly apiUrl: string,
    /** Where `html_url`s point (the sandbox has no web UI; the same host is used). */
    readonly htmlUrl: string = apiUrl,
  ) {}

  private userRecord(login: string): User {
    const known = this.store.getUser(login);
    if (known) return known;
    return this.store.addUser(login, { type: login.endsWith("[bot]") ? "Bot" : "User", permission: "none" });
  }

  /** `simple-user` */
  user(login: string | null): JsonObject | null {
    if (login === null) return null;
    const u = this.userRecord(login);
    const api = `${this.apiUrl}/users/${encodeURIComponent(u.login)}`;
    return {
      login: u.login,
      id: u.id,
      node_id: u.nodeId,
      avatar_url: `${this.htmlUrl}/avatars/${encodeURIComponent(u.login)}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.htmlUrl}/${encodeURIComponent(u.login)}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: u.type,
      user_view_type: "public",
      site_admin: false,
    };
  }

  /** `GET /user` / `GET /users/{username}` (public-user). */
  publicUser(login: string): JsonObject {
    const u = this.userRecord(login);
    return {
      ...this.user(login),
      name: u.name,
      company: null,
      blog: "",
      location: null,
      email: u.email,
      hireable: null,
      bio: null,
      twitter_username: null,
      public_repos: this.store.listRepos().filter((r) => r.owner.toLowerCase() === u.login.toLowerCase())
        .length,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: iso(u.createdAt),
      updated_at: iso(u.createdAt),
    };
  }

  repoApi(repo: Repo): string {
    return `${this.apiUrl}/repos/${repo.fullName}`;
  }

  repoHtml(repo: Repo): string {
    return `${this.htmlUrl}/${repo.fullName}`;
  }

  /** Full repository (webhook `repository`, `GET /repos/{owner}/{repo}`). */
  repository(repo: Repo, viewer?: string): JsonObject {
    const api = this.repoApi(repo);
    const html = this.repoHtml(repo);
    const open = this.store.listIssues(repo.fullName).filter((i) => i.state === "open").length;
    const permission = viewer ? this.store.getPermission(repo.fullName, viewer) : null;
    const host = new URL(this.htmlUrl).host;
    return {
      id: repo.id,
      node_id: repo.nodeId,
      name: repo.name,
      full_name: repo.fullName,
      private: repo.private,
      owner: this.user(repo.owner),
      html_url: html,
      description: repo.description,
      fork: false,
      url: api,
      forks_url: `${api}/forks`,
      keys_url: `${api}/keys{/key_id}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      teams_url: `${api}/teams`,
      hooks_url: `${api}/hooks`,
      issue_events_url: `${api}/issues/events{/number}`,
      events_url: `${api}/events`,
      assignees_url: `${api}/assignees{/user}`,
      branches_url: `${api}/branches{/branch}`,
      tags_url: `${api}/tags`,
      blobs_url: `${api}/git/blobs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      trees_url: `${api}/git/trees{/sha}`,
      statuses_url: `${api}/statuses/{sha}`,
      languages_url: `${api}/languages`,
      stargazers_url: `${api}/stargazers`,
      contributors_url: `${api}/contributors`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      commits_url: `${api}/commits{/sha}`,
      git_commits_url: `${api}/git/commits{/sha}`,
      comments_url: `${api}/comments{/number}`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      contents_url: `${api}/contents/{+path}`,
      compare_url: `${api}/compare/{base}...{head}`,
      merges_url: `${api}/merges`,
      archive_url: `${api}/{archive_format}{/ref}`,
      downloads_url: `${api}/downloads`,
      issues_url: `${api}/issues{/number}`,
      pulls_url: `${api}/pulls{/number}`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      labels_url: `${api}/labels{/name}`,
      releases_url: `${api}/releases{/id}`,
      deployments_url: `${api}/deployments`,
      created_at: iso(repo.createdAt),
      updated_at: iso(repo.updatedAt),
      pushed_at: iso(repo.pushedAt),
      git_url: `git://${host}/${repo.fullName}.git`,
      ssh_url: `git@${host}:${repo.fullName}.git`,
      clone_url: `${this.htmlUrl}/git/${repo.fullName}.git`,
      svn_url: html,
      homepage: null,
      size: 0,
      stargazers_count: 0,
      watchers_count: 0,
      language: null,
      has_issues: true,
      has_projects: false,
      has_downloads: true,
      has_wiki: false,
      has_pages: false,
      has_discussions: false,
      forks_count: 0,
      mirror_url: null,
      archived: false,
      disabled: false,
      open_issues_count: open,
      license: null,
      allow_forking: true,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: repo.private ? "private" : "public",
      forks: 0,
      open_issues: open,
      watchers: 0,
      default_branch: repo.defaultBranch,
      allow_merge_commit: true,
      allow_squash_merge: true,
      allow_rebase_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: false,
      ...(permission
        ? {
            permissions: {
              admin: permissionAtLeast(permission, "admin"),
              maintain: permissionAtLeast(permission, "maintain"),
              push: permissionAtLeast(permission, "write"),
              triage: permissionAtLeast(permission, "triage"),
              pull: permissionAtLeast(permission, "read"),
            },
          }
        : {}),
      custom_properties: {},
    };
  }

  /** The smaller repository object inside PR heads and installation listings. */
  minimalRepository(repo: Repo): JsonObject {
    return this.repository(repo);
  }

  label(repo: Repo, label: Label): JsonObject {
    return {
      id: label.id,
      node_id: label.nodeId,
      url: `${this.repoApi(repo)}/labels/${encodeURIComponent(label.name)}`,
      name: label.name,
      color: label.color,
      default: label.default,
      description: label.description,
    };
  }

  authorAssociation(repo: Repo, login: string): string {
    if (login.toLowerCase() === repo.owner.toLowerCase()) return "OWNER";
    if (login.endsWith("[bot]")) return "NONE";
    const permission = this.store.getPermission(repo.fullName, login);
    if (permissionAtLeast(permission, "write")) return "COLLABORATOR";
    return "NONE";
  }

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

  /**
   * One side of a pull request. A fork PR's head is the fork's: its label, owner and repository (`fork: true`),
   * not the base repository's — https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
   */
  private branchSide(repo: Repo, side: { ref: string; sha: string }, fork?: string): JsonObject {
    const owner = fork ? fork.slice(0, fork.indexOf("/")) : repo.owner;
    return {
      label: `${owner}:${side.ref}`,
      ref: side.ref,
      sha: side.sha,
      user: this.user(owner),
      repo: fork ? this.forkRepository(repo, fork) : this.repository(repo),
    };
  }

  /** A fork of `repo` named `fullName`, as far as its pull requests show it (the sandbox keeps no forks). */
  private forkRepository(repo: Repo, fullName: string): JsonObject {
    const [owner = "", name = ""] = fullName.split("/");
    // Every URL of the base repository, pointed at the fork.
    const shape = JSON.parse(
      JSON.stringify(this.repository(repo)).split(`/${repo.fullName}`).join(`/${fullName}`),
    ) as JsonObject;
    let id = 0;
    for (const c of fullName.toLowerCase()) id = (id * 31 + c.charCodeAt(0)) % 1_000_000_000;
    return {
      ...shape,
      id: 2_000_000_000 + id,
      node_id: `R_fork_${Buffer.from(fullName).toString("base64url")}`,
      name,
      full_name: fullName,
      owner: this.user(owner),
      fork: true,
    };
  }

  /** `pull-request` (full) for `GET /pulls/{n}` and webhooks. */
  pull(repo: Repo, issue: Issue & { pull: PullFields }): JsonObject {
    const p = issue.pull;
    const api = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}`;
    const issueApi = `${this.repoApi(repo)}/issues/${issue.number}`;
    return {
      url: api,
      id: p.id,
      node_id: p.nodeId,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueApi,
      commits_url: `${api}/commits`,
      review_comments_url: `${api}/comments`,
      review_comment_url: `${this.repoApi(repo)}/pulls/comments{/number}`,
      comments_url: `${issueApi}/comments`,
      statuses_url: `${this.repoApi(repo)}/statuses/${p.head.sha}`,
      number: issue.number,
      state: issue.state,
      locked: issue.locked,
      title: issue.title,
      user: this.user(issue.user),
      body: issue.body,
      labels: this.store.labelsOf(repo.fullName, issue).map((l) => this.label(repo, l)),
      milestone: null,
      active_lock_reason: issue.activeLockReason,
      created_at: iso(issue.createdAt),
      updated_at: iso(issue.updatedAt),
      closed_at: iso(issue.closedAt),
      merged_at: iso(p.mergedAt),
      merge_commit_sha: p.mergeCommitSha,
      assignee: issue.assignees[0] ? this.user(issue.assignees[0]) : null,
      assignees: issue.assignees.map((a) => this.user(a)),
      requested_reviewers: p.requestedReviewers.map((r) => this.user(r)),
      requested_teams: [],
      head: this.branchSide(repo, p.head, p.headRepo),
      base: this.branchSide(repo, p.base),
      _links: {
        self: { href: api },
        html: { href: html },
        issue: { href: issueApi },
        comments: { href: `${issueApi}/comments` },
        review_comments: { href: `${api}/comments` },
        review_comment: { href: `${this.repoApi(repo)}/pulls/comments{/number}` },
        commits: { href: `${api}/commits` },
        statuses: { href: `${this.repoApi(repo)}/statuses/${p.head.sha}` },
      },
      author_association: this.authorAssociation(repo, issue.user),
      auto_merge: null,
      draft: p.draft,
      merged: p.merged,
      mergeable: p.mergeable,
      rebaseable: p.mergeable,
      mergeable_state: p.mergeableState,
      merged_by: p.mergedBy ? this.user(p.mergedBy) : null,
      comments: this.store.listComments(repo.fullName, issue.number).length,
      review_comments: 0,
      maintainer_can_modify: p.maintainerCanModify,
      commits: p.commits,
      additions: p.additions,
      deletions: p.deletions,
      changed_files: p.changedFiles,
    };
  }

  /** `pull-request-simple` (list items): the full shape minus the counters. */
  pullSimple(repo: Repo, issue: Issue & { pull: PullFields }): JsonObject {
    const full = this.pull(repo, issue);
    for (const key of [
      "merged",
      "mergeable",
      "rebaseable",
      "mergeable_state",
      "merged_by",
      "comments",
      "review_comments",
      "maintainer_can_modify",
      "commits",
      "additions",
      "deletions",
      "changed_files",
    ]) {
      delete full[key];
    }
    return full;
  }

  review(repo: Repo, issue: Issue, review: Review): JsonObject {
    const pullApi = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}#pullrequestreview-${review.id}`;
    return {
      id: review.id,
      node_id: review.nodeId,
      user: this.user(review.user),
      body: review.body,
      state: review.state,
      html_url: html,
      pull_request_url: pullApi,
      author_association: this.authorAssociation(repo, review.user),
      _links: { html: { href: html }, pull_request: { href: pullApi } },
      submitted_at: iso(review.submittedAt) ?? undefined,
      commit_id: review.commitId,
    };
  }

  reviewComment(repo: Repo, issue: Issue, comment: ReviewComment): JsonObject {
    const pullApi = `${this.repoApi(repo)}/pulls/${issue.number}`;
    const url = `${this.repoApi(repo)}/pulls/comments/${comment.id}`;
    const html = `${this.repoHtml(repo)}/pull/${issue.number}#discussion_r${comment.id}`;
    return {
      url,
      id: comment.id,
      node_id: comment.nodeId,
      pull_request_review_id: comment.reviewId,
      diff_hunk: "",
      path: comment.path,
      commit_id: comment.commitId,
      original_commit_id: comment.commitId,
      user: this.user(comment.user),
      body: comment.body,
      created_at: iso(comment.createdAt),
      updated_at: iso(comment.createdAt),
      html_url: html,
      pull_request_url: pullApi,
      author_association: this.authorAssociation(repo, comment.user),
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pullApi } },
      line: comment.line ?? undefined,
      side: "RIGHT",
    };
  }

  /** The app object (`integration`) of a check suite/run owned by `slug`. */
  appObject(slug: string): JsonObject {
    const isOurs = slug === this.store.app.slug;
    const id = isOurs ? this.store.app.id : 15368;
    const owner = isOurs ? this.store.app.owner : "github";
    return {
      id,
      slug,
      node_id: encodeNodeId("Bot", `app-${slug}`),
      client_id: isOurs ? `Iv23sandbox${id}` : "Iv1.github-actions",
      owner: this.user(owner),
      name: isOurs ? this.store.app.name : "GitHub Actions",
      description: "",
      external_url: `${this.htmlUrl}/apps/${slug}`,
      html_url: `${this.htmlUrl}/apps/${slug}`,
      created_at: "2024-01-01T00:00:00Z",
      updated_at: "2024-01-01T00:00:00Z",
      permissions: {
        actions: "write",
        checks: "write",
        contents: "write",
        issues: "write",
        metadata: "read",
        pull_requests: "write",
        statuses: "write",
      },
      events: [
        "issues",
        "issue_comment",
        "pull_request",
        "pull_request_review",
        "check_run",
        "check_suite",
        "push",
        "workflow_run",
      ],
    };
  }

  private pullsForSha(repo: Repo, sha: string): JsonObject[] {
    return this.store
      .listPulls(repo.fullName)
      .filter((p) => p.pull.head.sha === sha && p.state === "open")
      .map((p) => ({
        url: `${this.repoApi(repo)}/pulls/${p.number}`,
        id: p.pull.id,
        number: p.number,
        head: {
          ref: p.pull.head.ref,
          sha: p.pull.head.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
        base: {
          ref: p.pull.base.ref,
          sha: p.pull.base.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
      }));
  }

  checkSuite(repo: Repo, suite: CheckSuite): JsonObject {
    const runs = this.store.listCheckRuns(repo.fullName, suite.headSha, { suiteId: suite.id });
    return {
      id: suite.id,
      node_id: suite.nodeId,
      head_branch: suite.headBranch,
      head_sha: suite.headSha,
      status: suite.status,
      conclusion: suite.conclusion,
      url: `${this.repoApi(repo)}/check-suites/${suite.id}`,
      before: null,
      after: suite.headSha,
      pull_requests: this.pullsForSha(repo, suite.headSha),
      app: this.appObject(suite.appSlug),
      repository: this.repository(repo),
      created_at: iso(suite.createdAt),
      updated_at: iso(suite.updatedAt),
      head_commit: {
        id: suite.headSha,
        tree_id: suite.headSha,
        message: "",
        timestamp: iso(suite.createdAt),
        author: { name: "sandbox", email: "sandbox@users.noreply.github.com" },
        committer: { name: "sandbox", email: "sandbox@users.noreply.github.com" },
      },
      latest_check_runs_count: runs.length,
      check_runs_url: `${this.repoApi(repo)}/check-suites/${suite.id}/check-runs`,
      rerequestable: true,
      runs_rerequestable: true,
    };
  }

  checkRun(repo: Repo, run: CheckRun): JsonObject {
    const suite = this.store.getCheckSuite(repo.fullName, run.checkSuiteId);
    return {
      id: run.id,
      head_sha: run.headSha,
      node_id: run.nodeId,
      external_id: run.externalId,
      url: `${this.repoApi(repo)}/check-runs/${run.id}`,
      html_url: `${this.repoHtml(repo)}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: iso(run.startedAt),
      completed_at: iso(run.completedAt),
      output: {
        title: run.output.title,
        summary: run.output.summary,
        text: run.output.text,
        annotations_count: 0,
        annotations_url: `${this.repoApi(repo)}/check-runs/${run.id}/annotations`,
      },
      name: run.name,
      check_suite: suite
        ? {
            id: suite.id,
            node_id: suite.nodeId,
            head_branch: suite.headBranch,
            head_sha: suite.headSha,
            status: suite.status,
            conclusion: suite.conclusion,
            url: `${this.repoApi(repo)}/check-suites/${suite.id}`,
            before: null,
            after: suite.headSha,
            pull_requests: this.pullsForSha(repo, suite.headSha),
            app: this.appObject(suite.appSlug),
            created_at: iso(suite.createdAt),
            updated_at: iso(suite.updatedAt),
          }
        : null,
      app: this.appObject(run.appSlug),
      pull_requests: this.pullsForSha(repo, run.headSha),
    };
  }

  status(repo: Repo, status: CommitStatus): JsonObject {
    return {
      url: `${this.repoApi(repo)}/statuses/${status.sha}`,
      avatar_url: null,
      id: status.id,
      node_id: status.nodeId,
      state: status.state,
      description: status.description,
      target_url: status.targetUrl,
      context: status.context,
      created_at: iso(status.createdAt),
      updated_at: iso(status.updatedAt),
      creator: this.user(status.creator),
    };
  }

  workflow(repo: Repo, workflow: Workflow): JsonObject {
    return {
      id: workflow.id,
      node_id: workflow.nodeId,
      name: workflow.name,
      path: workflow.path,
      state: workflow.state,
      created_at: iso(workflow.createdAt),
      updated_at: iso(workflow.updatedAt),
      url: `${this.repoApi(repo)}/actions/workflows/${workflow.id}`,
      html_url: `${this.repoHtml(repo)}/blob/${repo.defaultBranch}/${workflow.path}`,
      badge_url: `${this.repoHtml(repo)}/workflows/${encodeURIComponent(workflow.name)}/badge.svg`,
    };
  }

  workflowRun(repo: Repo, run: WorkflowRun): JsonObject {
    const api = `${this.repoApi(repo)}/actions/runs/${run.id}`;
    const workflow = this.store.listWorkflows(repo.fullName).find((w) => w.id === run.workflowId);
    const pulls = run.pullRequests
      .map((n) => this.store.getPull(repo.fullName, n))
      .filter((p): p is Issue => !!p?.pull)
      .map((p) => ({
        url: `${this.repoApi(repo)}/pulls/${p.number}`,
        id: p.pull!.id,
        number: p.number,
        head: {
          ref: p.pull!.head.ref,
          sha: p.pull!.head.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
        base: {
          ref: p.pull!.base.ref,
          sha: p.pull!.base.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
      }));
    return {
      id: run.id,
      name: run.name,
      node_id: run.nodeId,
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: workflow?.path ?? "",
      display_title: run.displayTitle,
      run_number: run.runNumber,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      workflow_id: run.workflowId,
      check_suite_id: run.id + 1,
      check_suite_node_id: encodeNodeId("CheckSuite", `run-${run.id}`),
      url: api,
      html_url: `${this.repoHtml(repo)}/actions/runs/${run.id}`,
      pull_requests: pulls,
      created_at: iso(run.createdAt),
      updated_at: iso(run.updatedAt),
      actor: this.user(run.actor),
      triggering_actor: this.user(run.triggeringActor),
      run_attempt: run.runAttempt,
      referenced_workflows: [],
      run_started_at: iso(run.runStartedAt ?? run.createdAt),
      jobs_url: `${api}/jobs`,
      logs_url: `${api}/logs`,
      check_suite_url: `${this.repoApi(repo)}/check-suites/${run.id + 1}`,
      artifacts_url: `${api}/artifacts`,
      cancel_url: `${api}/cancel`,
      rerun_url: `${api}/rerun`,
      previous_attempt_url: run.runAttempt > 1 ? `${api}/attempts/${run.runAttempt - 1}` : null,
      workflow_url: `${this.repoApi(repo)}/actions/workflows/${run.workflowId}`,
      head_commit: {
        id: run.headSha,
        tree_id: run.headSha,
        message: run.displayTitle,
        timestamp: iso(run.createdAt),
        author: { name: run.actor, email: noreplyEmail(run.actor) },
        committer: { name: "GitHub", email: "noreply@github.com" },
      },
      repository: this.repository(repo),
      head_repository: this.repository(repo),
    };
  }

  job(repo: Repo, run: WorkflowRun, job: WorkflowJob): JsonObject {
    return {
      id: job.id,
      run_id: run.id,
      run_url: `${this.repoApi(repo)}/actions/runs/${run.id}`,
      run_attempt: run.runAttempt,
      node_id: job.nodeId,
      head_sha: run.headSha,
      url: `${this.repoApi(repo)}/actions/jobs/${job.id}`,
      html_url: `${this.repoHtml(repo)}/actions/runs/${run.id}/job/${job.id}`,
      status: job.status === "requested" ? "queued" : job.status,
      conclusion: job.conclusion,
      created_at: iso(run.createdAt),
      started_at: iso(job.startedAt ?? run.createdAt),
      completed_at: iso(job.completedAt),
      name: job.name,
      steps: job.steps.map((s) => ({
        name: s.name,
        number: s.number,
        status: s.status,
        conclusion: s.conclusion,
        started_at: null,
        completed_at: null,
      })),
      check_run_url: `${this.repoApi(repo)}/check-runs/${job.id}`,
      labels: ["ubuntu-latest"],
      runner_id: 1,
      runner_name: "sandbox-runner",
      runner_group_id: 1,
      runner_group_name: "sandbox",
      workflow_name: run.name,
      head_branch: run.headBranch,
    };
  }

  /** `installation` object (for `GET /app/installations`, `GET /repos/{o}/{r}/installation`). */
  installation(): JsonObject {
    const id = this.store.installationId;
    const owner = this.store.app.owner;
    return {
      id,
      account: this.user(owner),
      repository_selection: "all",
      access_tokens_url: `${this.apiUrl}/app/installations/${id}/access_tokens`,
      repositories_url: `${this.apiUrl}/installation/repositories`,
      html_url: `${this.htmlUrl}/settings/installations/${id}`,
      app_id: this.store.app.id,
      app_slug: this.store.app.slug,
      client_id: `Iv23sandbox${this.store.app.id}`,
      target_id: this.userRecord(owner).id,
      target_type: "Organization",
      permissions: {
        actions: "write",
        checks: "write",
        contents: "write",
        issues: "write",
        metadata: "read",
        pull_requests: "write",
        statuses: "write",
      },
      events: [
        "issues",
        "issue_comment",
        "pull_request",
        "pull_request_review",
        "check_run",
        "check_suite",
        "push",
        "workflow_run",
      ],
      created_at: "2024-01-01T00:00:00Z",
      updated_at: "2024-01-01T00:00:00Z",
      single_file_name: null,
      has_multiple_single_files: false,
      single_file_paths: [],
      suspended_by: null,
      suspended_at: null,
    };
  }
}

export { iso };
