/**
 * Files the worker itself reads or writes inside the agent's work tree (the progress notes, a restored file). The
 * agent owns that tree, so any component of a path may be a symbolic link it planted — `.autopilot/progress.md`
 * pointing at `/proc/<worker>/environ` would put the worker's token in the next prompt, and one pointing at a
 * worker file would let the worker overwrite it. Every component is checked with lstat and the file is opened
 * with O_NOFOLLOW; the agent's processes are all dead while the worker does this, so nothing can swap a
 * component between the check and the open.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, unlink } from "node:fs/promises";
import path from "node:path";
import { noteTreeWrite } from "./tree-writes.js";

export class UnsafeTreePathError extends Error {
  override readonly name = "UnsafeTreePathError";
}

/** Checks each directory of `relative` under `root`; creates the missing ones when `create`. */
async function checkDirs(root: string, relative: string, create: boolean): Promise<string> {
  const parts = path.normalize(relative).split(path.sep).filter(Boolean);
  if (parts.length === 0 || parts.includes("..")) throw new UnsafeTreePathError(`bad path ${relative}`);
  let current = root;
  for (const part of parts.slice(0, -1)) {
    current = path.join(current, part);
    try {
      const info = await lstat(current);
      if (!info.isDirectory())
        throw new UnsafeTreePathError(`${path.relative(root, current)} is not a plain directory`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !create) throw error;
      // Noted before it exists: a failure after the mkdir must not leave an entry the hand-over does not know.
      noteTreeWrite(root, current);
      await mkdir(current);
    }
  }
  return path.join(current, parts.at(-1)!);
}

class TreeFileTooLargeError extends Error {
  override readonly name = "TreeFileTooLargeError";
}

/**
 * The file's text, or null when absent; throws UnsafeTreePathError for a link or a non-regular file, and
 * TreeFileTooLargeError when `maxBytes` is given and the file is larger (checked on the open file, before
 * reading).
 */
export async function readTreeFile(
  root: string,
  relative: string,
  options: { maxBytes?: number } = {},
): Promise<string | null> {
  let file: string;
  try {
    file = await checkDirs(root, relative, false);
    const info = await lstat(file);
    if (!info.isFile()) throw new UnsafeTreePathError(`${relative} is not a regular file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (options.maxBytes !== undefined) {
      const { size } = await handle.stat();
      if (size > options.maxBytes)
        throw new TreeFileTooLargeError(
          `${relative} is ${size} bytes, over the limit of ${options.maxBytes}`,
        );
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Removes the entry at `relative` — a file, or a link itself (never what it points at) — through plain
 * directories only. Absent is fine; a directory there is an UnsafeTreePathError.
 */
export async function removeTreeFile(root: string, relative: string): Promise<void> {
  let entry: string;
  try {
    entry = await checkDirs(root, relative, false);
    const info = await lstat(entry);
    if (info.isDirectory()) throw new UnsafeTreePathError(`${relative} is a directory`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  await unlink(entry);
}

/** True when something (of any kind, a dangling link included) is at that path. */
export async function treeEntryExists(root: string, relative: string): Promise<boolean> {
  try {
    await lstat(path.join(root, relative));
    return true;
  } catch {
    return false;
  }
}

/** Writes (or appends to) a regular file; a link or a non-regular file in the way is an error. */
export async function writeTreeFile(
  root: string,
  relative: string,
  content: string | Uint8Array,
  options: { append?: boolean } = {},
): Promise<void> {
  const file = await checkDirs(root, relative, true);
  try {
    const info = await lstat(file);
    if (!info.isFile()) throw new UnsafeTreePathError(`${relative} is not a regular file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    (options.append ? constants.O_APPEND : constants.O_TRUNC);
  // The agent's user must own what the worker made here (tree-writes.ts: the next hand-over gives only these).
  noteTreeWrite(root, file);
  const handle = await open(file, flags, 0o644);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
