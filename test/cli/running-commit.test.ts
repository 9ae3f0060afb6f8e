/**
 * The commit `autopilot init` pins Autopilot's actions to (src/cli/running-commit.ts) and whether it is a release
 * (src/cli/release-check.ts): read from a checkout's git, from npm's record of a git install, or from
 * AUTOPILOT_COMMIT; never from a repository that merely contains the copy; a commit between releases warned about.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { releaseWarnings } from "../../src/cli/release-check.js";
import { readRunningCommit, type RunningCommit } from "../../src/cli/running-commit.js";
import { systemGit } from "../helpers/system-git.js";
import { nockGitHub } from "../helpers/validating-fetch.js";

const github = nockGitHub();
const API = "https://api.github.com";
const SHA = "0123456789abcdef0123456789abcdef01234567";
const OTHER = "fedcba9876543210fedcba9876543210fedcba98";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "running-commit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync(systemGit(), ["-C", cwd, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  }).trim();

/** A clone of Autopilot: one commit, tagged as npm's release workflow tags it. */
function checkout(): string {
  const root = join(dir, "autopilot");
  mkdirSync(root);
  git(root, "init", "-q");
  writeFileSync(join(root, "package.json"), '{"name":"autopilot","version":"1.0.0"}\n');
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "one");
  return root;
}

/** What `npx github:acme/autopilot` leaves: the package without .git, and npm's hidden lockfile beside it. */
function npmInstall(parent: string, resolved: string | null): string {
  const root = join(parent, "node_modules", "autopilot");
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), '{"name":"autopilot","version":"1.0.0"}\n');
  if (resolved !== null)
    writeFileSync(
      join(parent, "node_modules", ".package-lock.json"),
      JSON.stringify({
        name: "x",
        lockfileVersion: 3,
        packages: { "node_modules/autopilot": { version: "1.0.0", resolved } },
      }),
    );
  return root;
}

describe("the commit init pins", () => {
  it("is a checkout's HEAD, with its tags and whether tracked files changed", () => {
    const root = checkout();
    const head = git(root, "rev-parse", "HEAD");
    expect(readRunningCommit(root, {})).toEqual({
      ok: true,
      commit: { sha: head, from: "checkout", tags: [], modified: false },
    });
    git(root, "tag", "-a", "v1.0.0", "-m", "v1.0.0");
    writeFileSync(join(root, "package.json"), '{"name":"autopilot","version":"1.0.1"}\n');
    expect(readRunningCommit(root, {})).toEqual({
      ok: true,
      commit: { sha: head, from: "checkout", tags: ["v1.0.0"], modified: true },
    });
  });

  it("is what npm recorded for a git install, and never the HEAD of a repository that contains the copy", () => {
    // A project (itself a git repository) that installed Autopilot from GitHub.
    git(dir, "init", "-q");
    const root = npmInstall(dir, `git+ssh://git@github.com/acme/autopilot.git#${SHA}`);
    expect(readRunningCommit(root, {})).toEqual({
      ok: true,
      commit: { sha: SHA, from: "npm", tags: null, modified: false },
    });
    // Installed from a registry tarball: no commit anywhere, and the project's HEAD is not taken for one.
    rmSync(join(dir, "node_modules"), { recursive: true });
    const tarball = npmInstall(dir, "https://registry.npmjs.org/autopilot/-/autopilot-1.0.0.tgz");
    const reading = readRunningCommit(tarball, {});
    expect(reading.ok).toBe(false);
    if (!reading.ok)
      expect(reading.reason).toContain("neither a git checkout nor a git install npm recorded");
    expect(readRunningCommit(npmInstall(mkdtempSync(join(dir, "bare-")), null), {}).ok).toBe(false);
  });

  it("is what npm itself records when it installs the package from git (no .git comes with it)", () => {
    const source = checkout();
    const head = git(source, "rev-parse", "HEAD");
    const project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{"name":"project","private":true}\n');
    execFileSync(
      process.platform === "win32" ? "npm.cmd" : "npm",
      ["install", `git+file://${source}`, "--no-audit", "--no-fund", "--loglevel=error"],
      { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
    );
    const installed = join(project, "node_modules", "autopilot");
    expect(existsSync(join(installed, ".git"))).toBe(false);
    expect(readRunningCommit(installed, {})).toEqual({
      ok: true,
      commit: { sha: head, from: "npm", tags: null, modified: false },
    });
  });

  it("is AUTOPILOT_COMMIT when set, which must be a full SHA", () => {
    const root = checkout();
    expect(readRunningCommit(root, { AUTOPILOT_COMMIT: SHA })).toEqual({
      ok: true,
      commit: { sha: SHA, from: "AUTOPILOT_COMMIT", tags: null, modified: false },
    });
    expect(readRunningCommit(root, { AUTOPILOT_COMMIT: "v1.0.0" })).toEqual({
      ok: false,
      reason: 'AUTOPILOT_COMMIT is "v1.0.0", not a full commit SHA (40 lowercase hexadecimal digits)',
    });
  });
});

describe("whether the pinned commit is a release", () => {
  const check = (commit: RunningCommit, fetch?: typeof globalThis.fetch) =>
    releaseWarnings({
      commit,
      source: "acme/autopilot",
      version: "1.0.0",
      fromRelease: "`npx github:acme/autopilot#vX.Y.Z init`",
      baseUrl: API,
      token: null,
      ...(fetch ? { fetch } : {}),
    });
  const local = (tags: string[], modified = false): RunningCommit => ({
    sha: SHA,
    from: "checkout",
    tags,
    modified,
  });
  const installed: RunningCommit = { sha: SHA, from: "npm", tags: null, modified: false };

  it("a checkout says from its own tags, and a change it has not committed is named", async () => {
    expect(await check(local(["v1.0.0"]))).toEqual([]);
    expect(await check(local(["v0.9.0"]))).toEqual([
      "0123456789ab is not a release: no tag v1.0.0 points at it, so the workflows pin a commit between releases. For a release, run `npx github:acme/autopilot#vX.Y.Z init` (the versions are in CHANGELOG.md).",
    ]);
    expect((await check(local(["v1.0.0"], true)))[0]).toContain(
      "this checkout of Autopilot has changes it has not committed: the workflows pin 0123456789ab, which does not hold them",
    );
  });

  it("an install asks GitHub where the tag points, following an annotated tag to its commit", async () => {
    const fetch = github.validating.fetch;
    nock(API)
      .get("/repos/acme/autopilot/git/ref/tags%2Fv1.0.0")
      .reply(200, { ref: "refs/tags/v1.0.0", object: { type: "tag", sha: OTHER } })
      .get(`/repos/acme/autopilot/git/tags/${OTHER}`)
      .reply(200, { sha: OTHER, tag: "v1.0.0", object: { type: "commit", sha: SHA } });
    expect(await check(installed, fetch)).toEqual([]);

    nock(API)
      .get("/repos/acme/autopilot/git/ref/tags%2Fv1.0.0")
      .reply(200, { ref: "refs/tags/v1.0.0", object: { type: "commit", sha: OTHER } });
    expect(await check(installed, fetch)).toEqual([
      "0123456789ab is not release v1.0.0 (v1.0.0 is fedcba987654): the workflows pin a commit between releases. For a release, run `npx github:acme/autopilot#vX.Y.Z init` (the versions are in CHANGELOG.md).",
    ]);

    nock(API).get("/repos/acme/autopilot/git/ref/tags%2Fv1.0.0").reply(404, { message: "Not Found" });
    expect((await check(installed, fetch))[0]).toContain(
      "0123456789ab is not a release: no tag v1.0.0 exists in acme/autopilot",
    );

    nock(API).get("/repos/acme/autopilot/git/ref/tags%2Fv1.0.0").reply(500, { message: "boom" });
    expect((await check(installed, fetch))[0]).toMatch(
      /^could not ask acme\/autopilot whether 0123456789ab is release v1\.0\.0 \(.*\): if it is not/,
    );
    expect(github.validating.problems).toEqual([]);
  });
});
