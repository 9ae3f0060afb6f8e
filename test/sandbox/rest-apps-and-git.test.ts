/** The sandbox REST API: app authentication, OpenAPI validation, the real git remote, fork pull requests, rulesets. */
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { describe, expect, it } from "vitest";
import { startSandbox } from "../../sandbox/emulator/index.js";
import {
  client,
  octokit,
  owner,
  rejection,
  repo,
  sandbox,
  silent,
  takeFailures,
  untyped,
  useRestSandbox,
} from "./rest-fixture.js";

useRestSandbox(async () => {
  // The issue the authentication and rate-limit tests read.
  await octokit.issues.create({ owner, repo, title: "Issue one" });
});

describe("app authentication and permissions", () => {
  it("app JWT → installation → access token → API calls", async () => {
    const auth = createAppAuth({ appId: sandbox.app.id, privateKey: sandbox.app.privateKey });
    const { token: jwt } = await auth({ type: "app" });
    const asApp = client(jwt);
    expect((await asApp.apps.getAuthenticated()).data).toMatchObject({
      slug: "autopilot",
      id: sandbox.app.id,
    });
    const installations = await asApp.apps.listInstallations();
    expect(installations.data.map((i) => i.id)).toEqual([sandbox.app.installationId]);
    const repoInstallation = await asApp.apps.getRepoInstallation({ owner, repo });
    expect(repoInstallation.data.id).toBe(sandbox.app.installationId);
    const token = await asApp.apps.createInstallationAccessToken({
      installation_id: sandbox.app.installationId,
    });
    expect(token.data.token).toMatch(/^ghs_/);
    expect(new Date(token.data.expires_at).getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    const repos = await client(token.data.token).apps.listReposAccessibleToInstallation();
    expect(repos.data.repositories.map((r) => r.full_name)).toEqual(["acme/widgets"]);
    expect((await rejection(asApp.issues.get({ owner, repo, issue_number: 1 }))).status).toBe(403);
    sandbox.store.createRepo({ owner, name: "other" });
    const scoped = await asApp.apps.createInstallationAccessToken({
      installation_id: sandbox.app.installationId,
      repositories: ["widgets"],
    });
    expect(scoped.data.repository_selection).toBe("selected");
    expect((await client(scoped.data.token).issues.get({ owner, repo, issue_number: 1 })).status).toBe(200);
    expect(
      (await rejection(client(scoped.data.token).issues.listForRepo({ owner, repo: "other" }))).status,
    ).toBe(404);
    expect(sandbox.requests.summary().byTokenKind.app).toBeGreaterThanOrEqual(4);

    // The same flow through auth-app's installation strategy, as Probot does it.
    const installationAuth = createAppAuth({
      appId: sandbox.app.id,
      privateKey: sandbox.app.privateKey,
      installationId: sandbox.app.installationId,
      request: asApp.request,
    });
    const installationToken = await installationAuth({ type: "installation" });
    expect(installationToken.token).toMatch(/^ghs_/);
  });

  it("rejects forged JWTs, unknown tokens and missing auth with 401", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const other = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const forged = await createAppAuth({ appId: sandbox.app.id, privateKey: other.privateKey })({
      type: "app",
    });
    const e1 = await rejection(client(forged.token).apps.getAuthenticated());
    expect(e1.status).toBe(401);
    expect(e1.message).toContain("JSON web token");
    expect((await rejection(client("ghs_unknown").issues.get({ owner, repo, issue_number: 1 }))).status).toBe(
      401,
    );
    const anonymous = new Octokit({ baseUrl: sandbox.url, log: silent });
    const e3 = await rejection(anonymous.issues.get({ owner, repo, issue_number: 1 }));
    expect(e3.status).toBe(401);
    expect(e3.message).toContain("Requires authentication");
    expect((await rejection(client("ghp_nobody").users.getAuthenticated())).status).toBe(401);
  });

  it("reports collaborator permission levels as GitHub does", async () => {
    const level = async (username: string) =>
      (await octokit.repos.getCollaboratorPermissionLevel({ owner, repo, username })).data;
    expect(await level("alice")).toMatchObject({
      permission: "write",
      role_name: "write",
      user: { login: "alice" },
    });
    expect(await level("tess")).toMatchObject({ permission: "read", role_name: "triage" });
    expect(await level("acme")).toMatchObject({ permission: "admin" });
    sandbox.store.setPermission(`${owner}/${repo}`, "mallory", "maintain");
    expect(await level("mallory")).toMatchObject({ permission: "write", role_name: "maintain" });
    expect((await rejection(level("ghost"))).status).toBe(404);
    expect((await client(sandbox.userToken("alice")).users.getAuthenticated()).data.login).toBe("alice");
  });

  it("counts down x-ratelimit headers per token and answers 403 when spent", async () => {
    sandbox.setRateLimits({ user: 3 });
    sandbox.store.addUser("bob", { permission: "read" });
    const bob = client(sandbox.userToken("bob"));
    const r1 = await bob.issues.get({ owner, repo, issue_number: 1 });
    expect(r1.headers["x-ratelimit-limit"]).toBe("3");
    expect(r1.headers["x-ratelimit-resource"]).toBe("core");
    const r2 = await bob.issues.get({ owner, repo, issue_number: 1 });
    expect(Number(r2.headers["x-ratelimit-remaining"])).toBe(Number(r1.headers["x-ratelimit-remaining"]) - 1);
    expect(r2.headers["x-ratelimit-used"]).toBe("2");
    // A conditional request answered 304 is free.
    const etag = r2.headers.etag!;
    const notModified = await rejection(
      bob.issues.get({ owner, repo, issue_number: 1, headers: { "if-none-match": etag } }),
    );
    expect(notModified.status).toBe(304);
    const limits = await bob.rateLimit.get();
    expect(limits.data.resources.core).toMatchObject({ limit: 3, used: 2, remaining: 1 });
    await bob.issues.get({ owner, repo, issue_number: 1 });
    const spent = await rejection(bob.issues.get({ owner, repo, issue_number: 1 }));
    expect(spent.status).toBe(403);
    expect(spent.message).toContain("API rate limit exceeded");
    expect(spent.response?.headers["x-ratelimit-remaining"]).toBe("0");
    // Other tokens have their own budget.
    const inst = await octokit.issues.get({ owner, repo, issue_number: 1 });
    expect(inst.headers["x-ratelimit-limit"]).toBe("5000");
    sandbox.setRateLimits({ user: 5000 });
  });
});

describe("validation against GitHub's OpenAPI description", () => {
  it("rejects an unknown endpoint with 404 and records it", async () => {
    const error = await rejection(
      octokit.request("GET /repos/{owner}/{repo}/no-such-thing", { owner, repo }),
    );
    expect(error.status).toBe(404);
    expect(takeFailures()).toEqual([expect.stringContaining("is not an endpoint of GitHub's REST API")]);
    const wrongMethod = await rejection(octokit.request("PUT /repos/{owner}/{repo}/issues", { owner, repo }));
    expect(wrongMethod.status).toBe(404);
    expect(takeFailures()).toEqual([expect.stringContaining("PUT is not allowed")]);
  });

  it("rejects a missing required field with 422 and the reason", async () => {
    const error = await rejection(
      untyped("POST /repos/{owner}/{repo}/labels", { owner, repo, color: "ffffff" }),
    );
    expect(error.status).toBe(422);
    expect(error.message).toContain("must have required property 'name'");
    expect(takeFailures()).toEqual([expect.stringContaining("must have required property 'name'")]);
  });

  it("rejects a bad enum with 422", async () => {
    const error = await rejection(
      untyped("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
        owner,
        repo,
        issue_number: 1,
        state: "done",
      }),
    );
    expect(error.status).toBe(422);
    expect(error.message).toContain('"open", "closed"');
    expect(takeFailures()).toHaveLength(1);
  });

  it("rejects an unknown query parameter with 422", async () => {
    const error = await rejection(
      octokit.request("GET /repos/{owner}/{repo}/issues", { owner, repo, status: "open" }),
    );
    expect(error.status).toBe(422);
    expect(error.message).toContain("`status`");
    expect(takeFailures()).toEqual([
      expect.stringContaining("must NOT have additional properties (`status`)"),
    ]);
  });

  it("rejects a non-integer path parameter", async () => {
    const error = await rejection(
      untyped("GET /repos/{owner}/{repo}/issues/{issue_number}", { owner, repo, issue_number: "abc" }),
    );
    expect(error.status).toBe(422);
    expect(takeFailures()).toEqual([expect.stringContaining("must be integer")]);
  });

  it("made only valid calls (requests and response shapes) everywhere else", () => {
    sandbox.assertNoValidationFailures();
    const summary = sandbox.requests.summary();
    expect(summary.byEndpoint["GET /repos/{owner}/{repo}/issues/{issue_number}"]).toBeGreaterThan(3);
    expect(summary.total).toBe(sandbox.requests.records.length);
  });
});

describe("REST over the real git remote", () => {
  it("reads contents, diffs and merges pull requests through git", async () => {
    const { attachGit } = await import("../../sandbox/emulator/git/sandbox-git.js");
    const gitSandbox = await startSandbox({ validateResponses: true });
    const git = await attachGit(gitSandbox);
    try {
      gitSandbox.store.createRepo({ owner, name: repo });
      await git.ensureRepo(owner, repo);
      const base = await git.seedRepo(owner, repo, {
        "README.md": "hello\n",
        ".github/autopilot.yml": "maxParallel: 1\n",
      });
      const api = new Octokit({
        auth: gitSandbox.installationToken(),
        baseUrl: gitSandbox.url,
        log: silent,
      });
      expect((await api.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha).toBe(base);
      const config = await api.repos.getContent({
        owner,
        repo,
        path: ".github/autopilot.yml",
        mediaType: { format: "raw" },
      });
      expect(config.data as unknown as string).toBe("maxParallel: 1\n");
      const dir = await api.repos.getContent({ owner, repo, path: ".github" });
      expect((dir.data as Array<{ name: string }>).map((e) => e.name)).toEqual(["autopilot.yml"]);

      await api.git.createRef({ owner, repo, ref: "refs/heads/autopilot/issue-1", sha: base });
      const head = await git.seedRepo(
        owner,
        repo,
        { "README.md": "hello\nworld\n", "src/new.ts": "export {};\n" },
        { branch: "autopilot/issue-1", message: "work" },
      );
      const pr = await api.pulls.create({
        owner,
        repo,
        title: "Work (#1)",
        head: "autopilot/issue-1",
        base: "main",
      });
      expect(pr.data.head.sha).toBe(head);
      const files = await api.pulls.listFiles({ owner, repo, pull_number: pr.data.number });
      expect(files.data.map((f) => [f.filename, f.status]).sort()).toEqual([
        ["README.md", "modified"],
        ["src/new.ts", "added"],
      ]);
      const got = await api.pulls.get({ owner, repo, pull_number: pr.data.number });
      expect(got.data).toMatchObject({ mergeable: true, changed_files: 2, commits: 1 });
      const merged = await api.pulls.merge({
        owner,
        repo,
        pull_number: pr.data.number,
        merge_method: "squash",
      });
      expect((await api.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha).toBe(
        merged.data.sha,
      );
      const readme = await api.repos.getContent({
        owner,
        repo,
        path: "README.md",
        mediaType: { format: "raw" },
      });
      expect(readme.data as unknown as string).toBe("hello\nworld\n");
      gitSandbox.assertNoValidationFailures();
    } finally {
      await git.stop();
      await gitSandbox.stop();
    }
  });
});

describe("a pull request from a fork", () => {
  it("shows the fork as its head (label, owner, repository) and not this repository", async () => {
    const { attachGit } = await import("../../sandbox/emulator/git/sandbox-git.js");
    const { forkBranchRef } = await import("../../sandbox/emulator/store.js");
    const gitSandbox = await startSandbox({ validateResponses: true });
    const git = await attachGit(gitSandbox);
    try {
      gitSandbox.store.createRepo({ owner, name: repo });
      gitSandbox.store.addUser("mallory", { permission: "read" });
      await git.ensureRepo(owner, repo);
      const base = await git.seedRepo(owner, repo, { "README.md": "hello\n" });
      const ref = forkBranchRef("mallory", "autopilot/issue-1");
      await git.remote.createRef(owner, repo, ref, base);
      await git.remote.seedRepo(owner, repo, { "a.js": "evil\n" }, { branch: ref });
      const mallory = new Octokit({
        auth: gitSandbox.userToken("mallory"),
        baseUrl: gitSandbox.url,
        log: silent,
      });
      const pr = await mallory.pulls.create({
        owner,
        repo,
        title: "Fix",
        head: "mallory:autopilot/issue-1",
        base: "main",
      });
      const api = new Octokit({ auth: gitSandbox.installationToken(), baseUrl: gitSandbox.url, log: silent });
      const { data } = await api.pulls.get({ owner, repo, pull_number: pr.data.number });
      expect(data.head).toMatchObject({
        label: "mallory:autopilot/issue-1",
        ref: "autopilot/issue-1",
        user: { login: "mallory" },
        repo: { full_name: `mallory/${repo}`, fork: true, owner: { login: "mallory" } },
      });
      expect(data.head.repo?.id).not.toBe(data.base.repo.id);
      expect(data.head.repo?.url).toMatch(new RegExp(`/repos/mallory/${repo}$`));
      expect(data.base.repo).toMatchObject({ full_name: `${owner}/${repo}`, fork: false });
      gitSandbox.assertNoValidationFailures();
    } finally {
      await git.stop();
      await gitSandbox.stop();
    }
  });
});

describe("repository settings (rulesets)", () => {
  it("lists the rules that apply to a branch, a page at a time like every list", async () => {
    const { repoSettings } = await import("../../sandbox/emulator/index.js");
    const rules = Array.from({ length: 35 }, (_, i) => ({
      type: "required_status_checks",
      // As GitHub describes the rule: the strict policy is a required parameter.
      parameters: {
        required_status_checks: [{ context: `check-${i}` }],
        strict_required_status_checks_policy: false,
      },
    }));
    repoSettings.addRuleset(sandbox.store, `${owner}/${repo}`, { branches: ["~DEFAULT_BRANCH"], rules });
    repoSettings.addRuleset(sandbox.store, `${owner}/${repo}`, {
      branches: ["release/**"],
      rules: [{ type: "deletion" }],
    });
    const first = await octokit.request("GET /repos/{owner}/{repo}/rules/branches/{branch}", {
      owner,
      repo,
      branch: "main",
    });
    expect(first.data).toHaveLength(30);
    expect(first.headers.link).toContain('rel="next"');
    const all = await octokit.paginate("GET /repos/{owner}/{repo}/rules/branches/{branch}", {
      owner,
      repo,
      branch: "main",
      per_page: 100,
    });
    expect(all).toHaveLength(35);
    expect(all.every((r) => r.type === "required_status_checks")).toBe(true);
    const release = await octokit.request("GET /repos/{owner}/{repo}/rules/branches/{branch}", {
      owner,
      repo,
      branch: "release/1.0",
    });
    expect(release.data.map((r) => r.type)).toEqual(["deletion"]);
  });
});
