/**
 * Location does not matter: the product, cloned into a directory only root may enter (as root's home is, mode
 * 700) and into one under /tmp, runs a whole task from there (test/fixtures/scenarios/one-task.yml: the worker,
 * its namespace sandbox and the scripted agent inside the clone, the quality command, the PR, the merge). The
 * demo itself (`npm start`) runs in CI as the README gives it; one task proves the location as well as its six.
 * The clone bundles its own dist/ (the committed one may predate the source) and links this checkout's
 * node_modules.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, it } from "vitest";

const repoRoot = join(import.meta.dirname, "..", "..");
const scenario = join(repoRoot, "test", "fixtures", "scenarios", "one-task.yml");
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
    ["bin/autopilot.js", "sandbox", "--scenario", scenario, "--quiet"],
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

// The two clones run at once: each run mostly waits (on its workers and the sandbox), and two scenarios side by
// side is what `npm run e2e` does anyway (the agent users are claimed per job, the ports are free ones).
describe.concurrent("a checkout anywhere", { timeout: 10 * 60_000 }, () => {
  it("runs a task from a clone inside a directory only root may enter", async ({ expect }) => {
    const locked = await mkdtemp(join(tmpdir(), "autopilot-root-only-"));
    roots.push(locked);
    await chmod(locked, 0o700);
    const out = await runFromClone(join(locked, "home"));
    expect(out).toMatch(/Outcome: settled/);
  });

  it("runs a task from a clone under /tmp", async ({ expect }) => {
    const open = await mkdtemp(join(tmpdir(), "autopilot-tmp-clone-"));
    roots.push(open);
    await chmod(open, 0o755);
    const out = await runFromClone(open);
    expect(out).toMatch(/Outcome: settled/);
  });
});
