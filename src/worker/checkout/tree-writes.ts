/**
 * What the worker itself wrote into the agent's work tree since the agent last had it: the hand-over gives the
 * agent's user only these paths instead of walking every entry of the tree (agent-user.ts `give`). The agent owns
 * its tree between runs, so a file the worker created through tree-files.ts is the only kind the agent could not
 * edit (checkouts, merges and resets of the files run as the agent itself: agent-side-git.ts).
 *
 * A missed path would be a functional bug (a root-owned file the agent cannot change), never a leak: so the
 * record is kept only where every write is known. Each write of tree-files.ts names its path; a tree never seen
 * here (its first hand-over) is `unknown`, and the hand-over then walks the whole tree.
 */
import path from "node:path";

/** The paths written, or "unknown" when something may have written paths nobody named. */
export type TreeWrites = ReadonlySet<string> | "unknown";

const records = new Map<string, Set<string> | "unknown">();

/** The record of the tree at `root`: any tree this module has not been told about is unknown. */
function recordOf(root: string): Set<string> | "unknown" {
  return records.get(path.resolve(root)) ?? "unknown";
}

/**
 * The worker wrote (created, replaced or appended to) the entry at absolute `entry` inside `root`. Noted in every
 * record whose tree holds the entry, whatever spelling of the tree's path the writer was given.
 */
export function noteTreeWrite(root: string, entry: string): void {
  const absolute = path.resolve(root, entry);
  for (const [tree, record] of records)
    if (record !== "unknown" && absolute.startsWith(`${tree}/`)) record.add(absolute);
}

/** The worker may have written anywhere in the tree at `root` (its git changed files). */
export function noteTreeUnknown(root: string): void {
  records.set(path.resolve(root), "unknown");
}

/**
 * At the take-back: paths named while the agent could still run (none, in the worker's order of work) are not
 * trusted as names, since the agent may have put a link in their way since, and `chown -h` follows the links
 * of a path's directories; the next hand-over walks the tree instead (`find -P` follows none).
 */
export function distrustTreeWritesSoFar(root: string): void {
  const record = recordOf(root);
  if (record !== "unknown" && record.size > 0) noteTreeUnknown(root);
}

/** What was written into `root` since the last call, and a fresh, empty record from now on. */
export function takeTreeWrites(root: string): TreeWrites {
  const record = recordOf(root);
  records.set(path.resolve(root), new Set());
  return record;
}
