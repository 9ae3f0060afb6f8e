/**
 * The hand-over's short way: when the only change since the agent's `.git` was last brought up to date is one
 * commit the worker made on top of it (files-commit.ts), the worker copies that commit's new objects — its own
 * loose object files, byte for byte — into the agent's `.git/objects` and points the agent's branch at it, through
 * the no-follow primitives of tree-files.ts, while the tree is still the worker's (before the hand-over gives it
 * back). No git runs over the agent's directory and nothing of the agent's is read but `.git/HEAD`'s one line.
 *
 * Anything unexpected — a link or a file where a directory should be, HEAD on another branch, an object the worker
 * keeps only packed — answers false, and the hand-over takes the long way (a sync inside the sandbox:
 * agent-side-git.ts). The agent's index is not touched: it still holds the tree the last hand-back staged, which
 * differs from the new commit only in the worker's own files (its progress notes); the next hand-back restages
 * everything.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { readTreeFile, treeEntryExists, writeTreeFile } from "./tree-files.js";

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The new commit and what it adds, as the worker's commit reported it. */
export interface CommitObjects {
  parent: string;
  commit: string;
  objects: readonly string[];
}

/**
 * Copies `step`'s objects from the worker's repository at `gitDir` into the agent's `.git` under `workTree` and
 * moves `branch` there; false (nothing relied on) when it cannot be done safely this way.
 */
export async function bringCommitObjects(options: {
  gitDir: string;
  workTree: string;
  branch: string;
  step: CommitObjects;
}): Promise<boolean> {
  const { gitDir, workTree, branch, step } = options;
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.split("/").includes("..")) return false;
  try {
    const head = await readTreeFile(workTree, ".git/HEAD", { maxBytes: 1024 });
    if (head?.trim() !== `ref: refs/heads/${branch}`) return false;
    // Every object first: the branch moves only once all of them are there.
    const copies: { relative: string; content: Buffer }[] = [];
    for (const id of new Set(step.objects)) {
      if (!OBJECT_ID.test(id)) return false;
      const relative = `.git/objects/${id.slice(0, 2)}/${id.slice(2)}`;
      if (await treeEntryExists(workTree, relative)) continue;
      const content = await readFile(path.join(gitDir, "objects", id.slice(0, 2), id.slice(2))).catch(
        () => null,
      );
      // Kept only in a pack of the worker's: the long way brings it.
      if (content === null) return false;
      copies.push({ relative, content });
    }
    for (const copy of copies) await writeTreeFile(workTree, copy.relative, copy.content);
    await writeTreeFile(workTree, `.git/refs/heads/${branch}`, `${step.commit}\n`);
    return true;
  } catch {
    return false;
  }
}
