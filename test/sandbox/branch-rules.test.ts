/**
 * GitHub's refusals on a protected branch, as the sandbox answers them: the merge endpoint under required
 * reviews (stale approvals dismissed), required status checks by name (strict: up to date), a required merge
 * queue; and the git remote refusing a push that touches `.github/workflows/` without `workflows`.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, repoSettings, startSandbox } from "../../sandbox/emulator/index.js";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { rejection, silent } from "./rest-fixture.js";

const owner = "acme";
let sandbox: Sandbox;
let git: SandboxGit;
let api: Octokit;
let alice: Octokit;
let work: string;
let repoCount = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ validateResponses: true });
  git = await attachGit(sandbox);
  sandbox.store.addUser("alice", { permission: "write" });
  sandbox.store.addUser("mallory", { permission: "read" });
  api = new Octokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url, log: silent });
  alice = new Octokit({ auth: sandbox.userToken("alice"), baseUrl: sandbox.url, log: silent });
  work = mkdtempSync(join(tmpdir(), "branch-rules-"));
});

afterAll(async () => {
  await git?.stop();
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A fresh repository with one open pull request from `feature`; returns its name and number. */
async function repoWithPull(): Promise<{ repo: string; number: number; head: string }> {
  const repo = `r${++repoCount}`;
  sandbox.store.createRepo({ owner, name: repo });
  sandbox.store.setPermission(`${owner}/${repo}`, "alice", "write");
  sandbox.store.setPermission(`${owner}/${repo}`, "mallory", "read");
  const base = await git.seedRepo(owner, repo, { "README.md": "hello\n" });
  await api.git.createRef({ owner, repo, ref: "refs/heads/feature", sha: base });
  const head = await git.seedRepo(owner, repo, { "src/a.ts": "export {};\n" }, { branch: "feature" });
  const pr = await api.pulls.create({ owner, repo, title: "Work", head: "feature", base: "main" });
  return { repo, number: pr.data.number, head };
}

/** GraphQL `mergeStateStatus` of the pull request. */
async function mergeState(repo: string, number: number): Promise<string> {
  const data = await api.graphql<{ repository: { pullRequest: { mergeStateStatus: string } } }>(
    "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { mergeStateStatus } } }",
    { owner, name: repo, number },
  );
  return data.repository.pullRequest.mergeStateStatus;
}

async function mergeError(repo: string, number: number): Promise<{ status: number; message: string }> {
  const error = await rejection(api.pulls.merge({ owner, repo, pull_number: number }));
  return {
    status: error.status,
    message: (error.response?.data as { message?: string } | undefined)?.message ?? "",
  };
}

describe("the merge endpoint on a protected branch", () => {
  it("requires approving reviews by people with write access", async () => {
    const { repo, number } = await repoWithPull();
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message: "At least 1 approving review is required by reviewers with write access.",
    });
    // A reader's approval does not count.
    sandbox.store.createReview(`${owner}/${repo}`, number, { author: "mallory", event: "APPROVE" });
    expect((await mergeError(repo, number)).status).toBe(405);
    await alice.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    expect((await api.pulls.merge({ owner, repo, pull_number: number })).data.merged).toBe(true);
    sandbox.assertNoValidationFailures();
  });

  it("with stale approvals dismissed, an approval of an earlier commit no longer counts", async () => {
    const { repo, number } = await repoWithPull();
    repoSettings.addRuleset(sandbox.store, `${owner}/${repo}`, {
      branches: ["~DEFAULT_BRANCH"],
      rules: [
        {
          type: "pull_request",
          parameters: { required_approving_review_count: 1, dismiss_stale_reviews_on_push: true },
        },
      ],
    });
    await alice.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    await git.seedRepo(owner, repo, { "src/b.ts": "export {};\n" }, { branch: "feature" });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message:
        "Repository rule violations found\n\nAt least 1 approving review is required by reviewers with write access.\n\n",
    });
    await alice.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    expect((await api.pulls.merge({ owner, repo, pull_number: number })).data.merged).toBe(true);
    sandbox.assertNoValidationFailures();
  });

  it("requires the named status checks to pass on the head", async () => {
    const { repo, number, head } = await repoWithPull();
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "main", {
      requiredChecks: ["build"],
      requiredApprovals: 0,
    });
    // Another check passing does not stand in for the required one.
    sandbox.store.createCheckRun(`${owner}/${repo}`, {
      name: "lint",
      headSha: head,
      status: "completed",
      conclusion: "success",
    });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message: 'Required status check "build" is expected.',
    });
    const run = sandbox.store.createCheckRun(`${owner}/${repo}`, {
      name: "build",
      headSha: head,
      status: "completed",
      conclusion: "failure",
    });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message: 'Required status check "build" is failing.',
    });
    sandbox.store.updateCheckRun(`${owner}/${repo}`, run.id, { conclusion: "success" });
    expect((await api.pulls.merge({ owner, repo, pull_number: number })).data.merged).toBe(true);
    sandbox.assertNoValidationFailures();
  });

  it("with up-to-date branches required, a head behind its base waits for its checks again", async () => {
    const { repo, number, head } = await repoWithPull();
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "main", {
      requiredChecks: ["build"],
      requiredApprovals: 0,
      strict: true,
    });
    sandbox.store.createCheckRun(`${owner}/${repo}`, {
      name: "build",
      headSha: head,
      status: "completed",
      conclusion: "success",
    });
    expect(await mergeState(repo, number)).toBe("CLEAN");
    await git.seedRepo(owner, repo, { "OTHER.md": "moved on\n" });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message: 'Required status check "build" is expected.',
    });
    // GraphQL tells why: the head ref is out of date (the message alone does not).
    expect(await mergeState(repo, number)).toBe("BEHIND");
    sandbox.assertNoValidationFailures();
  });

  it("calls a pull request its protection refuses BLOCKED", async () => {
    const { repo, number } = await repoWithPull();
    expect(await mergeState(repo, number)).toBe("CLEAN");
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    expect(await mergeState(repo, number)).toBe("BLOCKED");
  });

  it("a required merge queue refuses every direct merge", async () => {
    const { repo, number } = await repoWithPull();
    repoSettings.addRuleset(sandbox.store, `${owner}/${repo}`, {
      branches: ["main"],
      rules: [{ type: "merge_queue", parameters: {} }],
    });
    expect(await mergeError(repo, number)).toEqual({
      status: 405,
      message: "Repository rule violations found\n\nChanges must be made through the merge queue\n\n",
    });
    sandbox.assertNoValidationFailures();
  });
});

describe("pushes that touch .github/workflows/", () => {
  async function clone(repo: string, token: string): Promise<string> {
    const dir = join(work, `${repo}-${token.slice(0, 4)}-${Math.random().toString(36).slice(2, 8)}`);
    const result = await run("git", ["clone", "--quiet", git.url(owner, repo, token), dir], {
      env: gitEnv(),
    });
    if (result.code !== 0) throw new Error(result.stderr);
    return dir;
  }

  async function pushWorkflow(dir: string, branch: string) {
    mkdirSync(join(dir, ".github", "workflows"), { recursive: true });
    writeFileSync(join(dir, ".github", "workflows", "ci.yml"), "on: push\n");
    await run("git", ["checkout", "-q", "-b", branch], { cwd: dir, env: gitEnv() });
    await run("git", ["add", "."], { cwd: dir, env: gitEnv() });
    await run("git", ["commit", "-qm", "Add CI"], { cwd: dir, env: gitEnv() });
    return run("git", ["push", "-q", "origin", branch], { cwd: dir, env: gitEnv() });
  }

  it("refuses an installation token without the workflows permission, naming the file", async () => {
    const repo = `w${++repoCount}`;
    await git.seedRepo(owner, repo, { "README.md": "hello\n" });
    const dir = await clone(repo, sandbox.installationToken());
    const push = await pushWorkflow(dir, "add-ci");
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain(
      "refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission",
    );
    expect(await git.remote.resolveRef(owner, repo, "refs/heads/add-ci")).toBeNull();

    // A push that leaves the workflows alone goes through.
    await run("git", ["checkout", "-q", "-b", "docs", "origin/main"], { cwd: dir, env: gitEnv() });
    writeFileSync(join(dir, "NOTES.md"), "notes\n");
    await run("git", ["add", "."], { cwd: dir, env: gitEnv() });
    await run("git", ["commit", "-qm", "Notes"], { cwd: dir, env: gitEnv() });
    expect((await run("git", ["push", "-q", "origin", "docs"], { cwd: dir, env: gitEnv() })).code).toBe(0);
  });

  it("accepts it once the installation has workflows: write", async () => {
    const repo = `w${++repoCount}`;
    await git.seedRepo(owner, repo, { "README.md": "hello\n" });
    repoSettings.setInstallationGrants(sandbox.store, {
      permissions: { contents: "write", metadata: "read", workflows: "write" },
      events: [],
    });
    const dir = await clone(repo, sandbox.installationToken());
    const push = await pushWorkflow(dir, "add-ci");
    expect(push.stderr).toBe("");
    expect(push.code).toBe(0);
  });
});
