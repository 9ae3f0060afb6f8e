/** A repository's open issues, for the setup checks and `autopilot status` that look for the tracking issue. */
import type { AutopilotOctokit } from "../transport/octokit.js";

/** Every open issue and pull request of a repository (the REST issues listing includes pull requests). */
export function listOpenIssues(octokit: AutopilotOctokit, owner: string, repo: string) {
  return octokit.paginate(octokit.rest.issues.listForRepo, { owner, repo, state: "open", per_page: 100 });
}
