import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_SHA } from "../../sandbox/emulator/git/git-constants.js";
import { GitRemote } from "../../sandbox/emulator/git/git-remote.js";
import type { PushUpdate } from "../../sandbox/emulator/git/git-remote-types.js";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";
import type { StoreEvent } from "../../sandbox/emulator/store.js";
import { startGitHost } from "./git-host.js";

const TOKENS: Record<string, { login: string; write: boolean }> = {
  ghs_writer: { login: "autopilot[bot]", write: true },
  ghp_reader: { login: "reader", write: false },
};

let remote: GitRemote;
let server: Server;
let base: string;
let work: string;
const pushes: PushUpdate[] = [];
const encodings: string[] = [];

async function git(args: string[], cwd = work) {
  const result = await run("git", args, { cwd, env: gitEnv() });
  return result;
}

async function gitOk(args: string[], cwd = work): Promise<string> {
  const result = await git(args, cwd);
  if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim();
}

function url(token?: string, repo = "shop"): string {
  const u = new URL(`/git/demo/${repo}.git`, base);
  if (token) {
    u.username = "x-access-token";
    u.password = token;
  }
  return u.toString();
}

beforeAll(async () => {
  remote = new GitRemote({
    authenticate: (token) => TOKENS[token] ?? null,
    onPush: (update) => {
      pushes.push(update);
    },
  });
  server = createServer((req, res) => {
    encodings.push(String(req.headers["content-encoding"] ?? ""));
    void remote.handler(req, res).then((handled) => {
      if (!handled) {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  work = mkdtempSync(join(tmpdir(), "git-test-"));
  await remote.createRepo("demo", "shop", "main");
  await remote.seedRepo("demo", "shop", {
    "README.md": "# shop\n",
    "src/price.js": "export const price = (n) => n * 2;\n",
  });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await remote.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the git remote over smart HTTP", () => {
  it("seeds the default branch with one commit holding the files", async () => {
    const refs = await remote.listRefs("demo", "shop");
    expect(refs.map((r) => r.ref)).toEqual(["refs/heads/main"]);
    expect(await remote.readFile("demo", "shop", "main", "src/price.js")).toContain("n * 2");
    expect(await remote.readFile("demo", "shop", "main", "missing.txt")).toBeNull();
    const commit = await remote.getCommit("demo", "shop", "main");
    expect(commit?.message).toBe("Initial commit");
    expect(commit?.parents).toEqual([]);
  });

  it("clones with a valid token and rejects a clone without one or with a bad one", async () => {
    await gitOk(["clone", "--quiet", url("ghs_writer"), "clone1"]);
    expect(readFileSync(join(work, "clone1", "README.md"), "utf8")).toBe("# shop\n");

    const anonymous = await git(["clone", "--quiet", url(), "anon"]);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/Authentication failed|could not read Username|401/);

    const bad = await git(["clone", "--quiet", url("ghs_nope"), "bad"]);
    expect(bad.code).not.toBe(0);
  });

  it("answers 401 with a Basic challenge, and 404 for an unknown repository", async () => {
    const res = await fetch(`${url()}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
    const auth = `Basic ${Buffer.from("x:ghs_writer").toString("base64")}`;
    const missing = await fetch(`${base}/git/demo/nothing.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: auth },
    });
    expect(missing.status).toBe(404);
  });

  it("pushes a new branch, moves the ref and reports the push once per ref", async () => {
    const dir = join(work, "clone1");
    await gitOk(["checkout", "-q", "-b", "feature"], dir);
    writeFileSync(join(dir, "src", "price.js"), "export const price = (n) => n * 3;\n");
    await gitOk(["commit", "-qam", "Triple the price"], dir);
    const sha = await gitOk(["rev-parse", "HEAD"], dir);
    pushes.length = 0;
    await gitOk(["push", "-q", "origin", "feature"], dir);
    expect(await remote.resolveRef("demo", "shop", "feature")).toBe(sha);
    expect(pushes).toEqual([
      {
        owner: "demo",
        repo: "shop",
        ref: "refs/heads/feature",
        before: ZERO_SHA,
        after: sha,
        pusher: "autopilot[bot]",
      },
    ]);

    writeFileSync(join(dir, "NOTES.md"), "notes\n");
    await gitOk(["add", "."], dir);
    await gitOk(["commit", "-qm", "Notes"], dir);
    const second = await gitOk(["rev-parse", "HEAD"], dir);
    pushes.length = 0;
    await gitOk(["push", "-q", "origin", "feature"], dir);
    expect(pushes).toEqual([
      {
        owner: "demo",
        repo: "shop",
        ref: "refs/heads/feature",
        before: sha,
        after: second,
        pusher: "autopilot[bot]",
      },
    ]);
  });

  it("fetches what another clone pushed", async () => {
    await gitOk(["clone", "--quiet", url("ghp_reader"), "clone2"]);
    const dir = join(work, "clone2");
    await gitOk(["fetch", "-q", "origin", "feature"], dir);
    expect(await gitOk(["rev-parse", "FETCH_HEAD"], dir)).toBe(
      await remote.resolveRef("demo", "shop", "feature"),
    );
  });

  it("refuses a push from a read-only token", async () => {
    const dir = join(work, "clone2");
    await gitOk(["checkout", "-q", "-b", "reader-branch"], dir);
    pushes.length = 0;
    const push = await git(["push", "-q", "origin", "reader-branch"], dir);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/403|denied/);
    expect(await remote.resolveRef("demo", "shop", "reader-branch")).toBeNull();
    expect(pushes).toEqual([]);
  });

  it("reports a deleted branch with the zero SHA", async () => {
    const dir = join(work, "clone1");
    await gitOk(["push", "-q", "origin", "HEAD:refs/heads/temp"], dir);
    const sha = await remote.resolveRef("demo", "shop", "temp");
    pushes.length = 0;
    await gitOk(["push", "-q", "origin", ":temp"], dir);
    expect(pushes).toEqual([
      {
        owner: "demo",
        repo: "shop",
        ref: "refs/heads/temp",
        before: sha,
        after: ZERO_SHA,
        pusher: "autopilot[bot]",
      },
    ]);
  });

  it("accepts gzip-compressed fetch negotiation", async () => {
    // Many local commits the server lacks make git send a long list of "have" lines, gzipped.
    const dir = join(work, "clone2");
    await gitOk(["checkout", "-q", "-b", "local-only"], dir);
    for (let i = 0; i < 120; i++) await gitOk(["commit", "-q", "--allow-empty", "-m", `local ${i}`], dir);
    const sha = await remote.seedRepo(
      "demo",
      "shop",
      { "server.txt": "new on the server\n" },
      { branch: "other" },
    );
    encodings.length = 0;
    await gitOk(["fetch", "-q", "origin", "other"], dir);
    expect(encodings).toContain("gzip");
    expect(await gitOk(["rev-parse", "FETCH_HEAD"], dir)).toBe(sha);
  });
});

describe("the git backend the REST API uses", () => {
  it("creates, updates (fast-forward only unless forced) and deletes refs", async () => {
    const main = (await remote.resolveRef("demo", "shop", "main"))!;
    const feature = (await remote.resolveRef("demo", "shop", "feature"))!;
    await remote.createRef("demo", "shop", "refs/heads/api-branch", main);
    await expect(remote.createRef("demo", "shop", "refs/heads/api-branch", main)).rejects.toThrow(
      /already exists/,
    );
    await remote.updateRef("demo", "shop", "heads/api-branch", feature);
    await expect(remote.updateRef("demo", "shop", "api-branch", main)).rejects.toThrow(/fast forward/);
    await remote.updateRef("demo", "shop", "api-branch", main, true);
    expect(await remote.resolveRef("demo", "shop", "api-branch")).toBe(main);
    await remote.deleteRef("demo", "shop", "api-branch");
    expect(await remote.resolveRef("demo", "shop", "api-branch")).toBeNull();
  });

  it("compares two refs with changed files, patches and ahead/behind counts", async () => {
    const result = await remote.compare("demo", "shop", "main", "feature");
    expect(result.status).toBe("ahead");
    expect(result.aheadBy).toBe(2);
    expect(result.behindBy).toBe(0);
    expect(result.commits.map((c) => c.message)).toEqual(["Triple the price", "Notes"]);
    const byName = Object.fromEntries(result.files.map((f) => [f.filename, f]));
    expect(byName["src/price.js"]).toMatchObject({
      status: "modified",
      additions: 1,
      deletions: 1,
      changes: 2,
    });
    expect(byName["src/price.js"]?.patch).toContain("+export const price = (n) => n * 3;");
    expect(byName["NOTES.md"]).toMatchObject({ status: "added", additions: 1 });
  });

  it("commits a single file change on a branch (the contents API)", async () => {
    const before = await remote.resolveRef("demo", "shop", "main");
    const sha = await remote.writeFile("demo", "shop", {
      branch: "main",
      path: "docs/guide.md",
      content: "guide\n",
      message: "Add guide",
      author: { name: "Alice", email: "alice@example.com" },
    });
    const commit = await remote.getCommit("demo", "shop", "main");
    expect(commit).toMatchObject({ sha, parents: [before], message: "Add guide" });
    expect(commit?.author.name).toBe("Alice");
    expect(await remote.readFile("demo", "shop", "main", "docs/guide.md")).toBe("guide\n");
    expect(await remote.fileSha("demo", "shop", "main", "docs/guide.md")).toMatch(/^[0-9a-f]{40}$/);
    expect((await remote.listTree("demo", "shop", "main")).map((e) => e.path)).toContain("docs");
  });

  async function branchWith(name: string, files: Record<string, string>, from = "main"): Promise<string> {
    const start = (await remote.resolveRef("demo", "shop", from))!;
    await remote.createRef("demo", "shop", `refs/heads/${name}`, start);
    let sha = start;
    for (const [path, content] of Object.entries(files)) {
      sha = await remote.writeFile("demo", "shop", { branch: name, path, content, message: `Edit ${path}` });
    }
    return sha;
  }

  it("merges with a merge commit that has both parents", async () => {
    const head = await branchWith("m1", { "a.txt": "a\n" });
    const base = (await remote.resolveRef("demo", "shop", "main"))!;
    const result = await remote.merge("demo", "shop", {
      base: "main",
      head: "m1",
      method: "merge",
      title: "Merge m1",
    });
    expect(result.merged).toBe(true);
    const commit = await remote.getCommit("demo", "shop", "main");
    expect(commit?.parents).toEqual([base, head]);
    expect(commit?.message).toBe("Merge m1");
    expect(await remote.readFile("demo", "shop", "main", "a.txt")).toBe("a\n");
  });

  it("squashes into one commit with the base as only parent", async () => {
    await branchWith("s1", { "b.txt": "b\n", "c.txt": "c\n" });
    const base = (await remote.resolveRef("demo", "shop", "main"))!;
    const result = await remote.merge("demo", "shop", {
      base: "main",
      head: "s1",
      method: "squash",
      title: "Add b and c (#7)",
    });
    expect(result.merged).toBe(true);
    const commit = await remote.getCommit("demo", "shop", "main");
    expect(commit?.parents).toEqual([base]);
    expect(commit?.message.split("\n")[0]).toBe("Add b and c (#7)");
    expect(await remote.readFile("demo", "shop", "main", "c.txt")).toBe("c\n");
  });

  it("rebases each commit onto the base", async () => {
    await branchWith("r1", { "d.txt": "d\n", "e.txt": "e\n" });
    await remote.writeFile("demo", "shop", {
      branch: "main",
      path: "f.txt",
      content: "f\n",
      message: "f on main",
    });
    const base = (await remote.resolveRef("demo", "shop", "main"))!;
    const result = await remote.merge("demo", "shop", { base: "main", head: "r1", method: "rebase" });
    expect(result.merged).toBe(true);
    const top = await remote.getCommit("demo", "shop", "main");
    const below = await remote.getCommit("demo", "shop", top!.parents[0]!);
    expect(top?.message).toBe("Edit e.txt");
    expect(below?.message).toBe("Edit d.txt");
    expect(below?.parents).toEqual([base]);
    expect(await remote.readFile("demo", "shop", "main", "f.txt")).toBe("f\n");
  });

  it("reports conflicts as unmergeable and leaves the base alone", async () => {
    await branchWith("x1", { "README.md": "# one\n" });
    await branchWith("x2", { "README.md": "# two\n" });
    expect(await remote.mergeability("demo", "shop", "main", "x1")).toEqual({
      mergeable: true,
      conflicts: [],
    });
    expect((await remote.merge("demo", "shop", { base: "main", head: "x1", method: "squash" })).merged).toBe(
      true,
    );
    const base = await remote.resolveRef("demo", "shop", "main");
    expect(await remote.mergeability("demo", "shop", "main", "x2")).toEqual({
      mergeable: false,
      conflicts: ["README.md"],
    });
    for (const method of ["merge", "squash", "rebase"] as const) {
      const result = await remote.merge("demo", "shop", { base: "main", head: "x2", method });
      expect(result).toMatchObject({ merged: false, reason: "conflict", conflicts: ["README.md"] });
    }
    expect(await remote.resolveRef("demo", "shop", "main")).toBe(base);
  });

  it("refuses a merge when the head moved past the expected SHA", async () => {
    const sha = await branchWith("h1", { "h.txt": "1\n" });
    await remote.writeFile("demo", "shop", { branch: "h1", path: "h.txt", content: "2\n", message: "move" });
    const result = await remote.merge("demo", "shop", {
      base: "main",
      head: "h1",
      method: "merge",
      expectedHeadSha: sha,
    });
    expect(result).toMatchObject({ merged: false, reason: "stale_base" });
  });
});

describe("the git remote wired to the sandbox's store", () => {
  it("moves a PR's head on push and emits push and pull_request.synchronize, with the pusher from the token", async () => {
    const host = await startGitHost();
    const dir = mkdtempSync(join(tmpdir(), "git-store-"));
    try {
      host.store.addUser("alice", { permission: "admin" });
      host.store.addUser("eve", { permission: "read" });
      await host.git.seedRepo("demo", "shop", { "README.md": "# shop\n" });
      const main = (await host.store.resolveRef("demo/shop", "main"))!;
      await host.store.createRef("demo/shop", "refs/heads/topic", main, "alice");
      await host.git.seedRepo("demo", "shop", { "a.txt": "a\n" }, { branch: "topic" });
      const pull = await host.store.createPull("demo/shop", {
        title: "Topic",
        head: "topic",
        base: "main",
        author: "alice",
      });
      const events: StoreEvent[] = [];
      host.store.onEvent((e) => events.push(e));

      const token = host.store.userToken("alice");
      const clone = join(dir, "clone");
      const g = (args: string[], cwd = clone) => run("git", args, { cwd, env: gitEnv() });
      expect(
        (await g(["clone", "-q", "-b", "topic", host.git.url("demo", "shop", token), clone], dir)).code,
      ).toBe(0);
      writeFileSync(join(clone, "b.txt"), "b\n");
      await g(["add", "."]);
      await g(["commit", "-qm", "Add b"]);
      const sha = (await g(["rev-parse", "HEAD"])).stdout.trim();
      expect((await g(["push", "-q", "origin", "topic"])).code).toBe(0);

      expect(host.store.getPull("demo/shop", pull.number)?.pull?.head.sha).toBe(sha);
      const push = events.find((e): e is Extract<StoreEvent, { name: "push" }> => e.name === "push");
      expect(push?.push).toMatchObject({
        ref: "refs/heads/topic",
        after: sha,
        pusher: "alice",
        forced: false,
      });
      expect(push?.push.commits.map((c) => [c.message, c.added])).toEqual([["Add b", ["b.txt"]]]);
      const sync = events.find((e) => e.name === "pull_request" && e.action === "synchronize");
      expect(sync).toMatchObject({ sender: "alice", after: sha });

      // A read-only user may clone but not push.
      const readOnly = join(dir, "ro");
      expect(
        (await g(["clone", "-q", host.git.url("demo", "shop", host.store.userToken("eve")), readOnly], dir))
          .code,
      ).toBe(0);
      await g(["commit", "-q", "--allow-empty", "-m", "nope"], readOnly);
      expect((await g(["push", "-q", "origin", "HEAD:refs/heads/eve"], readOnly)).code).not.toBe(0);
    } finally {
      await host.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("serves the store's contents, compare and merge through real git", async () => {
    const host = await startGitHost();
    try {
      host.store.addUser("alice", { permission: "admin" });
      await host.git.seedRepo("demo", "shop", { "README.md": "# shop\n" });
      const main = (await host.store.resolveRef("demo/shop", "main"))!;
      await host.store.createRef("demo/shop", "refs/heads/feature", main, "alice");
      await host.git.seedRepo("demo", "shop", { "src/x.js": "export const x = 1;\n" }, { branch: "feature" });
      const pull = await host.store.createPull("demo/shop", {
        title: "X",
        head: "feature",
        base: "main",
        author: "alice",
      });
      expect(pull.pull).toMatchObject({ mergeable: true, changedFiles: 1, additions: 1, commits: 1 });
      expect((await host.store.readFile("demo/shop", "src/x.js", "feature"))?.toString()).toContain("x = 1");
      expect((await host.store.listDirectory("demo/shop", "src", "feature"))?.map((e) => e.name)).toEqual([
        "x.js",
      ]);
      const merged = await host.store.mergePull("demo/shop", pull.number, { method: "squash" }, "alice");
      const commit = await host.store.getCommit("demo/shop", merged.sha);
      expect(commit?.message.split("\n")[0]).toBe(`X (#${pull.number})`);
      expect(commit?.parents).toEqual([main]);
      expect((await host.store.readFile("demo/shop", "src/x.js"))?.toString()).toContain("x = 1");
    } finally {
      await host.stop();
    }
  });
});
