/**
 * What `commits: signed` publishes, read from the worker's private repository (objects only, never the agent's
 * directory): every commit the task branch has that the remote lacks, oldest first, each as its message, its
 * parents, its tree and the entries that differ from its first parent's tree. Every one of these commits is one
 * the worker made from a hand-back it had already checked (handback-check.ts) and the push guard has just read;
 * GitHub's copy is built from these entries (src/github/worker-signed-commits.ts) and must come out as the same
 * tree, since git names a tree by its content.
 *
 * After GitHub made its commits, `adoptPublished` fetches the branch and moves the private branch onto GitHub's
 * last commit (same tree, GitHub's signature), so the next iteration builds on what GitHub holds.
 */
import type { Git } from "./private-git.js";

type GitRunner = Pick<Git, "run">;

/** One entry of a commit's tree that differs from its first parent's. */
interface PublishedEntry {
  path: string;
  /** `100644`, `100755`, `120000` (a symbolic link), `160000` (a submodule). */
  mode: string;
  type: "blob" | "commit";
  /** The new object (a blob, or a submodule's commit); null: the entry is deleted. */
  sha: string | null;
  /** A blob's exact bytes, base64 (absent for a deletion or a submodule). */
  base64?: string;
}

export interface PublishedCommit {
  /** The worker's own commit. */
  sha: string;
  message: string;
  /** The worker's parents (its own commits among them are replaced by GitHub's as they are made). */
  parents: string[];
  tree: string;
  /** The first parent's tree, which GitHub already holds (`base_tree`). */
  baseTree: string;
  entries: PublishedEntry[];
}

export interface PublishPlan {
  /** Where the remote's branch is as the worker last saw it (null: the remote has no such branch). */
  remoteHead: string | null;
  commits: PublishedCommit[];
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Every entry that differs between two trees, recursively (`git diff-tree -r --raw`), both modes, the new id. */
async function treeChanges(git: GitRunner, from: string, to: string) {
  const { stdout } = await git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to]);
  const fields = stdout.split("\0");
  const changes: { status: string; oldMode: string; newMode: string; newObject: string; path: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const meta = fields[i]!;
    if (!meta.startsWith(":")) break;
    const [oldMode = "", newMode = "", , newObject = "", status = ""] = meta.slice(1).split(" ");
    changes.push({ status, oldMode, newMode, newObject, path: fields[i + 1]! });
  }
  return changes;
}

/** The commit object's tree, parents and message (`cat-file commit`: headers, a blank line, the message). */
async function readCommit(
  git: GitRunner,
  sha: string,
): Promise<{ tree: string; parents: string[]; message: string }> {
  const { stdout } = await git.run(["cat-file", "commit", sha]);
  const split = stdout.indexOf("\n\n");
  const headers = (split < 0 ? stdout : stdout.slice(0, split)).split("\n");
  const tree = headers.find((line) => line.startsWith("tree "))?.slice(5) ?? "";
  const parents = headers.filter((line) => line.startsWith("parent ")).map((line) => line.slice(7));
  if (!OBJECT_ID.test(tree)) throw new Error(`commit ${sha} has no tree the worker can read`);
  return { tree, parents, message: split < 0 ? "" : stdout.slice(split + 2) };
}

/** The remote-tracking commit of `branch` (`refs/remotes/<remote>/<branch>`); null when the worker never saw it. */
async function remoteHeadOf(git: GitRunner, branch: string): Promise<string | null> {
  const { stdout } = await git.run(["for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/"]);
  for (const line of stdout.split("\n")) {
    const [sha = "", ref = ""] = line.split(" ");
    if (/^refs\/remotes\/[^/]+\//.test(ref) && ref.replace(/^refs\/remotes\/[^/]+\//, "") === branch)
      return sha;
  }
  return null;
}

/** The commits `head` has that no remote-tracking ref reaches, oldest first, each with what it changes. */
export async function publishPlan(git: GitRunner, branch: string, head: string): Promise<PublishPlan> {
  const remoteHead = await remoteHeadOf(git, branch);
  const listed = await git.run(["rev-list", "--reverse", "--topo-order", head, "--not", "--remotes"]);
  const commits: PublishedCommit[] = [];
  for (const sha of listed.stdout.split("\n").filter(Boolean)) {
    const commit = await readCommit(git, sha);
    const first = commit.parents[0];
    if (!first) throw new Error(`commit ${sha} has no parent: the worker publishes only commits on a branch`);
    const { tree: baseTree } = await readCommit(git, first);
    const entries: PublishedEntry[] = [];
    for (const change of await treeChanges(git, baseTree, commit.tree)) {
      if (change.status === "D") {
        const type = change.oldMode === "160000" ? "commit" : "blob";
        entries.push({ path: change.path, mode: change.oldMode, type, sha: null });
      } else if (change.newMode === "160000") {
        entries.push({ path: change.path, mode: change.newMode, type: "commit", sha: change.newObject });
      } else {
        const { stdout } = await git.run(["cat-file", "blob", change.newObject], { base64: true });
        entries.push({
          path: change.path,
          mode: change.newMode,
          type: "blob",
          sha: change.newObject,
          base64: stdout,
        });
      }
    }
    commits.push({
      sha,
      message: commit.message,
      parents: commit.parents,
      tree: commit.tree,
      baseTree,
      entries,
    });
  }
  return { remoteHead, commits };
}

/**
 * The task branch (and HEAD) moved onto GitHub's commit, fetched first; refused when its tree is not the one
 * the worker's own commit had (GitHub would then hold other work than the worker checked).
 */
export async function adoptPublished(
  git: Pick<Git, "fetchBranch" | "pointHead" | "treeOf">,
  options: { branch: string; published: string; local: string },
): Promise<void> {
  await git.fetchBranch(options.branch);
  const [theirs, ours] = await Promise.all([git.treeOf(options.published), git.treeOf(options.local)]);
  if (theirs !== ours)
    throw new Error(
      `GitHub's commit ${options.published} on ${options.branch} does not hold the tree the worker committed (${ours})`,
    );
  await git.pointHead(options.branch, options.published);
}
