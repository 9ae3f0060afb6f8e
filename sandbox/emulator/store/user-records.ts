/** Who may act in the sandbox: users, their permissions, and the tokens they act with. */

/** A repository's collaborator permission, as `GET /repos/{o}/{r}/collaborators/{u}/permission` reports. */
export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

/** Which kind of credential made a request. */
export type TokenKind = "app" | "installation" | "worker" | "user";

export interface User {
  id: number;
  nodeId: string;
  login: string;
  type: "User" | "Bot" | "Organization";
  name: string | null;
  email: string | null;
  /** Permission on every repository unless {@link SandboxStore.setPermission} says otherwise. */
  permission: Permission;
  createdAt: Date;
}

export interface TokenInfo {
  token: string;
  kind: TokenKind;
  /** Who acts with this token: the user's login, `<slug>[bot]` or `github-actions[bot]`. */
  login: string;
  installationId: number | null;
  runId: number | null;
  /** Repositories it may touch (`owner/name`); null = all of the installation's. */
  repositories: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
}

const PERMISSION_RANK: Record<Permission, number> = {
  none: 0,
  read: 1,
  triage: 2,
  write: 3,
  maintain: 4,
  admin: 5,
};

/** Whether `have` is at least `need`. */
export function permissionAtLeast(have: Permission, need: Permission): boolean {
  return PERMISSION_RANK[have] >= PERMISSION_RANK[need];
}
