/**
 * Location does not matter: the product, cloned into a directory only root may enter (as root's home is, mode
 * 700) and into one under /tmp, runs the demo end to end from there (`scenarios/demo.yml`, what `npm start`
 * runs) — the worker, its namespace sandbox and the demo agent inside the clone. The clone bundles its own dist/
 * (the committed one may predate the source) and links this checkout's node_modules.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = join(import.meta.dirname, "..", "..");
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function runFromClone(base: string): Promise<string> {
  const clone = join(base, "autopilot");
  execFileSync("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone]);
  await symlink(join(repoRoot, "node_modules"), join(clone, "node_modules"));
  execFileSync(process.execPath, ["scripts/bundle.mjs"], { cwd: clone, stdio: "ignore" });
  return execFileSync(
    process.execPath,
    ["bin/autopilot.js", "sandbox", "--scenario", "scenarios/demo.yml", "--quiet"],
    { cwd: clone, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" }, timeout: 8 * 60_000 },
  );
}

describe("a checkout anywhere", { timeout: 10 * 60_000 }, () => {
  it("runs the demo from a clone inside a directory only root may enter", async () => {
    const locked = await mkdtemp(join(tmpdir(), "autopilot-root-only-"));
    roots.push(locked);
    await chmod(locked, 0o700);
    const out = await runFromClone(join(locked, "home"));
    expect(out).toMatch(/Outcome: settled/);
  });

  it("runs the demo from a clone under /tmp", async () => {
    const open = await mkdtemp(join(tmpdir(), "autopilot-tmp-clone-"));
    roots.push(open);
    await chmod(open, 0o755);
    const out = await runFromClone(open);
    expect(out).toMatch(/Outcome: settled/);
  });
});
