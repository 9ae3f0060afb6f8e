/**
 * "Require signed commits" as the sandbox models GitHub: a push of unsigned commits to a branch a ruleset or a
 * protection rule covers is refused (GH006), and commits GitHub made through the Git Database API for the App,
 * with no author or committer given, are verified and accepted there.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, repoSettings, startSandbox } from "../../sandbox/emulator/index.js";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { silent } from "./rest-fixture.js";

const owner = "acme";
let sandbox: Sandbox;
let git: SandboxGit;
let app: Octokit;
let alice: Octokit;
let work: string;
let repoCount = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ validateResponses: true });
  git = await attachGit(sandbox);
  sandbox.store.addUser("alice", { permission: "admin" });
  app = new Octokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url, log: silent });
  alice = new Octokit({ auth: sandbox.userToken("alice"), baseUrl: sandbox.url, log: silent });
  work = mkdtempSync(join(tmpdir(), "signed-commits-"));
});

afterAll(async () => {
  await git?.stop();
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A fresh repository whose `autopilot/**` branches require signed commits (a ruleset). */
async function protectedRepo(): Promise<string> {
  const repo = `s${++repoCount}`;
  await git.seedRepo(owner, repo, { "README.md": "hello\n" });
  repoSettings.addRuleset(sandbox.store, `${owner}/${repo}`, {
    branches: ["autopilot/**"],
    rules: [{ type: "required_signatures" }],
  });
  return repo;
}

async function pushCommit(repo: string, branch: string) {
  const dir = join(work, `${repo}-${Math.random().toString(36).slice(2, 8)}`);
  const env = gitEnv();
  const clone = await run("git", ["clone", "-q", git.url(owner, repo, sandbox.installationToken()), dir], {
    env,
  });
  if (clone.code !== 0) throw new Error(clone.stderr);
  writeFileSync(join(dir, "a.txt"), "a\n");
  await run("git", ["checkout", "-q", "-b", branch], { cwd: dir, env });
  await run("git", ["add", "."], { cwd: dir, env });
  await run("git", ["commit", "-qm", "add a"], { cwd: dir, env });
  return run("git", ["push", "-q", "origin", branch], { cwd: dir, env });
}

describe("required signed commits", { timeout: 60_000 }, () => {
  it("refuses a push of unsigned commits to a covered branch with GitHub's GH006, and lets others through", async () => {
    const repo = await protectedRepo();
    const refused = await pushCommit(repo, "autopilot/issue-1");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      "GH006: Protected branch update failed for refs/heads/autopilot/issue-1.",
    );
    expect(refused.stderr).toContain("Commits must have verified signatures.");
    expect(await git.remote.resolveRef(owner, repo, "refs/heads/autopilot/issue-1")).toBeNull();
    expect((await pushCommit(repo, "feature")).code).toBe(0);
    // An unsigned commit another branch already has is refused there too.
    const dir = join(work, `${repo}-again`);
    const env = gitEnv();
    await run("git", ["clone", "-q", git.url(owner, repo, sandbox.installationToken()), dir], { env });
    const again = await run("git", ["push", "-q", "origin", "origin/feature:refs/heads/autopilot/issue-2"], {
      cwd: dir,
      env,
    });
    expect(again.stderr).toContain("Commits must have verified signatures.");
    sandbox.assertNoValidationFailures();
  });

  it("a protection rule's required signatures refuses the same push", async () => {
    const repo = `s${++repoCount}`;
    await git.seedRepo(owner, repo, { "README.md": "hello\n" });
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "release", {
      requiredChecks: [],
      requiredApprovals: 0,
      requiredSignatures: true,
    });
    expect((await pushCommit(repo, "release")).stderr).toContain("Commits must have verified signatures.");
  });

  it("verifies the App's commits made through the Git Database API, which the covered branch accepts", async () => {
    const repo = await protectedRepo();
    const main = await app.rest.repos.getBranch({ owner, repo, branch: "main" });
    const base = main.data.commit.sha;
    const baseTree = main.data.commit.commit.tree.sha;
    const png = Buffer.from([0x89, 0x50, 0xff, 0x00]).toString("base64");
    const blob = await app.rest.git.createBlob({ owner, repo, content: png, encoding: "base64" });
    const tree = await app.rest.git.createTree({
      owner,
      repo,
      base_tree: baseTree,
      tree: [
        { path: "src/a.txt", mode: "100644", type: "blob", content: "a\n" },
        { path: "logo.png", mode: "100644", type: "blob", sha: blob.data.sha },
        { path: "README.md", mode: "100644", type: "blob", sha: null },
      ],
    });
    const listed = await app.rest.git.getTree({ owner, repo, tree_sha: tree.data.sha, recursive: "1" });
    expect(listed.data.tree.map((e) => e.path).sort()).toEqual(["logo.png", "src", "src/a.txt"]);
    const commit = await app.rest.git.createCommit({
      owner,
      repo,
      message: "add a\n\nAutopilot-Task: #1\n",
      tree: tree.data.sha,
      parents: [base],
    });
    expect(commit.data.verification).toMatchObject({ verified: true, reason: "valid" });
    await app.rest.git.createRef({ owner, repo, ref: "refs/heads/autopilot/issue-1", sha: commit.data.sha });
    const read = await app.rest.repos.getCommit({ owner, repo, ref: commit.data.sha });
    expect(read.data.commit.verification).toMatchObject({ verified: true, reason: "valid" });
    expect(read.data.commit.message).toContain("Autopilot-Task: #1");

    // A custom author, or a person's token: GitHub does not sign it.
    const authored = await app.rest.git.createCommit({
      owner,
      repo,
      message: "m",
      tree: tree.data.sha,
      parents: [base],
      author: { name: "Someone", email: "someone@example.com" },
    });
    expect(authored.data.verification?.verified).toBe(false);
    const personal = await alice.rest.git.createCommit({
      owner,
      repo,
      message: "m",
      tree: tree.data.sha,
      parents: [base],
    });
    expect(personal.data.verification).toMatchObject({ verified: false, reason: "unsigned" });
    sandbox.assertNoValidationFailures();
  });

  it("refuses an API ref write that brings an unsigned commit to a covered branch", async () => {
    const repo = await protectedRepo();
    expect((await pushCommit(repo, "feature")).code).toBe(0);
    const unsigned = await app.rest.repos.getBranch({ owner, repo, branch: "feature" });
    const creating = app.rest.git.createRef({
      owner,
      repo,
      ref: "refs/heads/autopilot/issue-2",
      sha: unsigned.data.commit.sha,
    });
    await expect(creating).rejects.toMatchObject({ status: 422 });
    await expect(creating).rejects.toThrow(/Commits must have verified signatures/);
    // The default branch's own commits are already on a ref: a branch made at one brings nothing new.
    const main = await app.rest.repos.getBranch({ owner, repo, branch: "main" });
    await app.rest.git.createRef({
      owner,
      repo,
      ref: "refs/heads/autopilot/issue-3",
      sha: main.data.commit.sha,
    });
    const moving = app.rest.git.updateRef({
      owner,
      repo,
      ref: "heads/autopilot/issue-3",
      sha: unsigned.data.commit.sha,
    });
    await expect(moving).rejects.toMatchObject({ status: 422 });
  });

  it("refuses to delete a path the base tree does not have", async () => {
    const repo = await protectedRepo();
    const main = await app.rest.repos.getBranch({ owner, repo, branch: "main" });
    const deleting = app.rest.git.createTree({
      owner,
      repo,
      base_tree: main.data.commit.commit.tree.sha,
      tree: [{ path: "missing.txt", mode: "100644", type: "blob", sha: null }],
    });
    await expect(deleting).rejects.toMatchObject({ status: 422 });
  });
});
