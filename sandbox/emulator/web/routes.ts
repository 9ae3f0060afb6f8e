/**
 * Which page a path shows. The paths are GitHub's, so a link copied from GitHub (or an `html_url`) works
 * with the host swapped: `/`, `/OWNER/REPO/issues[/N]`, `/OWNER/REPO/pulls`, `/OWNER/REPO/pull/N`,
 * `/OWNER/REPO/actions[/runs/ID]`.
 */
import { actionsPage, runPage } from "./run-pages.js";
import { issuePage, issuesPage, notFound, reposPage } from "./issue-pages.js";
import { href } from "./layout.js";
import type { PageContext, PageResult } from "./page-context.js";
import { pullPage, pullsPage } from "./pull-pages.js";

const NUMBER = /^[1-9]\d{0,15}$/;

export async function route(ctx: PageContext, url: URL): Promise<PageResult> {
  let parts: string[];
  try {
    parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return notFound(ctx, "That page");
  }
  if (parts.length === 0) return reposPage(ctx);
  if (parts.length === 1) return { redirect: "/" };
  const [owner, name, section, ...rest] = parts as [string, string, string | undefined, ...string[]];
  const repo = ctx.store.getRepo({ owner, name });
  if (!repo) return notFound(ctx, `The repository ${owner}/${name}`);
  const number = rest[0] !== undefined && NUMBER.test(rest[0]) ? Number(rest[0]) : null;
  switch (section) {
    case undefined:
      return { redirect: href(repo.owner, repo.name, "issues") };
    case "issues":
      if (rest.length === 0) return issuesPage(ctx, repo, url.searchParams.get("state"));
      if (number !== null && rest.length === 1) return issuePage(ctx, repo, number);
      break;
    case "pulls":
      if (rest.length === 0) return pullsPage(ctx, repo);
      break;
    case "pull":
      // GitHub's tabs of a pull request (/files, /checks, /commits) are sections of one page here.
      if (number !== null && rest.length <= 2) return pullPage(ctx, repo, number);
      break;
    case "actions":
      if (rest.length === 0) return actionsPage(ctx, repo);
      if (rest[0] === "runs" && rest[1] !== undefined && NUMBER.test(rest[1]))
        return runPage(ctx, repo, Number(rest[1]));
      break;
  }
  return notFound(ctx, "That page");
}
