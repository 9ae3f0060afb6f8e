/**
 * One commit of a tree with some files replaced or removed, made by a single `git fast-import` in the worker's
 * private repository (objects and refs only, never the agent's directory) instead of an index's read-tree,
 * update-index and write-tree, then commit-tree: the commit of each iteration is one process, not four.
 *
 * The stream replaces the root with the given tree (`M 040000 <tree> ""`), applies the files, and asks
 * fast-import, before the commit ends, for the new root and every tree and blob on the files' paths (`ls`): those
 * are all the objects the commit adds beyond the tree it started from and the parents, which the hand-over can
 * then bring to the agent's `.git` without running git there (agent-objects.ts). The commit goes to the ref the
 * caller names (the task branch: no update-ref after it) or to a scratch ref.
 */
import type { Git } from "./private-git.js";

type CommitRunner = Pick<Git, "run" | "author">;

/** What fast-import accepts unquoted and what a committer line may hold; anything else takes the slow path. */
const PLAIN_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const PLAIN_IDENTITY = /^[^<>\n\r\0]*$/;
const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** A scratch ref of the worker's repository: fast-import needs a ref to commit to. */
const SCRATCH_REF = "refs/autopilot/commit";

interface FilesCommit {
  commit: string;
  tree: string;
  /** The commit, its root tree and every tree and blob on the files' paths (the objects it may add). */
  objects: string[];
}

/** False when the files or the identity cannot be written into a fast-import stream as they are. */
export function canCommitWithFastImport(
  files: ReadonlyMap<string, string | null>,
  author: { name: string; email: string },
): boolean {
  if (!PLAIN_IDENTITY.test(author.name) || !PLAIN_IDENTITY.test(author.email)) return false;
  return [...files.keys()].every((file) => PLAIN_PATH.test(file) && !file.split("/").includes(".."));
}

function data(text: string): string {
  return `data ${Buffer.byteLength(text, "utf8")}\n${text}\n`;
}

/** Every directory on the way to `file` ("a/b/c" gives "a", "a/b"). */
function directoriesOf(file: string): string[] {
  const parts = file.split("/").slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** Commits `tree` with `files` applied on `parents` (the first is the one fast-import builds from). */
export async function commitFiles(
  git: CommitRunner,
  options: {
    tree: string;
    files: ReadonlyMap<string, string | null>;
    parents: readonly string[];
    message: string;
    /** The ref the commit goes to (fast-import moves it, even when not a fast-forward). */
    ref?: string;
  },
): Promise<FilesCommit> {
  const { name, email } = git.author;
  const [first, ...merges] = options.parents;
  if (!first) throw new Error("a commit of the task branch has a parent");
  const asked = new Set<string>();
  for (const [file, content] of options.files) {
    for (const directory of directoriesOf(file)) asked.add(directory);
    if (content !== null) asked.add(file);
  }
  let stream = `commit ${options.ref ?? SCRATCH_REF}\nmark :1\ncommitter ${name} <${email}> now\n${data(options.message)}`;
  stream += `from ${first}\n`;
  for (const merge of merges) stream += `merge ${merge}\n`;
  stream += `M 040000 ${options.tree} ""\n`;
  for (const [file, content] of options.files)
    stream += content === null ? `D ${file}\n` : `M 100644 inline ${file}\n${data(content)}`;
  stream += 'ls ""\n';
  // Quoted: inside a commit an unquoted path would be read as a data reference.
  for (const entry of asked) stream += `ls "${entry}"\n`;
  stream += "\nget-mark :1\ndone\n";
  const { stdout } = await git.run(["fast-import", "--quiet", "--done", "--force", "--date-format=now"], {
    input: stream,
  });
  // One line per `ls` ("<mode> <type> <id>\t<path>", or "missing <path>"), then the commit's id.
  const lines = stdout.split("\n").filter(Boolean);
  const commit = lines.at(-1)?.trim() ?? "";
  const listed = lines.slice(0, -1).map((line) => line.split(/\s+/)[2] ?? "");
  const tree = listed[0] ?? "";
  if (!OBJECT_ID.test(commit) || !OBJECT_ID.test(tree))
    throw new Error(`git fast-import gave no commit: ${stdout.slice(0, 200)}`);
  return { commit, tree, objects: [commit, ...listed.filter((id) => OBJECT_ID.test(id))] };
}
