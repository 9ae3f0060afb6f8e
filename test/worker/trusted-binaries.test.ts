/**
 * Which directories and files the worker trusts to run programs from, on real directories: owned by root, by
 * another user (`nobody`), writable by others, sticky like /tmp, reached through links. The tests run as root
 * (here and in CI): root is then both "root" and "the worker's user"; one test names another uid as the worker's.
 */
import { chmod, chown, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  pathVerdict,
  reportIgnoredPath,
  TrustedBinaries,
} from "../../src/worker/isolation/trusted-binaries.js";

const NOBODY = 65534;
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A fresh directory under the system temp dir (owned by root, mode 0700): trusted itself. */
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autopilot-trust-"));
  roots.push(dir);
  return dir;
}

/** A directory at `dir` with the mode and owner given, holding an executable `name` (0755, root's). */
async function binDir(dir: string, mode: number, uid = 0, name = "tool"): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  await chmod(dir, mode);
  await chown(dir, uid, uid);
  return dir;
}

/** A fresh resolver with its own cache, so each test judges its directories afresh. */
const binaries = (path: string, owners: ReadonlySet<number> = new Set([0])) =>
  new TrustedBinaries(path, { owners, cache: new Map() });

describe("PATH directories the worker searches", () => {
  it("skips a world-writable directory first on PATH and names it, finding the program further on", async () => {
    const root = await scratch();
    const open = await binDir(join(root, "open"), 0o777, 0, "git");
    const found = binaries(`${open}:/usr/bin:/bin`);
    expect(found.find("git")).toMatch(/^\/(usr\/)?bin\/git$/);
    expect(found.dirs).not.toContain(open);
    expect(found.ignored).toEqual([
      { entry: open, why: `${open} is writable by group or others`, quiet: false },
    ]);
  });

  it("skips a sticky world-writable directory (anyone can add a new name to it)", async () => {
    const root = await scratch();
    const sticky = await binDir(join(root, "sticky"), 0o1777, 0, "tool");
    expect(binaries(sticky).find("tool")).toBeNull();
  });

  it("skips a group-writable directory", async () => {
    const root = await scratch();
    const group = await binDir(join(root, "group"), 0o775, 0, "tool");
    expect(binaries(group).find("tool")).toBeNull();
  });

  it("skips a directory owned by another user, and one below a directory another user owns", async () => {
    const root = await scratch();
    const theirs = await binDir(join(root, "theirs"), 0o755, NOBODY, "tool");
    const below = await binDir(join(root, "theirs-parent", "bin"), 0o755, 0, "tool");
    await chown(join(root, "theirs-parent"), NOBODY, NOBODY);
    const found = binaries(`${theirs}:${below}`);
    expect(found.find("tool")).toBeNull();
    expect(found.ignored.map((i) => i.why)).toEqual([
      `${theirs} is owned by uid ${NOBODY}, neither root nor the worker's user`,
      `${join(root, "theirs-parent")} is owned by uid ${NOBODY}, neither root nor the worker's user`,
    ]);
  });

  it("trusts a directory the worker's own user owns, as it does root's", async () => {
    const root = await scratch();
    const workers = await binDir(join(root, "workers"), 0o755, NOBODY, "tool");
    // As if the worker ran as `nobody`: its directory (and root's above it) are its own to change.
    await chown(join(workers, "tool"), NOBODY, NOBODY);
    expect(binaries(workers, new Set([0, NOBODY])).find("tool")).toBe(join(workers, "tool"));
  });

  it("trusts a directory below a sticky world-writable one (like /tmp) only when the next one is root's or the worker's", async () => {
    // /tmp itself (1777, root's) is on the way to every scratch directory here: a root-owned one below it is trusted.
    const root = await scratch();
    const ours = await binDir(join(root, "bin"), 0o755, 0, "tool");
    expect(binaries(ours).find("tool")).toBe(join(ours, "tool"));

    // Another sticky, world-writable directory standing in for /tmp, with a directory made there by each.
    const shared = join(root, "shared");
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const rootsBin = await binDir(join(shared, "by-root", "bin"), 0o755, 0, "tool");
    const nobodysBin = await binDir(join(shared, "by-nobody", "bin"), 0o755, 0, "tool");
    await chown(join(shared, "by-nobody"), NOBODY, NOBODY);
    expect(binaries(rootsBin).find("tool")).toBe(join(rootsBin, "tool"));
    const found = binaries(nobodysBin);
    expect(found.find("tool")).toBeNull();
    expect(found.ignored[0]?.why).toBe(
      `${join(shared, "by-nobody")} is owned by uid ${NOBODY}, neither root nor the worker's user`,
    );
    // A world-writable directory on the way that is NOT sticky lets anyone rename what is below it.
    await chmod(shared, 0o777);
    expect(binaries(rootsBin).find("tool")).toBeNull();
  });

  it("names a missing directory only where another user could create it", async () => {
    const root = await scratch();
    const shared = join(root, "shared");
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const found = binaries(`${join(root, "missing", "bin")}:${join(shared, "node_modules", ".bin")}`);
    expect(found.ignored).toEqual([
      { entry: join(root, "missing", "bin"), why: `${join(root, "missing")} does not exist`, quiet: true },
      {
        entry: join(shared, "node_modules", ".bin"),
        why: `does not exist, and any user may create ${join(shared, "node_modules")} in ${shared}`,
        quiet: false,
      },
    ]);
  });

  it("ignores entries that are not absolute (the directory a program runs in)", () => {
    const found = binaries(".::bin:/usr/bin");
    expect(found.ignored.map((i) => i.entry)).toEqual([".", "", "bin"]);
    expect(found.dirs[0]).toBe("/usr/bin");
  });

  it("follows a linked PATH directory and judges where it leads", async () => {
    const root = await scratch();
    const open = await binDir(join(root, "open"), 0o777, 0, "tool");
    await binDir(join(root, "closed"), 0o755, 0, "tool");
    await symlink(open, join(root, "to-open"));
    await symlink("closed", join(root, "to-closed"));
    expect(binaries(join(root, "to-open")).find("tool")).toBeNull();
    expect(binaries(join(root, "to-closed")).find("tool")).toBe(join(root, "to-closed", "tool"));
  });

  it("caches each directory's verdict for the job: one judged untrusted stays ignored", async () => {
    const root = await scratch();
    const open = await binDir(join(root, "open"), 0o777, 0, "tool");
    const cache = new Map();
    expect(new TrustedBinaries(open, { owners: new Set([0]), cache }).find("tool")).toBeNull();
    await chmod(open, 0o755);
    expect(new TrustedBinaries(open, { owners: new Set([0]), cache }).find("tool")).toBeNull();
    expect(new TrustedBinaries(open, { owners: new Set([0]), cache: new Map() }).find("tool")).not.toBeNull();
  });
});

describe("programs found in a trusted directory", () => {
  it("passes over a group- or world-writable file, and one another user owns, for the next directory's", async () => {
    const root = await scratch();
    const first = await binDir(join(root, "first"), 0o755, 0, "git");
    const fallback = await binDir(join(root, "fallback"), 0o755, 0, "git");
    const path = `${first}:${fallback}`;
    await chmod(join(first, "git"), 0o775);
    expect(binaries(path).find("git")).toBe(join(fallback, "git"));
    await chmod(join(first, "git"), 0o757);
    expect(binaries(path).find("git")).toBe(join(fallback, "git"));
    await chmod(join(first, "git"), 0o755);
    await chown(join(first, "git"), NOBODY, NOBODY);
    expect(binaries(path).find("git")).toBe(join(fallback, "git"));
    // With no other to find, the error names the one passed over and why.
    await writeFile(join(first, "only-here"), "#!/bin/sh\n", { mode: 0o755 });
    await chown(join(first, "only-here"), NOBODY, NOBODY);
    expect(() => binaries(first).require("only-here")).toThrow(
      `passed over ${join(first, "only-here")} (${join(first, "only-here")} is owned by uid ${NOBODY}, neither root nor the worker's user)`,
    );
    await chown(join(first, "git"), 0, 0);
    expect(binaries(path).find("git")).toBe(join(first, "git"));
  });

  it("passes over a link into a directory another user can write, and follows one into a trusted one", async () => {
    const root = await scratch();
    const open = await binDir(join(root, "open"), 0o777, 0, "git");
    const bin = join(root, "bin");
    await mkdir(bin);
    await symlink(join(open, "git"), join(bin, "git"));
    await symlink("/usr/bin/env", join(bin, "env"));
    const found = binaries(`${bin}:/usr/bin:/bin`);
    expect(found.find("git")).toMatch(/^\/(usr\/)?bin\/git$/);
    expect(found.find("env")).toBe(join(bin, "env"));
    expect(pathVerdict(join(bin, "git"), "file", new Set([0]))).toEqual({
      trusted: false,
      why: `${open} is writable by group or others`,
    });
  });

  it("refuses names with a slash, and explains a program it cannot find", () => {
    const found = binaries("/nonexistent-bin:.");
    expect(() => found.find("./git")).toThrow(/not a program name/);
    expect(() => found.require("no-such-program-here")).toThrow(
      /no-such-program-here was not found in a directory only root or the worker's user can write \(searched .*\/usr\/bin.*; ignored \. \(not an absolute path/,
    );
  });

  it("resolves the system's tools where Debian installs them", () => {
    const found = binaries("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    for (const name of ["git", "sh", "setpriv", "chown", "chmod", "kill", "env", "getent", "useradd"])
      expect(found.find(name), name).toMatch(new RegExp(`^/(usr/)?s?bin/${name}$`));
  });
});

describe("the log", () => {
  it("names each ignored PATH entry once, with why, and leaves out what hides nothing", async () => {
    const root = await scratch();
    const open = await binDir(join(root, "open"), 0o777, 0, "git");
    const lines: string[] = [];
    const path = `${open}:${join(root, "missing")}:/usr/bin`;
    reportIgnoredPath(path, (line) => lines.push(line));
    reportIgnoredPath(path, (line) => lines.push(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${open} (${open} is writable by group or others)`);
    expect(lines[0]).not.toContain("missing");
    expect(lines[0]).toContain("docs/WORKER.md");
  });
});
