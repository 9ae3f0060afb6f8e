/**
 * The slice of Octokit the gateway uses, typed structurally so Probot's `context.octokit`, `createOctokit()`'s
 * client and test fakes all fit. Nothing outside src/github needs more than this.
 */

export interface GitHubResponse {
  status: number;
  data: unknown;
  headers: Record<string, string | number | undefined>;
}

/** What an Octokit `request` hook sees: the route template (`/repos/{owner}/{repo}/issues`) and method. */
export interface RequestOptionsSeen {
  method: string;
  url: string;
  [key: string]: unknown;
}

export interface OctokitSurface {
  request(route: string, parameters?: Record<string, unknown>): Promise<GitHubResponse>;
  graphql(query: string, parameters?: Record<string, unknown>): Promise<unknown>;
  hook: { before(name: "request", fn: (options: RequestOptionsSeen) => void | Promise<void>): void };
}

export interface RepoRef {
  owner: string;
  name: string;
}

export function repoKey(repo: RepoRef): string {
  return `${repo.owner}/${repo.name}`.toLowerCase();
}

/** The logger shape shared by Probot's pino children, @actions/core adapters and tests. */
export interface GatewayLog {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLog: GatewayLog = { debug() {}, info() {}, warn() {}, error() {} };
