/**
 * A directory of the agent's work tree the worker is asked to use (a workspace's: where the agent starts, where
 * its quality commands run). The tree is the agent's, so the directory counts only when it is a real directory
 * all the way down: a part the agent replaced with a symbolic link could lead the worker's own process out of
 * the tree, and the worker neither follows nor creates anything there.
 */
import { lstat } from "node:fs/promises";
import path from "node:path";

/** The absolute directory, or why it cannot be used. */
export async function treeDirectory(
  workTree: string,
  directory: string,
): Promise<{ dir: string } | { refused: string }> {
  const target = path.resolve(workTree, directory);
  const parts = path.relative(workTree, target).split(path.sep);
  let at = workTree;
  for (const part of parts) {
    at = path.join(at, part);
    const stat = part && part !== ".." ? await lstat(at).catch(() => null) : null;
    if (!stat?.isDirectory())
      return {
        refused: `the workspace directory ${directory} is not a directory of the work tree (missing, outside it, or reached through a link)`,
      };
  }
  return { dir: target };
}
