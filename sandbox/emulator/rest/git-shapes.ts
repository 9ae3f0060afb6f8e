/** The JSON of commits, refs and changed files as the REST API answers them, and the limits on diffs. */
import { createHash } from "node:crypto";
import type { JsonObject } from "../shapes.js";
import type { Repo, SandboxStore } from "../store.js";
import type { RestRequest } from "./rest-helpers.js";

/** The `verification` object of a commit (https://docs.github.com/en/rest/git/commits#signature-verification-object). */
export function verificationJson(verified: boolean, date: string | null): JsonObject {
  return verified
    ? {
        verified: true,
        reason: "valid",
        signature: "-----BEGIN PGP SIGNATURE-----\n\nsandbox\n-----END PGP SIGNATURE-----\n",
        payload: "sandbox",
        verified_at: date,
      }
    : { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null };
}

export function commitJson(
  req: RestRequest,
  repo: Repo,
  sha: string,
  info: Awaited<ReturnType<SandboxStore["getCommit"]>>,
  /** GitHub signed the commit (git-database-endpoints.ts); the sandbox signs nothing else. */
  verified = false,
): JsonObject {
  const api = req.shapes.repoApi(repo);
  const author = {
    name: info?.authorName ?? "sandbox",
    email: info?.authorEmail ?? "sandbox@users.noreply.github.com",
    date: info?.authorDate ?? new Date(0).toISOString(),
  };
  return {
    url: `${api}/commits/${sha}`,
    sha,
    node_id: `C_${Buffer.from(`Commit:${sha}`).toString("base64url")}`,
    html_url: `${req.shapes.repoHtml(repo)}/commit/${sha}`,
    comments_url: `${api}/commits/${sha}/comments`,
    commit: {
      url: `${api}/git/commits/${sha}`,
      author,
      committer: {
        name: info?.committerName ?? author.name,
        email: info?.committerEmail ?? author.email,
        date: info?.committerDate ?? author.date,
      },
      message: info?.message ?? "",
      comment_count: 0,
      tree: { sha: info?.tree ?? sha, url: `${api}/git/trees/${info?.tree ?? sha}` },
      verification: verificationJson(verified, info?.committerDate ?? author.date),
    },
    author: null,
    committer: null,
    parents: (info?.parents ?? []).map((p) => ({
      sha: p,
      url: `${api}/commits/${p}`,
      html_url: `${req.shapes.repoHtml(repo)}/commit/${p}`,
    })),
  };
}

export function refJson(req: RestRequest, repo: Repo, ref: string, sha: string): JsonObject {
  const api = req.shapes.repoApi(repo);
  return {
    ref,
    node_id: `REF_${Buffer.from(`${repo.fullName}:${ref}`).toString("base64url")}`,
    url: `${api}/git/${ref}`,
    object: { type: "commit", sha, url: `${api}/git/commits/${sha}` },
  };
}

/**
 * The compare endpoint lists at most 300 changed files (its file list is not paginated):
 * https://docs.github.com/en/rest/commits/commits#compare-two-commits
 * The pull request files endpoint pages up to 3,000 files:
 * https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files
 * Both leave `patch` out for binary files (git's "Binary files differ", already absent here) and, once the
 * patches in one response add up to about 20,000 lines, for every later file, whose line counts then read 0
 * (reported at https://github.com/orgs/community/discussions/213491; the sandbox applies it strictly).
 */
export const COMPARE_MAX_FILES = 300;
export const PULL_FILES_MAX = 3000;
const DIFF_MAX_PATCH_LINES = 20_000;
/** A recursive tree listing is cut here (https://docs.github.com/en/rest/git/trees#get-a-tree). */
export const TREE_MAX_ENTRIES = 100_000;

export function servedDiffFiles<
  T extends { patch?: string; additions: number; deletions: number; changes: number },
>(files: readonly T[], maxFiles: number): T[] {
  let lines = 0;
  return files.slice(0, maxFiles).map((f) => {
    if (f.patch === undefined) return f;
    const count = f.patch.split("\n").length;
    if (lines + count > DIFF_MAX_PATCH_LINES) {
      lines = DIFF_MAX_PATCH_LINES;
      const { patch: _omitted, ...rest } = f;
      return { ...rest, additions: 0, deletions: 0, changes: 0 } as T;
    }
    lines += count;
    return f;
  });
}

export function diffEntry(
  req: RestRequest,
  repo: Repo,
  sha: string,
  f: {
    filename: string;
    status: string;
    additions: number;
    deletions: number;
    changes: number;
    patch?: string;
    previous_filename?: string;
  },
): JsonObject {
  const html = req.shapes.repoHtml(repo);
  return {
    sha: gitBlobSha(Buffer.from(`${sha}:${f.filename}`)),
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.changes,
    blob_url: `${html}/blob/${sha}/${f.filename}`,
    raw_url: `${html}/raw/${sha}/${f.filename}`,
    contents_url: `${req.shapes.repoApi(repo)}/contents/${f.filename}?ref=${sha}`,
    ...(f.patch !== undefined ? { patch: f.patch } : {}),
    ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
  };
}

/** git's blob SHA of some content. */
export function gitBlobSha(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}
