/** Users, repositories, labels, the app and its installation, as GitHub's JSON shows them. */
import { isAutoMergeAllowed } from "../merge/merge-automation-state.js";
import type { Installation, Label, Repo, SandboxStore, User } from "../store.js";
import { encodeNodeId, permissionAtLeast } from "../store.js";
import { type Json, type JsonObject, iso } from "./json-shape.js";

/** The permissions the sandbox app holds, as its app and installation objects list them. */
function appPermissions(): JsonObject {
  return {
    actions: "write",
    actions_variables: "write",
    checks: "write",
    contents: "write",
    issues: "write",
    metadata: "read",
    pull_requests: "write",
    statuses: "write",
  };
}

/** The webhook events the sandbox app subscribes to, as its app and installation objects list them. */
function appEvents(): Json[] {
  return [
    "issues",
    "issue_comment",
    "pull_request",
    "pull_request_review",
    "pull_request_review_thread",
    "check_run",
    "check_suite",
    "push",
    "workflow_run",
  ];
}

/** The base of {@link Shapes}: the store and the sandbox's URLs, and the shapes of accounts and repositories. */
export class AccountShapes {
  constructor(
    protected readonly store: SandboxStore,
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
      allow_auto_merge: isAutoMergeAllowed(this.store, repo.fullName),
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
      permissions: appPermissions(),
      events: appEvents(),
    };
  }

  /**
   * `installation` object (for `GET /app/installations`, `GET /repos/{o}/{r}/installation`): one installation
   * (default: the first), on its account (https://docs.github.com/en/rest/apps/apps#get-an-installation-for-the-authenticated-app).
   */
  installation(installation: Installation = this.store.listInstallations()[0]!): JsonObject {
    const id = installation.id;
    const owner = installation.account;
    const account = this.userRecord(owner);
    // The default installation has always been shown on an organization.
    const onOrganization = installation.coversEveryOwner || account.type === "Organization";
    return {
      id,
      account: this.user(owner),
      repository_selection: installation.repositorySelection,
      access_tokens_url: `${this.apiUrl}/app/installations/${id}/access_tokens`,
      repositories_url: `${this.apiUrl}/installation/repositories`,
      html_url:
        onOrganization && !installation.coversEveryOwner
          ? `${this.htmlUrl}/organizations/${owner}/settings/installations/${id}`
          : `${this.htmlUrl}/settings/installations/${id}`,
      app_id: this.store.app.id,
      app_slug: this.store.app.slug,
      client_id: `Iv23sandbox${this.store.app.id}`,
      target_id: account.id,
      target_type: onOrganization ? "Organization" : "User",
      permissions: appPermissions(),
      events: appEvents(),
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
