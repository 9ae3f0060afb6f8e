/**
 * Reads of the worker's repository's objects (private-git.ts runs the processes): what changed between two trees,
 * object sizes and contents, a commit's top-level files, a file a commit deleted. Never the agent's directory.
 */
import type { Git } from "./private-git.js";

type GitRunner = Pick<Git, "run">;

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
