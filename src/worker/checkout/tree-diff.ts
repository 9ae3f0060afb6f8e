/**
 * What changed between two trees of the worker's repository, read through the job's object reader
 * (object-batch.ts): the same entries `git diff-tree -r --raw --no-renames` lists, without a git process per
 * hand-back. Only trees that differ are read, side by side on the one pipe. The objects are ones
 * `index-pack --strict` checked on their way in (or the worker's own), so each tree is well formed.
 *
 * Names are compared as bytes (latin1 keys, one character per byte): two names that are not valid UTF-8 never
 * fall together into one replacement character and hide an entry from the check.
 */
import type { ObjectBatch } from "./object-batch.js";

/** One changed entry between two trees, the new side's mode and object (`000000` and zeros when deleted). */
interface TreeChange {
  /** A added, M modified, D deleted, T type changed. */
  status: string;
  oldMode: string;
  newMode: string;
  newObject: string;
  path: string;
}

interface TreeEntry {
  mode: string;
  id: string;
}

type Objects = Pick<ObjectBatch, "contents">;

const TREE = "040000";
const NONE = "000000";
const NO_ENTRIES: ReadonlyMap<string, TreeEntry> = new Map();

/** Every entry that differs between two trees, recursively (subtrees are walked, not listed), by path. */
export async function treeChanges(objects: Objects, from: string, to: string): Promise<TreeChange[]> {
  const changes: TreeChange[] = [];
  await walk(objects, from, to, "", changes);
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function walk(
  objects: Objects,
  from: string | null,
  to: string | null,
  prefix: string,
  out: TreeChange[],
): Promise<void> {
  const [before, after] = await Promise.all([readTree(objects, from), readTree(objects, to)]);
  const below: Promise<void>[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const old = before.get(name);
    const now = after.get(name);
    if (old && now && old.mode === now.mode && old.id === now.id) continue;
    const raw = prefix + name;
    const oldTree = old?.mode === TREE;
    const nowTree = now?.mode === TREE;
    if (oldTree || nowTree)
      below.push(walk(objects, oldTree ? old!.id : null, nowTree ? now!.id : null, `${raw}/`, out));
    const oldEntry = old && !oldTree ? old : null;
    const path = Buffer.from(raw, "latin1").toString("utf8");
    if (oldEntry && (!now || nowTree))
      out.push({
        status: "D",
        oldMode: oldEntry.mode,
        newMode: NONE,
        newObject: "0".repeat(oldEntry.id.length),
        path,
      });
    if (now && !nowTree) {
      const status = !oldEntry ? "A" : kind(oldEntry.mode) === kind(now.mode) ? "M" : "T";
      out.push({ status, oldMode: oldEntry?.mode ?? NONE, newMode: now.mode, newObject: now.id, path });
    }
  }
  await Promise.all(below);
}

/** A file, a symbolic link or a gitlink: the mode's type bits. */
function kind(mode: string): string {
  return mode.slice(0, 2);
}

async function readTree(objects: Objects, id: string | null): Promise<ReadonlyMap<string, TreeEntry>> {
  if (id === null) return NO_ENTRIES;
  const object = await objects.contents(id);
  if (!object?.data || object.type !== "tree") throw new Error(`tree ${id} is missing from the hand-back`);
  return parseTree(object.data, id.length / 2);
}

/** A tree object's entries: `<mode> <name>\0<id bytes>` after one another. */
function parseTree(data: Buffer, idBytes: number): Map<string, TreeEntry> {
  const entries = new Map<string, TreeEntry>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = space < 0 ? -1 : data.indexOf(0x00, space + 1);
    if (nul < 0 || nul + 1 + idBytes > data.length) throw new Error("a tree object is malformed");
    const mode = data.subarray(at, space).toString("latin1").padStart(6, "0");
    const name = data.subarray(space + 1, nul).toString("latin1");
    entries.set(name, { mode, id: data.subarray(nul + 1, nul + 1 + idBytes).toString("hex") });
    at = nul + 1 + idBytes;
  }
  return entries;
}
