/**
 * Location does not matter: the product, cloned into a directory only root may enter (as root's home is, mode
 * 700) and into one under /tmp, runs the demo end to end from there (`scenarios/demo.yml`, what `npm start`
 * runs) — the worker, its namespace sandbox and the demo agent inside the clone. The clone bundles its own dist/
 * (the committed one may predate the source) and links this checkout's node_modules.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, it } from "vitest";

const repoRoot = join(import.meta.dirname, "..", "..");
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

const run = promisify(execFile);

async function runFromClone(base: string): Promise<string> {
  const clone = join(base, "autopilot");
  await run("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone]);
  await symlink(join(repoRoot, "node_modules"), join(clone, "node_modules"));
  await run(process.execPath, ["scripts/bundle.mjs"], { cwd: clone });
  const { stdout } = await run(
    process.execPath,
    ["bin/autopilot.js", "sandbox", "--scenario", "scenarios/demo.yml", "--quiet"],
    {
      cwd: clone,
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
      timeout: 8 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout;
}

// The two clones run at once: each demo mostly waits (on its timeline, its workers and the sandbox), and two
// demos side by side is what `npm run e2e` does anyway (the agent users are claimed per job, the ports are free
// ones), so the file takes about one demo's time instead of two.
describe.concurrent("a checkout anywhere", { timeout: 10 * 60_000 }, () => {
  it("runs the demo from a clone inside a directory only root may enter", async ({ expect }) => {
    const locked = await mkdtemp(join(tmpdir(), "autopilot-root-only-"));
    roots.push(locked);
    await chmod(locked, 0o700);
    const out = await runFromClone(join(locked, "home"));
    expect(out).toMatch(/Outcome: settled/);
  });

  it("runs the demo from a clone under /tmp", async ({ expect }) => {
    const open = await mkdtemp(join(tmpdir(), "autopilot-tmp-clone-"));
    roots.push(open);
    await chmod(open, 0o755);
    const out = await runFromClone(open);
    expect(out).toMatch(/Outcome: settled/);
  });
});
