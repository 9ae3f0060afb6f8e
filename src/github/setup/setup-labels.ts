/**
 * Creates Autopilot's labels on a repository with their colours and descriptions (`autopilot init`), leaving
 * a label that already exists as its owner made it.
 */
import type { LabelSpec } from "../../core/setup-files.js";
import { createOctokit } from "../transport/octokit.js";

interface EnsureLabelsResult {
  created: string[];
  existing: string[];
}

export async function ensureLabels(options: {
  owner: string;
  repo: string;
  token: string;
  baseUrl: string;
  labels: readonly LabelSpec[];
}): Promise<EnsureLabelsResult> {
  const octokit = createOctokit({ auth: options.token, baseUrl: options.baseUrl, retry: false });
  const { owner, repo } = options;
  const have = new Set(
    (await octokit.paginate(octokit.rest.issues.listLabelsForRepo, { owner, repo, per_page: 100 })).map((l) =>
      l.name.toLowerCase(),
    ),
  );
  const result: EnsureLabelsResult = { created: [], existing: [] };
  for (const label of options.labels) {
    if (have.has(label.name.toLowerCase())) {
      result.existing.push(label.name);
      continue;
    }
    await octokit.rest.issues.createLabel({ owner, repo, ...label });
    result.created.push(label.name);
  }
  return result;
}
