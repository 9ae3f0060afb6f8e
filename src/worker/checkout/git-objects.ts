/**
 * Reads of the worker's repository's objects (private-git.ts runs the processes): what changed between two trees,
 * object sizes and contents, a commit's top-level files, a file a commit deleted. Never the agent's directory.
 */
import type { Git } from "./private-git.js";

type GitRunner = Pick<Git, "run">;

/** One changed entry between two trees (`git diff-tree -r --raw`), the new side's mode and object. */
interface TreeChange {
  /** A added, M modified, D deleted, T type changed. */
  status: string;
  oldMode: string;
  newMode: string;
  newObject: string;
  path: string;
}

/** Every entry that differs between two trees, recursively, with the new side's mode and object. */
export async function treeChanges(git: GitRunner, from: string, to: string): Promise<TreeChange[]> {
  const { stdout } = await git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to]);
  const fields = stdout.split("\0");
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const meta = fields[i]!;
    if (!meta.startsWith(":")) break;
    const [oldMode, newMode, , newObject, status] = meta.slice(1).split(" ");
    changes.push({
      status: status ?? "",
      oldMode: oldMode ?? "",
      newMode: newMode ?? "",
      newObject: newObject ?? "",
      path: fields[i + 1]!,
    });
  }
  return changes;
}

/** Each object's size in bytes (null: missing), in one `cat-file --batch-check`. */
export async function objectSizes(git: GitRunner, objects: readonly string[]): Promise<(number | null)[]> {
  if (objects.length === 0) return [];
  const { stdout } = await git.run(["cat-file", "--batch-check=%(objectsize)"], {
    input: `${objects.join("\n")}\n`,
  });
  return stdout
    .split("\n")
    .slice(0, objects.length)
    .map((line) => (/^\d+$/.test(line) ? Number(line) : null));
}

/** A blob's content (a symbolic link's target). */
export async function blobText(git: GitRunner, object: string): Promise<string> {
  return (await git.run(["cat-file", "blob", object])).stdout;
}

/** The names of the regular files at the top of a commit's tree. */
export async function topLevelFiles(git: GitRunner, commit: string): Promise<Set<string>> {
  const { stdout } = await git.run(["ls-tree", "-z", commit]);
  const names = new Set<string>();
  for (const entry of stdout.split("\0")) {
    const tab = entry.indexOf("\t");
    const mode = entry.slice(0, 6);
    if (tab > 0 && (mode === "100644" || mode === "100755")) names.add(entry.slice(tab + 1));
  }
  return names;
}

/** The content a file had before the last commit that deleted it from HEAD's history; null when none did. */
export async function deletedFileContent(git: GitRunner, file: string): Promise<string | null> {
  const log = await git.run(["log", "-1", "--format=%H", "--diff-filter=D", "HEAD", "--", file], {
    allowFail: true,
  });
  const sha = log.stdout.trim();
  if (log.code !== 0 || !sha) return null;
  const content = await git.run(["show", `${sha}^:${file}`], { allowFail: true });
  return content.code === 0 ? content.stdout : null;
}

/** Whether a file is in HEAD's tree. */
export async function inHead(git: GitRunner, file: string): Promise<boolean> {
  return (await git.run(["cat-file", "-e", `HEAD:${file}`], { allowFail: true })).code === 0;
}
