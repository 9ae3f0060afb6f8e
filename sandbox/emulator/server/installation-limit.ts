/**
 * An installation's primary rate limit, as GitHub sets it for an installation not on GitHub Enterprise Cloud:
 * the base (5,000 requests or GraphQL points an hour), plus 50 for each repository over 20, never above 12,500
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#primary-rate-limit-for-github-app-installations,
 * https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api#primary-rate-limit).
 * GitHub also adds 50 for each organization member over 20; the sandbox has no organization membership, so
 * that part is not modelled (a lower limit, the strict side).
 *
 * `primaryLimit`: which limit a caller's requests count against, by who the caller is (auth.ts).
 */
import type { RateResource } from "./accounting.js";
import type { Identity } from "./auth.js";
import type { RateLimits } from "./sandbox-api.js";
import type { SandboxStore, TokenKind } from "../store.js";

const PER_REPOSITORY = 50;
const FREE_REPOSITORIES = 20;
const CEILING = 12_500;

/** The hourly limit of an installation covering `repositories` repositories, from the configured base. */
export function installationLimit(base: number, repositories: number): number {
  const scaled = base + PER_REPOSITORY * Math.max(0, repositories - FREE_REPOSITORIES);
  // The ceiling caps the scaling only: a base set above it (a test's) stays.
  return Math.max(base, Math.min(scaled, CEILING));
}

/** The hourly limit `identity`'s requests of `resource` count against. */
export function primaryLimit(
  identity: Identity,
  resource: RateResource,
  limits: RateLimits,
  store: Pick<SandboxStore, "getInstallation" | "installationRepos">,
): number {
  // Installation tokens share their installation's limit (their bucket is the installation, auth.ts), which
  // grows with a declared installation's repositories; the default installation keeps the base.
  const installation =
    identity.kind === "installation" && identity.token?.installationId != null
      ? store.getInstallation(identity.token.installationId)
      : undefined;
  if (installation && !installation.coversEveryOwner) {
    const base = resource === "graphql" ? limits.graphql : limits.installation;
    return installationLimit(base, store.installationRepos(installation.id).length);
  }
  if (resource === "graphql")
    return identity.kind === "worker" ? Math.min(limits.graphql, limits.worker) : limits.graphql;
  const byKind: Record<TokenKind, number> = {
    app: limits.app,
    installation: limits.installation,
    worker: limits.worker,
    user: limits.user,
  };
  return byKind[identity.kind];
}
