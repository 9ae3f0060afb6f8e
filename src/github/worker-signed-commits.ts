/**
 * `commits: signed`: the task branch's new commits made by GitHub itself through the Git Database API, as the
 * App, so GitHub signs them. "Signature verification for bots will only work if the request is verified and
 * authenticated as the GitHub App or bot and contains no custom author information, custom committer
 * information, and no custom signature information"
 * (https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots):
 * the commit request below names a message, a tree and parents, nothing else.
 *
 * Per commit, oldest first:
 * - each changed file that is valid UTF-8 goes into the tree request as `content` ("GitHub will write this blob
 *   out and use that SHA for this entry"); any other file is sent first as a blob, base64
 *   (https://docs.github.com/en/rest/git/blobs#create-a-blob);
 * - one tree on the parent's tree (`base_tree`), a deleted file an entry with `sha: null`
 *   (https://docs.github.com/en/rest/git/trees#create-a-tree). Git names a tree by its content: GitHub's tree
 *   must be the worker's own, and a different one stops the publish before any commit is made of it;
 * - one commit, its parents the remote's (GitHub's copies of the worker's own earlier commits)
 *   (https://docs.github.com/en/rest/git/commits#create-a-commit);
 * then one ref write for the branch: created when the remote has none
 * (https://docs.github.com/en/rest/git/refs#create-a-reference), else moved, never forced — GitHub refuses a
 * move that is not a fast-forward, as it refuses such a push (https://docs.github.com/en/rest/git/refs#update-a-reference).
 */
import type { AutopilotOctokit } from "./transport/octokit.js";

/** One entry of a commit's tree that differs from its first parent's (src/worker/checkout/publish-plan.ts). */
interface SignedEntry {
  path: string;
  mode: string;
  type: "blob" | "commit";
  /** Null: the entry is deleted. */
  sha: string | null;
  /** A blob's bytes, base64. */
  base64?: string;
}

/** One of the worker's commits to be made again by GitHub. */
interface SignedCommitInput {
  sha: string;
  message: string;
  parents: string[];
  tree: string;
  baseTree: string;
  entries: SignedEntry[];
}

export interface SignedPublish {
  branch: string;
  /** The remote branch's commit as the worker last saw it; null: the branch is created. */
  remoteHead: string | null;
  /** The worker's commits the remote lacks, oldest first. */
  commits: SignedCommitInput[];
  /** The worker's head: one of `commits`, or a commit GitHub already holds. */
  head: string;
}

export interface SignedPublishResult {
  /** GitHub's commit the branch now points at. */
  head: string;
  /** Each worker commit's GitHub copy. */
  made: Map<string, string>;
  /** Whether GitHub says each commit it made is verified (`verification.verified`). */
  verified: boolean;
}

export interface SignedCommitWriter {
  publish(input: SignedPublish): Promise<SignedPublishResult>;
}

/** Bytes that decode as UTF-8 without a replacement character: the tree request may carry them as `content`. */
function utf8Text(base64: string): string | null {
  try {
    // ignoreBOM: a leading byte-order mark is part of the file and must stay in it.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(Buffer.from(base64, "base64"));
  } catch {
    return null;
  }
}

export function createSignedCommitWriter(
  octokit: AutopilotOctokit,
  options: { owner: string; repo: string },
): SignedCommitWriter {
  const { owner, repo } = options;

  async function treeEntry(entry: SignedEntry) {
    const { path, type } = entry;
    const mode = entry.mode as "100644" | "100755" | "040000" | "160000" | "120000";
    if (entry.sha === null || entry.base64 === undefined) return { path, mode, type, sha: entry.sha };
    const text = utf8Text(entry.base64);
    if (text !== null) return { path, mode, type, content: text };
    const { data } = await octokit.rest.git.createBlob({
      owner,
      repo,
      content: entry.base64,
      encoding: "base64",
    });
    if (data.sha !== entry.sha)
      throw new Error(`GitHub stored ${path} as blob ${data.sha}, not the worker's ${entry.sha}`);
    return { path, mode, type, sha: data.sha };
  }

  return {
    async publish(input) {
      const made = new Map<string, string>();
      let verified = true;
      for (const commit of input.commits) {
        let tree = commit.tree;
        if (commit.entries.length > 0) {
          const entries = [];
          for (const entry of commit.entries) entries.push(await treeEntry(entry));
          const { data } = await octokit.rest.git.createTree({
            owner,
            repo,
            base_tree: commit.baseTree,
            tree: entries,
          });
          if (data.sha !== commit.tree)
            throw new Error(
              `GitHub built tree ${data.sha} for the worker's commit ${commit.sha}, whose tree is ${commit.tree}: nothing was published`,
            );
          tree = data.sha;
        }
        // No author, committer or signature: GitHub signs the commit as the App.
        const { data } = await octokit.rest.git.createCommit({
          owner,
          repo,
          message: commit.message,
          tree,
          parents: commit.parents.map((parent) => made.get(parent) ?? parent),
        });
        made.set(commit.sha, data.sha);
        verified &&= data.verification?.verified === true;
      }
      const head = made.get(input.head) ?? input.head;
      const ref = `heads/${input.branch}`;
      if (input.remoteHead === null)
        await octokit.rest.git.createRef({ owner, repo, ref: `refs/${ref}`, sha: head });
      else if (input.remoteHead !== head)
        await octokit.rest.git.updateRef({ owner, repo, ref, sha: head, force: false });
      return { head, made, verified };
    },
  };
}
