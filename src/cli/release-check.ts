/**
 * Whether the commit `autopilot init` pins is a release: the commit the tag `v<version>` points at. A checkout
 * knows its tags; for an install, the tag is asked of GitHub (src/github/setup/release-tag.ts). What is wrong is
 * returned as warnings, each saying what it means for the workflows and what to run instead: a pin between
 * releases works, but it is code no release notes describe and `SECURITY.md` does not support.
 */
import { tagCommit } from "../github/setup/release-tag.js";
import type { RunningCommit } from "./running-commit.js";

export async function releaseWarnings(options: {
  commit: RunningCommit;
  source: string;
  version: string;
  /** The command to run init from a release, `<cli> init` with the tag (invocation.ts). */
  fromRelease: string;
  baseUrl: string;
  token: string | null;
  fetch?: typeof globalThis.fetch;
}): Promise<string[]> {
  const { commit, version } = options;
  const short = commit.sha.slice(0, 12);
  const tag = `v${version}`;
  const warnings: string[] = [];
  if (commit.modified)
    warnings.push(
      `this checkout of Autopilot has changes it has not committed: the workflows pin ${short}, which does not hold them`,
    );
  let tagged: string | null = null;
  let unknown: string | null = null;
  if (commit.tags) tagged = commit.tags.includes(tag) ? commit.sha : null;
  else
    try {
      tagged = await tagCommit({
        source: options.source,
        tag,
        baseUrl: options.baseUrl,
        ...(options.token ? { token: options.token } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
    } catch (error) {
      unknown = (error as Error).message;
    }
  const run = `For a release, run ${options.fromRelease} (the versions are in CHANGELOG.md).`;
  if (unknown !== null)
    warnings.push(
      `could not ask ${options.source} whether ${short} is release ${tag} (${unknown}): if it is not, the workflows pin a commit between releases. ${run}`,
    );
  else if (tagged === null)
    warnings.push(
      `${short} is not a release: no tag ${tag} ${commit.tags ? "points at it" : `exists in ${options.source}`}, so the workflows pin a commit between releases. ${run}`,
    );
  else if (tagged !== commit.sha)
    warnings.push(
      `${short} is not release ${tag} (${tag} is ${tagged.slice(0, 12)}): the workflows pin a commit between releases. ${run}`,
    );
  return warnings;
}
