/**
 * The hand-over's short way (checkout/agent-objects.ts): after the worker's own commit, its new objects reach the
 * agent's `.git` as files the worker writes without following links, and no git runs there; anything the agent
 * planted in the way sends the hand-over the long way (the sync inside the sandbox), with nothing written outside.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { observeWorkerGit } from "../../src/worker/checkout/private-git.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { FakeGitHub } from "./fakes.js";
import { git, realDeps, remoteAndClone } from "./fixtures/real.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Deps = Awaited<ReturnType<typeof realDeps>>;

/** git over the agent's repository as the test's root (the agent's tree is another user's). */
function agentGit(workTree: string, ...args: string[]): string {
  return git(workTree, "-c", "safe.directory=*", ...args);
}

async function parts(): Promise<{ deps: Deps; remote: string }> {
  const { root, remote, workspace } = await remoteAndClone({ "README.md": "x\n" });
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const deps = await realDeps(workspace, new FakeGitHub());
  cleanups.push(() => deps.boundary.close());
  await deps.git.prepare();
  await deps.git.setupBranch("autopilot/issue-7", "main");
  return { deps, remote };
}

/** Runs `script` as the agent in its sandbox; with `capture`, its work is handed back. */
async function asAgent(deps: Deps, script: string, capture = true): Promise<void> {
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
    await deps.boundary.takeBack({ capture });
  }
}

/** The worker's git commands during a hand-over (a sync inside the sandbox starts with a bundle). */
async function handOverCalls(deps: Deps): Promise<string[]> {
  const calls: string[] = [];
  const stop = observeWorkerGit((call) => calls.push(call.args.join(" ")));
  try {
    await deps.boundary.handOver();
  } finally {
    stop();
    await deps.boundary.takeBack();
  }
  return calls;
}

/** One iteration: the agent writes a file, the worker writes its notes and commits. */
async function iteration(deps: Deps, n: number): Promise<string> {
  await asAgent(deps, `echo ${n} > file${n}.txt`);
  await mkdir(join(deps.workTree, ".autopilot"), { recursive: true });
  await writeFile(join(deps.workTree, ".autopilot", "progress.md"), `- iteration ${n}\n`);
  const sha = await deps.git.commitAll(`iteration ${n}`);
  expect(sha).toMatch(/^[0-9a-f]{40}$/);
  return sha!;
}

describe("the hand-over's short way", { timeout: 120_000 }, () => {
  it("brings the worker's commit into the agent's .git without running git there", async () => {
    const { deps, remote } = await parts();
    await asAgent(deps, "mkdir -p .autopilot && echo start > .autopilot/progress.md");
    await deps.git.commitAll("start");
    for (let n = 1; n <= 3; n++) {
      const sha = await iteration(deps, n);
      expect(await handOverCalls(deps)).toEqual([]);
      // The agent sees the worker's commit, notes and all, as its own HEAD.
      expect(agentGit(deps.workTree, "rev-parse", "HEAD")).toBe(sha);
      expect(agentGit(deps.workTree, "show", "HEAD:.autopilot/progress.md")).toBe(`- iteration ${n}`);
      expect(agentGit(deps.workTree, "fsck", "--no-dangling", "--connectivity-only")).toBe("");
    }
    await deps.git.push("autopilot/issue-7");
    expect(git(remote, "ls-tree", "-r", "--name-only", "autopilot/issue-7")).toBe(
      ".autopilot/progress.md\nREADME.md\nfile1.txt\nfile2.txt\nfile3.txt",
    );
  });

  it("the agent's first command after it, and a quality command, see a clean status", async () => {
    const { deps } = await parts();
    await asAgent(deps, "mkdir -p .autopilot && echo start > .autopilot/progress.md");
    await deps.git.commitAll("start");
    for (let n = 1; n <= 2; n++) {
      await iteration(deps, n);
      // The agent's status (its index refreshed in front of its command), then the work handed back again.
      await asAgent(deps, 'test -z "$(git status --porcelain)" || { git status --porcelain >&2; exit 1; }');
    }
    await iteration(deps, 3);
    const [quality] = await deps.quality.run(
      ["git diff --exit-code HEAD && git diff --cached --exit-code"],
      60_000,
    );
    expect(quality, quality?.output).toMatchObject({ passed: true });
  });

  it("takes the long way, writing nothing outside, when the agent put links where the objects go", async () => {
    const { deps } = await parts();
    const outside = await mkdtemp(join(tmpdir(), "autopilot-outside-"));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await chmod(outside, 0o777);
    await asAgent(deps, "mkdir -p .autopilot && echo start > .autopilot/progress.md");
    await deps.git.commitAll("start");
    // Every object directory not there yet, and the branch's ref directory, become links out of the tree.
    await asAgent(
      deps,
      [
        "for p in $(seq 0 255); do d=.git/objects/$(printf %02x $p); [ -e $d ] || ln -s OUT $d; done",
        "rm -rf .git/refs/heads/autopilot && ln -s OUT .git/refs/heads/autopilot",
      ]
        .join("\n")
        .replaceAll("OUT", outside),
      false,
    );
    const sha = await iteration(deps, 1);
    const calls = await handOverCalls(deps);
    expect(calls.some((call) => call.startsWith("bundle create"))).toBe(true);
    expect(await readdir(outside)).toEqual([]);
    // The work goes on: the next hand-back is taken and committed on top.
    expect(await iteration(deps, 2)).not.toBe(sha);
    expect(existsSync(join(outside, "issue-7"))).toBe(false);
  });

  it("takes the long way when the agent's HEAD is on another branch", async () => {
    const { deps } = await parts();
    await asAgent(deps, "git checkout -q -b elsewhere");
    const sha = await iteration(deps, 1);
    const calls = await handOverCalls(deps);
    expect(calls.some((call) => call.startsWith("bundle create"))).toBe(true);
    expect(agentGit(deps.workTree, "rev-parse", "HEAD")).toBe(sha);
    expect(agentGit(deps.workTree, "symbolic-ref", "HEAD")).toBe("refs/heads/autopilot/issue-7");
  });
});
