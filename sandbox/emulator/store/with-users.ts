/** The store's users, their permissions per repository, and the tokens that act for them. */
import { randomBytes } from "node:crypto";
import { encodeNodeId } from "./node-ids.js";
import type { RepoRef } from "./repo-records.js";
import { StoreCore } from "./store-core.js";
import { StoreError } from "./store-error.js";
import type { Permission, TokenInfo, User } from "./user-records.js";

interface AddUserOptions {
  permission?: Permission;
  type?: User["type"];
  name?: string | null;
  email?: string | null;
}

export class StoreWithUsers extends StoreCore {
  protected readonly users = new Map<string, User>();
  private readonly tokens = new Map<string, TokenInfo>();

  // ----- users and permissions -----------------------------------------------------------------------------

  /** Adds (or updates) a user; `permission` applies to every repository unless overridden per repo. */
  addUser(login: string, options: AddUserOptions = {}): User {
    const key = login.toLowerCase();
    const existing = this.users.get(key);
    if (existing) {
      if (options.permission) existing.permission = options.permission;
      if (options.name !== undefined) existing.name = options.name;
      if (options.email !== undefined) existing.email = options.email;
      return existing;
    }
    const id = this.id();
    const type = options.type ?? "User";
    const user: User = {
      id,
      nodeId: encodeNodeId(type === "Bot" ? "Bot" : type === "Organization" ? "Organization" : "User", id),
      login,
      type,
      name: options.name ?? null,
      email: options.email ?? null,
      permission: options.permission ?? "read",
      createdAt: this.now(),
    };
    this.users.set(key, user);
    return user;
  }

  getUser(login: string): User | undefined {
    return this.users.get(login.toLowerCase());
  }

  getUserById(id: number): User | undefined {
    for (const user of this.users.values()) if (user.id === id) return user;
    return undefined;
  }

  listUsers(): User[] {
    return [...this.users.values()];
  }

  /** Gives `login` a permission on one repository. */
  setPermission(repo: RepoRef, login: string, permission: Permission): void {
    this.state(repo).permissions.set(login.toLowerCase(), permission);
  }

  /** A user's effective permission on a repository: the repo owner is admin, unknown users `none`. */
  getPermission(repo: RepoRef, login: string): Permission {
    const state = this.state(repo);
    const key = login.toLowerCase();
    if (state.repo.owner.toLowerCase() === key) return "admin";
    const override = state.permissions.get(key);
    if (override) return override;
    return this.users.get(key)?.permission ?? "none";
  }

  // ----- tokens --------------------------------------------------------------------------------------------

  /**
   * Creates an installation access token (`ghs_…`, 1 hour), as `POST /app/installations/{id}/access_tokens`:
   * of `installationId` (default: the default installation), limited to `repositories` when given.
   */
  issueInstallationToken(options: { installationId?: number; repositories?: string[] } = {}): TokenInfo {
    const token = `ghs_${randomBytes(18).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const info: TokenInfo = {
      token,
      kind: "installation",
      login: `${this.app.slug}[bot]`,
      installationId: options.installationId ?? this.installationId,
      runId: null,
      repositories: options.repositories ?? null,
      expiresAt: new Date(this.now().getTime() + 3600_000),
      createdAt: this.now(),
    };
    this.tokens.set(token, info);
    return info;
  }

  /**
   * Mints the `GITHUB_TOKEN` of a workflow run (`ghs_…`, kind `worker`, acting as `github-actions[bot]`,
   * limited to the run's repository, valid 24 h).
   */
  mintWorkerToken(runId: number): string {
    const found = this.findRun(runId);
    const token = `ghs_${randomBytes(18).toString("base64url").replace(/[-_]/g, "w").slice(0, 36)}`;
    this.tokens.set(token, {
      token,
      kind: "worker",
      login: "github-actions[bot]",
      installationId: null,
      runId,
      repositories: found ? [found.state.repo.fullName] : null,
      expiresAt: new Date(this.now().getTime() + 24 * 3600_000),
      createdAt: this.now(),
    });
    return token;
  }

  /** The personal token of a scenario human: `ghp_<login>`. The user must exist. */
  userToken(login: string): string {
    const user = this.getUser(login);
    if (!user) throw new StoreError(404, `No such user: ${login}`);
    return `ghp_${user.login}`;
  }

  /** Resolves a `ghs_`/`ghp_` token (not an app JWT); null when unknown or expired. */
  authenticate(token: string): TokenInfo | null {
    if (token.startsWith("ghp_")) {
      const user = this.getUser(token.slice(4));
      if (user?.type !== "User") return null;
      return {
        token,
        kind: "user",
        login: user.login,
        installationId: null,
        runId: null,
        repositories: null,
        expiresAt: null,
        createdAt: user.createdAt,
      };
    }
    const info = this.tokens.get(token);
    if (!info) return null;
    if (info.expiresAt && info.expiresAt.getTime() <= this.now().getTime()) return null;
    return info;
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }
}
