/**
 * The hand-back's tree comparison (src/worker/checkout/tree-diff.ts, through the job's object reader) lists what
 * `git diff-tree -r --raw --no-renames` lists, on trees changed at random (seeded): files edited, added and
 * deleted, a file becoming a directory and back, executable bits, symbolic links, gitlinks, and names that are
 * not UTF-8.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ObjectBatch } from "../../src/worker/checkout/object-batch.js";
import { treeChanges } from "../../src/worker/checkout/tree-diff.js";

const repo = mkdtempSync(join(tmpdir(), "autopilot-tree-diff-"));
spawnSync("git", ["init", "-q", "--bare", repo]);
const objects = new ObjectBatch(() => spawn("git", ["cat-file", "--batch-command"], { cwd: repo }));
afterAll(() => {
  objects.close();
  rmSync(repo, { recursive: true, force: true });
});

function git(args: string[], input?: Buffer | string): Buffer {
  const done = spawnSync("git", args, { cwd: repo, input, maxBuffer: 64 * 1024 * 1024 });
  if (done.status !== 0) throw new Error(`git ${args.join(" ")}: ${done.stderr}`);
  return done.stdout;
}

/** path (latin1: one character per byte) → [mode, content] */
type Files = Map<string, [string, string]>;

const blobIds = new Map<string, string>();
function blob(content: string): string {
  let id = blobIds.get(content);
  if (!id) {
    id = git(["hash-object", "-w", "--stdin"], content).toString().trim();
    blobIds.set(content, id);
  }
  return id;
}

/** Builds the tree of `files` with `git mktree -z`, directory by directory. */
function writeTree(files: Files, dir = ""): string {
  const lines: Buffer[] = [];
  const subdirs = new Set<string>();
  for (const [path, [mode, content]] of files) {
    if (!path.startsWith(dir)) continue;
    const rest = path.slice(dir.length);
    const slash = rest.indexOf("/");
    if (slash >= 0) {
      subdirs.add(rest.slice(0, slash));
      continue;
    }
    const id = mode === "160000" ? content.padEnd(40, "0") : blob(content);
    const type = mode === "160000" ? "commit" : "blob";
    lines.push(
      Buffer.concat([Buffer.from(`${mode} ${type} ${id}\t`), Buffer.from(rest, "latin1"), Buffer.from([0])]),
    );
  }
  for (const sub of subdirs) {
    const id = writeTree(files, `${dir}${sub}/`);
    lines.push(
      Buffer.concat([Buffer.from(`040000 tree ${id}\t`), Buffer.from(sub, "latin1"), Buffer.from([0])]),
    );
  }
  return git(["mktree", "-z", "--missing"], Buffer.concat(lines)).toString().trim();
}

/** diff-tree's own list, as the hand-back's check used to read it. */
function diffTree(from: string, to: string): string[] {
  const fields = git(["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to])
    .toString("utf8")
    .split("\0");
  const out: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode, newMode, , newObject, status] = fields[i]!.slice(1).split(" ");
    out.push(`${status} ${oldMode} ${newMode} ${newObject} ${fields[i + 1]}`);
  }
  return out.sort();
}

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ["a", "b", "c.txt", "d-e", "\xff", "\xfe", "z"];
const MODES = ["100644", "100644", "100644", "100755", "120000", "160000"];

function randomPath(next: () => number): string {
  const depth = 1 + Math.floor(next() * 3);
  return Array.from({ length: depth }, () => NAMES[Math.floor(next() * NAMES.length)]).join("/");
}

/** Adds `path` unless a file stands where one of its directories would go, or it is a directory already. */
function place(files: Files, path: string, entry: [string, string]): void {
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) if (files.has(parts.slice(0, i).join("/"))) return;
  for (const other of files.keys()) if (other.startsWith(`${path}/`)) return;
  files.set(path, entry);
}

function entry(next: () => number): [string, string] {
  const mode = MODES[Math.floor(next() * MODES.length)]!;
  return [
    mode,
    mode === "160000" ? Math.floor(next() * 1e6).toString(16) : `content ${Math.floor(next() * 5)}`,
  ];
}

describe("the hand-back's tree comparison", () => {
  it("lists what diff-tree lists, on 40 seeded pairs of trees", async () => {
    const statuses = new Set<string>();
    let listed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const before: Files = new Map();
      for (let i = 0; i < 25; i++) place(before, randomPath(next), entry(next));
      const after: Files = new Map(before);
      for (const path of [...after.keys()]) {
        const roll = next();
        if (roll < 0.15) after.delete(path);
        else if (roll < 0.3) after.set(path, entry(next));
      }
      // A file that becomes a directory, and a directory that becomes a file.
      const file = [...after.keys()].find((p) => !p.includes("/"));
      if (file && next() < 0.5) {
        after.delete(file);
        place(after, `${file}/inner`, entry(next));
      }
      const dir = [...after.keys()].find((p) => p.includes("/"))?.split("/")[0];
      if (dir && next() < 0.5) {
        for (const p of [...after.keys()]) if (p.startsWith(`${dir}/`)) after.delete(p);
        after.set(dir, entry(next));
      }
      for (let i = 0; i < 5; i++) place(after, randomPath(next), entry(next));

      const from = writeTree(before);
      const to = writeTree(after);
      const ours = (await treeChanges(objects, from, to))
        .map((c) => `${c.status} ${c.oldMode} ${c.newMode} ${c.newObject} ${c.path}`)
        .sort();
      expect(ours, `seed ${seed}`).toEqual(diffTree(from, to));
      listed += ours.length;
      for (const line of ours) statuses.add(line[0]!);
    }
    // The pairs exercised every kind of change.
    expect([...statuses].sort()).toEqual(["A", "D", "M", "T"]);
    expect(listed).toBeGreaterThan(200);
  });

  it("keeps two names that are not UTF-8 apart: a change under either is listed", async () => {
    const from = writeTree(new Map([["\xff", ["100644", "same"]]]));
    const to = writeTree(
      new Map([
        ["\xff", ["100644", "same"]],
        ["\xfe", ["120000", "/etc/passwd"]],
      ]),
    );
    const changes = await treeChanges(objects, from, to);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ status: "A", newMode: "120000" });
  });

  it("refuses a tree the repository does not have", async () => {
    const from = writeTree(new Map([["a", ["100644", "x"]]]));
    await expect(treeChanges(objects, from, "1".repeat(40))).rejects.toThrow(/missing/);
  });
});

describe("the object reader", () => {
  it("answers sizes and contents in order, null for what is missing, and refuses what is not an object id", async () => {
    const id = blob("hello\n");
    const [info, contents, missing] = await Promise.all([
      objects.info(id),
      objects.contents(id),
      objects.info("2".repeat(40)),
    ]);
    expect(info).toEqual({ type: "blob", size: 6 });
    expect(contents?.data?.toString()).toBe("hello\n");
    expect(missing).toBeNull();
    await expect(objects.info("HEAD\ncontents HEAD")).rejects.toThrow(/not an object id/);
  });

  it("starts again after its process ended", async () => {
    const reader = new ObjectBatch(() => spawn("git", ["cat-file", "--batch-command"], { cwd: repo }));
    const id = blob("again\n");
    expect((await reader.info(id))?.size).toBe(6);
    reader.close();
    expect((await reader.info(id))?.size).toBe(6);
    reader.close();
  });
});
