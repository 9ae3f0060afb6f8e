/**
 * What the controller app reads about the GitHub App itself: its bot login, its installations and the
 * repositories each can reach (src/app/hosted/controller-tick.ts chooses among them on every tick).
 */
import type { RepoRef } from "../transport/octokit-surface.js";
import type { AutopilotOctokit } from "../transport/octokit.js";

/** The part of an Octokit these reads use: Probot's clients and `createOctokit()`'s both have it. */
type Paginating = Pick<AutopilotOctokit, "paginate">;

/** The login of the App's bot account (`<slug>[bot]`), authenticated as the App; null when it has no slug. */
export async function appBotLogin(appOctokit: Pick<AutopilotOctokit, "request">): Promise<string | null> {
  const { data } = await appOctokit.request("GET /app");
  const slug = (data as { slug?: string } | null)?.slug;
  return slug ? `${slug}[bot]` : null;
}

/**
 * Pages through a listing of `per_page: 100`, stopping after `maxPages` pages (a bound on a runaway listing)
 * or at the first page that is not full.
 */
async function pagesOf<T>(
  octokit: Paginating,
  route: "GET /app/installations" | "GET /installation/repositories",
  maxPages: number,
): Promise<T[]> {
  let pages = 0;
  return (await octokit.paginate(route, { per_page: 100 }, (response, done) => {
    const items = response.data as unknown as T[];
    pages += 1;
    if (pages >= maxPages || items.length < 100) done();
    return items;
  })) as T[];
}

/** The ids of every installation of the App (authenticated as the App), at most 1,000. */
export async function listInstallationIds(appOctokit: Paginating): Promise<number[]> {
  const installations = await pagesOf<{ id: number }>(appOctokit, "GET /app/installations", 10);
  return installations.map((installation) => installation.id);
}

/** The repositories one installation can reach, archived ones left out, at most 2,000 listed. */
export async function listInstallationRepos(installationOctokit: Paginating): Promise<RepoRef[]> {
  const repositories = await pagesOf<{ name: string; owner: { login: string }; archived?: boolean }>(
    installationOctokit,
    "GET /installation/repositories",
    20,
  );
  return repositories.filter((r) => !r.archived).map((r) => ({ owner: r.owner.login, name: r.name }));
}
