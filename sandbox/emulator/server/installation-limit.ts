/**
 * An installation's primary rate limit, as GitHub sets it for an installation not on GitHub Enterprise Cloud:
 * the base (5,000 requests or GraphQL points an hour), plus 50 for each repository over 20, never above 12,500
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#primary-rate-limit-for-github-app-installations,
 * https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api#primary-rate-limit).
 * GitHub also adds 50 for each organization member over 20; the sandbox has no organization membership, so
 * that part is not modelled (a lower limit, the strict side).
 */

const PER_REPOSITORY = 50;
const FREE_REPOSITORIES = 20;
const CEILING = 12_500;

/** The hourly limit of an installation covering `repositories` repositories, from the configured base. */
export function installationLimit(base: number, repositories: number): number {
  const scaled = base + PER_REPOSITORY * Math.max(0, repositories - FREE_REPOSITORIES);
  // The ceiling caps the scaling only: a base set above it (a test's) stays.
  return Math.max(base, Math.min(scaled, CEILING));
}
