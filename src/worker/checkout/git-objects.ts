/**
 * Reads of the worker's repository's objects (private-git.ts runs the processes): a blob's content, a commit's
 * top-level files, a file a commit deleted, the branch's diff and changed paths. Never the agent's directory.
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

/**
 * The diff of the task branch (`to`, HEAD by default) against where it left the default branch, every file as
 * text: without Autopilot's own notes and cut at 2 MiB unless told otherwise (the push guard reads it all).
 */
export async function branchDiff(
  git: GitRunner,
  base: string,
  options: { to?: string; maxBytes?: number; withNotes?: boolean } = {},
): Promise<string> {
  const maxBytes = options.maxBytes ?? 2 * 1024 * 1024;
  const { stdout } = await git.run([
    "diff",
    "--no-color",
    "--no-ext-diff",
    // Every file as text: a `-diff` attribute or a binary-looking byte must not hide a change from the gate.
    "--text",
    "--no-textconv",
    // Each new file whole, not paired by a similarity heuristic with a deleted one and shown as its changes.
    "--no-renames",
    base,
    options.to ?? "HEAD",
    ...(options.withNotes ? [] : ["--", ".", ":(exclude).autopilot"]),
  ]);
  return stdout.length > maxBytes ? stdout.slice(0, maxBytes) : stdout;
}

/** The paths the branch (`to`, HEAD by default) changed since `base`, without Autopilot's own notes. */
export async function changedPaths(git: GitRunner, base: string, to = "HEAD"): Promise<string[]> {
  const { stdout } = await git.run([
    "diff",
    "--name-only",
    "--no-renames",
    // NUL-separated: a path with a newline or non-ASCII bytes is listed as it is, not quoted.
    "-z",
    base,
    to,
    "--",
    ".",
    ":(exclude).autopilot",
  ]);
  return stdout.split("\0").filter(Boolean);
}
