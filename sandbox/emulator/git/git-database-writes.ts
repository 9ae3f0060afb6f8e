/**
 * The Git Database API's writes (blobs, trees, commits) in a bare repository of the sandbox's remote, and the
 * commits GitHub signs. What each does is GitHub's documented behaviour:
 * - a blob from `content` as UTF-8 or base64 (https://docs.github.com/en/rest/git/blobs#create-a-blob);
 * - a tree from entries on an optional `base_tree`: an entry with `sha: null` deletes the path, and deleting a path
 *   that does not exist is an error; `content` writes a blob (https://docs.github.com/en/rest/git/trees#create-a-tree);
 * - a commit of a tree with parents; "the author and committer information" default to the authenticated user
 *   when not given (https://docs.github.com/en/rest/git/commits#create-a-commit);
 * - GitHub signs the commit when "the request is verified and authenticated as the GitHub App or bot and
 *   contains no custom author information, custom committer information, and no custom signature information"
 *   (https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots).
 *   The sandbox has no keys: it lists the commits it signed in `sandbox-verified-commits` in the bare repository,
 *   which the `verification` object of the commit endpoints and the push hook (signed-commits-hook.ts) read.
 */
import { randomUUID } from "node:crypto";
import { appendFile, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { gitEnv, run } from "../proc.js";
import { GitRemoteError } from "./git-remote-error.js";
import type { DatabaseTreeEntry } from "../store/git-backend-contract.js";

/** The file of the bare repository that lists the commits GitHub signed, one id a line. */
export const VERIFIED_COMMITS_FILE = "sandbox-verified-commits";

const OBJECT_ID = /^[0-9a-f]{40}$/;

async function git(repoPath: string, args: string[], input?: string | Buffer, env: NodeJS.ProcessEnv = {}) {
  const result = await run("git", args, {
    cwd: repoPath,
    env: gitEnv(env),
    ...(input !== undefined ? { input } : {}),
  });
  return result;
}

async function objectType(repoPath: string, sha: string): Promise<string | null> {
  if (!OBJECT_ID.test(sha)) return null;
  const found = await git(repoPath, ["cat-file", "-t", sha]);
  return found.code === 0 ? found.stdout.trim() : null;
}

export async function writeBlob(repoPath: string, bytes: Buffer): Promise<string> {
  const written = await git(repoPath, ["hash-object", "-w", "--stdin"], bytes);
  if (written.code !== 0) throw new GitRemoteError(`could not write the blob: ${written.stderr.trim()}`, 500);
  return written.stdout.trim();
}

/** A tree: `base` (a tree id) with the entries applied, in a throwaway index of the bare repository. */
export async function writeTree(
  repoPath: string,
  base: string | null,
  entries: readonly DatabaseTreeEntry[],
): Promise<string> {
  // A throwaway index per request: two requests at once never share one.
  const index = join(repoPath, `sandbox-index-${randomUUID()}`);
  try {
    return await treeInIndex(repoPath, base, entries, { GIT_INDEX_FILE: index });
  } finally {
    await rm(index, { force: true });
  }
}

async function treeInIndex(
  repoPath: string,
  base: string | null,
  entries: readonly DatabaseTreeEntry[],
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (base !== null && (await objectType(repoPath, base)) !== "tree")
    throw new GitRemoteError("base_tree is not a valid tree oid", 422);
  const read = await git(
    repoPath,
    base === null ? ["read-tree", "--empty"] : ["read-tree", base],
    undefined,
    env,
  );
  if (read.code !== 0) throw new GitRemoteError(read.stderr.trim(), 500);
  const listed = (await git(repoPath, ["ls-files", "-z"], undefined, env)).stdout.split("\0");
  const present = new Set(listed.filter(Boolean));
  let info = "";
  const removed: string[] = [];
  for (const entry of entries) {
    if (
      !entry.path ||
      entry.path.startsWith("/") ||
      entry.path.split("/").some((p) => p === "" || p === "." || p === "..")
    )
      throw new GitRemoteError(`tree.path contains a malformed path component: ${entry.path}`, 422);
    if (entry.content !== undefined && entry.sha !== undefined && entry.sha !== null)
      throw new GitRemoteError("Only one of 'content' or 'sha' may be given for a tree entry", 422);
    if (entry.content === undefined && entry.sha === null) {
      const inside = [...present].some((file) => file === entry.path || file.startsWith(`${entry.path}/`));
      if (!inside) throw new GitRemoteError(`GitRPC::BadObjectState: ${entry.path} does not exist`, 422);
      removed.push(entry.path);
      continue;
    }
    const sha =
      entry.content !== undefined
        ? await writeBlob(repoPath, Buffer.from(entry.content, "utf8"))
        : (entry.sha ?? "");
    const type = await objectType(repoPath, sha);
    if (entry.type !== "commit" && type !== entry.type)
      throw new GitRemoteError(`tree.sha ${sha} is not a valid ${entry.type}`, 422);
    if (entry.type === "tree") throw new GitRemoteError("tree entries of type tree are not modelled", 422);
    info += `${entry.mode} ${sha}\t${entry.path}\n`;
  }
  if (removed.length) {
    const gone = await git(repoPath, ["rm", "--cached", "-r", "-q", "--", ...removed], undefined, env);
    if (gone.code !== 0) throw new GitRemoteError(gone.stderr.trim(), 422);
  }
  if (info) {
    const added = await git(repoPath, ["update-index", "--add", "--index-info"], info, env);
    if (added.code !== 0) throw new GitRemoteError(added.stderr.trim(), 422);
  }
  const tree = await git(repoPath, ["write-tree"], undefined, env);
  if (tree.code !== 0) throw new GitRemoteError(tree.stderr.trim(), 500);
  return tree.stdout.trim();
}

/** A commit of `tree` with `parents` by `author`; `signed` lists it as one GitHub signed. */
export async function writeCommit(
  repoPath: string,
  input: {
    message: string;
    tree: string;
    parents: readonly string[];
    author: { name: string; email: string };
  },
  signed: boolean,
): Promise<string> {
  if ((await objectType(repoPath, input.tree)) !== "tree")
    throw new GitRemoteError("Tree SHA does not exist", 422);
  for (const parent of input.parents)
    if ((await objectType(repoPath, parent)) !== "commit")
      throw new GitRemoteError("Parent SHA does not exist or is not a commit object", 422);
  const args = ["commit-tree", input.tree, ...input.parents.flatMap((p) => ["-p", p])];
  const { name, email } = input.author;
  const env = {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
  const made = await git(repoPath, args, input.message, env);
  if (made.code !== 0) throw new GitRemoteError(made.stderr.trim(), 500);
  const sha = made.stdout.trim();
  if (signed) await appendFile(join(repoPath, VERIFIED_COMMITS_FILE), `${sha}\n`);
  return sha;
}

/** Whether GitHub signed the commit (it made it for an App, with no author, committer or signature given). */
export async function isVerified(repoPath: string, sha: string): Promise<boolean> {
  const listed = await readFile(join(repoPath, VERIFIED_COMMITS_FILE), "utf8").catch(() => "");
  return listed.split("\n").includes(sha);
}

/** The commits `sha` brings onto a branch at `since` (null: a new branch, from the default one) GitHub did not sign. */
export async function unverifiedCommits(
  repoPath: string,
  sha: string,
  since: string | null,
): Promise<string[]> {
  const listed = await git(repoPath, ["rev-list", sha, "--not", since ?? "HEAD"]);
  if (listed.code !== 0) throw new GitRemoteError(listed.stderr.trim(), 422);
  const verified = new Set(
    (await readFile(join(repoPath, VERIFIED_COMMITS_FILE), "utf8").catch(() => "")).split("\n"),
  );
  return listed.stdout.split("\n").filter((commit) => commit && !verified.has(commit));
}
