/**
 * The task branch through the worker's real parts (boundary.ts, task-checkout.ts): the worker's repository moves
 * only refs and takes only objects; the agent's side, in its sandbox, moves the files and hands the work back.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runProcess } from "../../src/worker/processes/process.js";
import { FakeGitHub } from "./fakes.js";
import { cloneWorkspace, git, realDeps, remoteAndClone } from "./fixtures/real.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Deps = Awaited<ReturnType<typeof realDeps>>;

async function parts(files: Record<string, string>): Promise<{ deps: Deps; remote: string; root: string }> {
  const { root, remote, workspace } = await remoteAndClone(files);
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const deps = await realDeps(workspace, new FakeGitHub());
  cleanups.push(() => deps.boundary.close());
  return { deps, remote, root };
}

/** One agent turn: its command runs as the agent in its sandbox, and its work is handed back. */
async function agentDoes(deps: Deps, script: string): Promise<void> {
  await deps.boundary.handOver();
  try {
    const run = await runProcess({
      command: "/bin/sh",
      args: ["-c", script],
      cwd: deps.workTree,
      env: { PATH: "/usr/bin:/bin", HOME: "/tmp" },
      runAs: deps.boundary.user,
    });
    expect(run.exitCode, run.stderr).toBe(0);
  } finally {
    await deps.boundary.takeBack({ capture: true });
  }
}

describe("the task checkout", { timeout: 60_000 }, () => {
  it("creates the branch, commits only what the agent handed back, and never the excluded scratch", async () => {
    const { deps, remote } = await parts({ "README.md": "x\n" });
    expect((await deps.git.prepare()).sort()).toEqual(["http.https://github.com/.extraheader"]);
    const setup = await deps.git.setupBranch("autopilot/issue-7", "main");
    expect(setup.resumed).toBe(false);
    await deps.git.addExcludes([".autopilot/tmp/", "node_modules/"]);
    expect(await deps.git.commitAll("nothing")).toBeNull();

    await agentDoes(
      deps,
      "mkdir -p .autopilot/tmp node_modules && echo s > .autopilot/tmp/scratch.txt && echo m > node_modules/x.js && echo a > a.txt",
    );
    expect((await deps.git.workState()).changed).toBe(true);
    const sha = await deps.git.commitAll("add a");
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await deps.git.workState()).toEqual({ head: sha, changed: false, refused: [] });
    expect(await deps.git.commitAll("nothing new")).toBeNull();
    await deps.git.push("autopilot/issue-7");
    expect(git(remote, "ls-tree", "-r", "--name-only", "autopilot/issue-7")).toBe("README.md\na.txt");
    expect(await deps.git.changedPaths(setup.base)).toEqual(["a.txt"]);
    expect(await deps.git.countCommits(setup.base)).toBe(1);
  });

  it("tells new work apart from Autopilot's own notes, and commits the notes as the worker reads them", async () => {
    const { deps, remote } = await parts({ "README.md": "x\n" });
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");
    await agentDoes(deps, "mkdir -p .autopilot && echo notes > .autopilot/progress.md");
    expect((await deps.git.workState()).changed).toBe(false);
    // The worker appends its note after the hand-back: the commit carries it.
    await writeFile(join(deps.workTree, ".autopilot", "progress.md"), "notes\n- iteration 1\n");
    await deps.git.commitAll("notes");
    await deps.git.push("autopilot/issue-7");
    expect(git(remote, "show", "autopilot/issue-7:.autopilot/progress.md")).toBe("notes\n- iteration 1");
  });

  it("discards a run whose work is not kept (the reviewer's), its commits in the agent's .git included", async () => {
    const { deps } = await parts({ "README.md": "x\n" });
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");
    const head = await deps.git.headSha();
    await agentDoes(
      deps,
      "echo y > README.md && echo s > SCRIBBLE.md && git add -A && git -c user.name=r -c user.email=r@x commit -qm scribble && echo z > LOOSE.md",
    );
    expect((await deps.git.workState()).changed).toBe(true);
    await deps.git.discardWork();
    // Nothing of it is taken: no commit, no changed state, the files back to HEAD.
    expect(await deps.git.commitAll("after the review")).toBeNull();
    expect(await deps.git.workState()).toEqual({ head, changed: false, refused: [] });
    expect(await readFile(join(deps.workTree, "README.md"), "utf8")).toBe("x\n");
    expect(existsSync(join(deps.workTree, "SCRIBBLE.md"))).toBe(false);
    expect(existsSync(join(deps.workTree, "LOOSE.md"))).toBe(false);
    // The next agent starts from HEAD: its work is all the next commit holds.
    await agentDoes(deps, "echo a > a.txt");
    await deps.git.commitAll("the author's work");
    expect(await deps.git.changedPaths(head)).toEqual(["a.txt"]);
  });

  it("resumes the branch as the remote has it, files and all, and merges the default branch from objects", async () => {
    const { deps, remote, root } = await parts({ "README.md": "x\n", "gone.txt": "g\n" });
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");
    await agentDoes(deps, "echo a > a.txt && rm gone.txt");
    await deps.git.commitAll("a");
    await deps.git.push("autopilot/issue-7");
    // main moves on meanwhile.
    const other = await cloneWorkspace(root, remote, "other");
    await writeFile(join(other, "main.txt"), "from main\n");
    git(other, "add", "-A");
    git(other, "commit", "--quiet", "-m", "main moves on");
    git(other, "push", "--quiet", "origin", "main");

    const again = await cloneWorkspace(root, remote, "ws2");
    const second = await realDeps(again, new FakeGitHub());
    cleanups.push(() => second.boundary.close());
    await second.git.prepare();
    const setup = await second.git.setupBranch("autopilot/issue-7", "main");
    expect(setup.resumed).toBe(true);
    expect(await readFile(join(second.workTree, "a.txt"), "utf8")).toBe("a\n");
    expect(existsSync(join(second.workTree, "gone.txt"))).toBe(false);
    const merge = await second.git.mergeDefault("main", "merge main");
    expect(merge).toMatchObject({ merged: true, conflicts: [] });
    expect(await readFile(join(second.workTree, "main.txt"), "utf8")).toBe("from main\n");
    // The agent's own .git follows: a turn that changes nothing hands back nothing new.
    await agentDoes(second, "git status --short > /dev/null");
    expect((await second.git.workState()).changed).toBe(false);
  });

  it("brings files from a checkout at a commit no branch reaches to the task branch", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "x\n" });
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    // The checkout's own commit, on no ref the remote has: its files are what the agent's tree starts from.
    await writeFile(join(workspace, "local.txt"), "only here\n");
    git(workspace, "add", "-A");
    git(workspace, "commit", "--quiet", "-m", "local");
    const deps = await realDeps(workspace, new FakeGitHub());
    cleanups.push(() => deps.boundary.close());
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");
    expect(existsSync(join(deps.workTree, "local.txt"))).toBe(false);
    expect(await readFile(join(deps.workTree, "README.md"), "utf8")).toBe("x\n");
    await agentDoes(deps, "echo a > a.txt");
    expect((await deps.git.workState()).changed).toBe(true);
  });

  it("commits as the author set after it was made (the job learns its account with the claim)", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "x\n" });
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const { createIsolatedParts } = await import("../../src/worker/isolation/boundary.js");
    const { testAgentUser } = await import("./fixtures/real.js");
    const scratch = join(root, "worker");
    await mkdir(scratch);
    const isolated = await createIsolatedParts({
      workspace,
      workerDir: scratch,
      agentBase: root,
      user: await testAgentUser("namespace", [root]),
      parentEnv: process.env,
      secretValues: [],
      warn: () => {},
    });
    cleanups.push(() => isolated.boundary.close());
    isolated.setAuthor("autopilot-app[bot]", "41+autopilot-app[bot]@users.noreply.github.com");
    await isolated.git.prepare();
    await isolated.git.setupBranch("autopilot/issue-7", "main");
    await isolated.boundary.handOver();
    await writeFile(join(isolated.boundary.dirs.workTree, "a.txt"), "a");
    await isolated.boundary.takeBack({ capture: true });
    await isolated.git.commitAll("add a");
    expect(
      git(isolated.boundary.dirs.gitDir, "log", "-1", "--format=%an <%ae> / %cn <%ce>", "autopilot/issue-7"),
    ).toBe(
      "autopilot-app[bot] <41+autopilot-app[bot]@users.noreply.github.com> / autopilot-app[bot] <41+autopilot-app[bot]@users.noreply.github.com>",
    );
  });

  it("runs no hook the agent planted in its own repository or in the worker's", async () => {
    const { deps, root } = await parts({ "README.md": "x\n" });
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");
    const marker = join(root, "hook-ran");
    await agentDoes(
      deps,
      `for h in pre-commit post-commit post-index-change reference-transaction; do printf '#!/bin/sh\\ntouch ${marker}-$(id -u)\\n' > .git/hooks/$h; chmod +x .git/hooks/$h; done; echo a > a.txt`,
    );
    await deps.git.commitAll("a");
    await agentDoes(deps, "echo b > b.txt");
    await deps.git.commitAll("b");
    // Neither the worker (uid 0) nor the agent's side of git (hooks off: agent-side-git.ts) ran one.
    expect((await readdir(root)).filter((name) => name.startsWith("hook-ran"))).toEqual([]);
  });
});
