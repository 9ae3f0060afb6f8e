/**
 * The CLI from an install without dev dependencies — what `npx github:OWNER/autopilot …` and the Docker image
 * get: `npm pack` (the package's `files`), then `npm install <tarball> --omit=dev` into an empty project.
 * Slow-ish (the install copies every runtime dependency from npm's cache), so it is one install for all checks.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { systemGit } from "../helpers/system-git.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
let root: string;
let bin: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "packed-"));
  execFileSync(npm, ["pack", "--silent", "--pack-destination", root], {
    cwd: resolve("."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tarball = readdirSync(root).find((f) => f.endsWith(".tgz"))!;
  const project = join(root, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  execFileSync(
    npm,
    [
      "install",
      join(root, tarball),
      "--omit=dev",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
    ],
    { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
  );
  bin = join(project, "node_modules", ".bin", "autopilot");
}, 600_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
}, 300_000);

function autopilot(args: string[], cwd = root, env: NodeJS.ProcessEnv = {}) {
  return spawnSync(bin, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, AUTOPILOT_NO_GH: "1", GITHUB_TOKEN: "", GH_TOKEN: "", ...env },
  });
}

describe("autopilot installed from its package without dev dependencies", { timeout: 240_000 }, () => {
  it("has no dev dependency to lean on", () => {
    const modules = join(root, "project", "node_modules");
    expect(existsSync(join(modules, "vitest"))).toBe(false);
    expect(existsSync(join(modules, "typescript"))).toBe(false);
    expect(existsSync(join(modules, "autopilot", "test"))).toBe(false);
    // Nor the sandbox: neither its files nor the emulator's packages.
    expect(existsSync(join(modules, "autopilot", "sandbox"))).toBe(false);
    expect(existsSync(join(modules, "autopilot", "scenarios"))).toBe(false);
    expect(existsSync(join(modules, "@octokit", "openapi"))).toBe(false);
    expect(existsSync(join(modules, "mermaid"))).toBe(false);
  });

  it("start and sandbox say the sandbox is not installed here and how to get it", () => {
    for (const command of ["start", "sandbox"]) {
      const result = autopilot([command]);
      expect(result.status).toBe(3);
      expect(result.stderr).toContain("The offline sandbox is not installed here");
      expect(result.stderr).toContain("npm ci && npm start");
    }
  });

  it("starts: --help and --version", () => {
    const help = autopilot(["--help"]);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("autopilot init");
    const version = autopilot(["--version"]);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version,
    );
  });

  it("init --yes writes the workflows and config from the packaged templates", () => {
    const repo = join(root, "repo");
    execFileSync(systemGit(), ["init", "-q", repo]);
    // A tarball holds no commit to pin (npm records none for it): init says so and writes nothing.
    const refused = autopilot(["init", "--yes", "--dir", repo, "--source", "acme/autopilot"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("cannot tell it");
    expect(refused.stderr).toContain("AUTOPILOT_COMMIT");
    expect(existsSync(join(repo, ".github"))).toBe(false);
    // Named by a build (the Docker image's REVISION) or by hand, it is pinned.
    const sha = "0123456789abcdef0123456789abcdef01234567";
    const result = autopilot(["init", "--yes", "--dir", repo, "--source", "acme/autopilot"], root, {
      AUTOPILOT_COMMIT: sha,
      // No GitHub to ask whether it is a release: the warning says so, and init goes on.
      GITHUB_API_URL: "http://127.0.0.1:9",
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(`could not ask acme/autopilot whether ${sha.slice(0, 12)} is release`);
    expect(readFileSync(join(repo, ".github/workflows/autopilot-worker.yml"), "utf8")).toContain(
      `uses: acme/autopilot@${sha} # v`,
    );
    expect(existsSync(join(repo, ".github/workflows/autopilot-controller.yml"))).toBe(true);
    expect(readFileSync(join(repo, ".github/autopilot.yml"), "utf8")).toContain("yaml-language-server");
  });
});
