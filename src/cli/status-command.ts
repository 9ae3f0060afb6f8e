/**
 * `autopilot status`: a repository's Autopilot dashboard (the tracking issue, read with the user's token), or
 * the summary of a sandbox report (the sandbox's own code, loaded only then).
 */
import { type CliIo, EXIT } from "./cli-io.js";
import { loadSandbox } from "./load-sandbox.js";
import { apiUrl, findToken } from "./setup-context.js";

export async function statusCommand(
  io: CliIo,
  options: { report?: string; repo?: string; json?: boolean },
): Promise<number> {
  if (options.report) {
    const sandbox = await loadSandbox(io);
    return sandbox ? sandbox.summarizeReport(io, options.report) : EXIT.missing;
  }
  if (!options.repo) {
    io.err("autopilot status needs --repo OWNER/NAME (with GITHUB_TOKEN) or --report FILE.");
    return EXIT.usage;
  }
  const token = findToken(io.env);
  if (!token) {
    io.err("autopilot status --repo needs a token: GITHUB_TOKEN (or GH_TOKEN), or `gh auth login`.");
    return EXIT.usage;
  }
  const [owner, repo] = options.repo.split("/");
  if (!owner || !repo) {
    io.err(`--repo expects OWNER/NAME, got "${options.repo}"`);
    return EXIT.usage;
  }
  const { createOctokit } = await import("../github/transport/octokit.js");
  const { listOpenIssues } = await import("../github/setup/open-issues.js");
  const { TRACKING_MARKER } = await import("../core/dashboard/index.js");
  const octokit = createOctokit({ auth: token, baseUrl: apiUrl(io.env) });
  const issues = await listOpenIssues(octokit, owner, repo);
  const tracking = issues.find((issue) => (issue.body ?? "").includes(TRACKING_MARKER));
  if (options.json) {
    // The state block the controller keeps (session, tasks, history), as it reads it: null when unreadable.
    const { parseDashboard } = await import("../core/dashboard/index.js");
    io.out(
      JSON.stringify(
        {
          repository: options.repo,
          dashboard: tracking
            ? { number: tracking.number, title: tracking.title, url: tracking.html_url }
            : null,
          state: tracking ? parseDashboard(tracking.body).state : null,
        },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  if (!tracking) {
    io.out(`${options.repo} has no open Autopilot dashboard (no session has run yet).`);
    return EXIT.ok;
  }
  io.out(`${tracking.title} — ${tracking.html_url}`);
  io.out((tracking.body ?? "").replace(/<!--[\s\S]*?-->/g, "").trim());
  return EXIT.ok;
}
