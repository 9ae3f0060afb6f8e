/**
 * Keeps the controller's wake variable (src/core/scheduling/wake-variable.ts) in the repository's Actions
 * variables: read it, and write only when its value changes (a first run creates it).
 * https://docs.github.com/en/rest/actions/variables (the App's "Variables" permission, `actions_variables: write`)
 *
 * The read is a conditional GET (transport/conditional-reads.ts): unchanged, it costs no rate limit.
 */
import { WAKE_VARIABLE } from "../core/scheduling/wake-variable.js";
import { describeError, statusOf } from "./transport/errors.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "./transport/octokit-surface.js";

type WakeWrite = "unchanged" | "written" | "refused";

export async function keepWakeVariable(options: {
  octokit: OctokitSurface;
  repo: RepoRef;
  value: string;
  log: GatewayLog;
}): Promise<WakeWrite> {
  const { octokit, repo, value, log } = options;
  const where = { owner: repo.owner, repo: repo.name };
  try {
    let current: string | null = null;
    try {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/actions/variables/{name}", {
        ...where,
        name: WAKE_VARIABLE,
      });
      current = String((data as { value?: unknown }).value ?? "");
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
    if (current === value) return "unchanged";
    if (current === null)
      await octokit.request("POST /repos/{owner}/{repo}/actions/variables", {
        ...where,
        name: WAKE_VARIABLE,
        value,
      });
    else
      await octokit.request("PATCH /repos/{owner}/{repo}/actions/variables/{name}", {
        ...where,
        name: WAKE_VARIABLE,
        value,
      });
    log.info(`${WAKE_VARIABLE} = ${value} (the controller workflow's schedule)`);
    return "written";
  } catch (error) {
    // Not worth failing the run for: the schedule keeps its last cadence (unset: every 10 minutes).
    log.warn(
      `the repository variable ${WAKE_VARIABLE} could not be kept (${describeError(error)}); grant the App "Variables: write" (app.yml) so idle hours bill no scheduled job`,
    );
    return "refused";
  }
}
