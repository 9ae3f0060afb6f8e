/**
 * The commit a release tag of Autopilot's repository points at, for `autopilot init` to tell whether the copy it
 * runs is that release. A tag's ref names either the commit (a lightweight tag) or a tag object (an annotated
 * tag, as the release workflow makes), whose `object` is the commit
 * (https://docs.github.com/rest/git/refs#get-a-reference, https://docs.github.com/rest/git/tags#get-a-tag).
 */
import { createOctokit } from "../transport/octokit.js";

/** The commit SHA `refs/tags/<tag>` of `owner/name` points at; null when there is no such tag. */
export async function tagCommit(options: {
  source: string;
  tag: string;
  baseUrl: string;
  /** Optional: a public repository answers without one. */
  token?: string;
  fetch?: typeof globalThis.fetch;
}): Promise<string | null> {
  const [owner, repo] = options.source.split("/") as [string, string];
  const octokit = createOctokit({
    ...(options.token ? { auth: options.token } : {}),
    baseUrl: options.baseUrl,
    retry: false,
    throttle: false,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  // A question init asks on the way, not worth a hang: a network that drops requests fails it in 10 s.
  const request = { signal: AbortSignal.timeout(10_000) };
  let object: { type: string; sha: string };
  try {
    object = (await octokit.rest.git.getRef({ owner, repo, ref: `tags/${options.tag}`, request })).data
      .object;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
  // An annotated tag may point at another tag object: follow the chain (bounded) to the commit.
  for (let depth = 0; object.type === "tag" && depth < 5; depth++)
    object = (await octokit.rest.git.getTag({ owner, repo, tag_sha: object.sha, request })).data.object;
  return object.type === "commit" ? object.sha : null;
}
