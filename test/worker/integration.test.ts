/**
 * The worker with real processes and real git against a local bare remote; only GitHub's API is faked.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerInputs } from "../../src/worker/worker-deps.js";
import { config, FakeGitHub } from "./fakes.js";
import { cloneWorkspace, git, realDeps, remoteAndClone, writeCounterAgent } from "./fixtures/real.js";

const repoRoot = join(import.meta.dirname, "..", "..");
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

function inputs(workspace: string, over: Partial<WorkerInputs> = {}): WorkerInputs {
  return {
    repo: "acme/widgets",
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-int",
    trackingIssue: null,
    workspace,
    defaultBranch: "main",
    ...over,
  };
}

function agentCommand(agent: string, root: string, doneAt: number, hangAt = 0): string {
  return `${process.execPath} ${agent} ${doneAt} ${hangAt} ${join(root, "hang.pid")} ${join(root, "spy.jsonl")} {prompt_file}`;
}

function spy(
  root: string,
): { count: number; headers: string; env: Record<string, string>; sawNotes: boolean }[] {
  return readFileSync(join(root, "spy.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

// Real processes, git and a second OS user on a loaded two-core machine: generous limits, no timing asserted.
describe("the worker against a real git remote", { timeout: 180_000 }, () => {
  it("runs a custom command agent that edits files and completes: commits pushed, quality gate run, PR opened", async () => {
    const { root, remote, workspace } = await remoteAndClone({
      "package.json": JSON.stringify({
        name: "demo",
        scripts: { test: "node -e \"require('fs').accessSync('counter.txt')\"" },
      }),
      "README.md": "# demo\n",
    });
    roots.push(root);
    const agent = await writeCounterAgent(root);
    const github = new FakeGitHub();
    const deps = await realDeps(workspace, github);
    const cfg = config({ agents: { primary: { preset: "custom", command: agentCommand(agent, root, 2) } } });

    const run = await runWorker(inputs(workspace), cfg, deps);

    expect(run.result.result).toBe("complete");
    expect(run.result.iterations).toBe(2);
    expect(run.quality.map((q) => [q.command, q.passed])).toEqual([["npm test", true]]);
    // The branch on the remote holds the agent's work and the progress notes.
    const remoteHead = git(remote, "rev-parse", "refs/heads/autopilot/issue-7");
    expect(run.result.headSha).toBe(remoteHead);
    expect(git(remote, "show", "autopilot/issue-7:counter.txt")).toBe("2");
    // The notes were kept on the branch while it worked, and set aside in the last commit, before review.
    expect(git(remote, "ls-tree", "-r", "--name-only", "autopilot/issue-7")).not.toContain(".autopilot");
    expect(git(remote, "log", "-1", "--format=%s", "autopilot/issue-7")).toContain(
      "set the progress notes aside",
    );
    const notes = git(remote, "show", "autopilot/issue-7~1:.autopilot/progress.md");
    expect(notes).toContain("iteration 1");
    expect(notes).toContain("iteration 2");
    expect(git(remote, "log", "--format=%an", "-1", "autopilot/issue-7")).toBe("autopilot[bot]");
    expect(run.result.commits).toBe(Number(git(remote, "rev-list", "--count", "main..autopilot/issue-7")));
    // One PR for the branch.
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]!.body).toContain("Closes #7");
    // The agent saw no credentials: neither the persisted checkout header nor the token.
    const seen = spy(root);
    expect(seen.every((s) => s.headers === "")).toBe(true);
    expect(seen.every((s) => !JSON.stringify(s.env).includes("ghs_must_not_leak"))).toBe(true);
    expect(git(workspace, "config", "--list")).not.toContain("extraheader");
    // The second iteration was told what the first did.
    expect(seen[1]!.sawNotes).toBe(true);
  });

  it("what the agent writes to its checkout's .git/config never reaches the worker's repository", async () => {
    const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const github = new FakeGitHub();
    const deps = await realDeps(workspace, github);
    const command =
      "test -f {prompt_file} && git config core.hooksPath /tmp/evil && git config url.https://evil.example/.insteadOf file:// && echo hi > a.txt && echo '<promise>COMPLETE</promise>'";
    const run = await runWorker(
      inputs(workspace),
      config({ agents: { primary: { preset: "custom", command } }, qualityCommands: ["true"] }),
      deps,
    );
    expect(run.result.result).toBe("complete");
    // The agent's own repository took the settings; the worker's private one, which pushed, did not.
    // (Read as a file: the agent's repository stays the agent's, and git refuses to read another user's.)
    expect(await readFile(join(deps.workTree, ".git", "config"), "utf8")).toContain("evil");
    expect(git(root, "--git-dir", deps.gitDir, "config", "--list")).not.toContain("evil");
    expect(git(remote, "show", "autopilot/issue-7:a.txt")).toBe("hi");
  });

  it("a task sent back after review resumes with its notes and the default branch merged in", async () => {
    const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const agent = await writeCounterAgent(root);
    const github = new FakeGitHub();
    const cfg = config({
      agents: { primary: { preset: "custom", command: agentCommand(agent, root, 1) } },
      qualityCommands: ["true"],
    });
    const first = await runWorker(inputs(workspace), cfg, await realDeps(workspace, github));
    expect(first.result.result).toBe("complete");

    // Another task lands on main meanwhile.
    const other = await cloneWorkspace(root, remote, "other");
    await writeFile(join(other, "README.md"), "# demo, improved\n");
    git(other, "commit", "--quiet", "-am", "other task");
    git(other, "push", "--quiet", "origin", "main");

    const second = await cloneWorkspace(root, remote, "ws2");
    const cfg2 = config({
      agents: { primary: { preset: "custom", command: agentCommand(agent, root, 2) } },
      qualityCommands: ["true"],
    });
    const run = await runWorker(
      inputs(second, { attempt: 2, dispatchId: "7-2-x" }),
      cfg2,
      await realDeps(second, github),
    );

    expect(run.result.result).toBe("complete");
    expect(run.warnings).toEqual([]);
    // The notes came back from the branch history, so the agent knew what round one did.
    expect(spy(root).at(-1)).toMatchObject({ count: 2, sawNotes: true });
    // main was merged in; the PR's diff is only the task's.
    expect(git(remote, "show", "autopilot/issue-7:README.md")).toBe("# demo, improved");
    expect(git(remote, "diff", "--name-only", "main...autopilot/issue-7").split("\n").sort()).toEqual([
      "counter.txt",
      "log.txt",
    ]);
    expect(github.pulls).toHaveLength(1);
  });

  it("tells the agent about a conflict with the default branch, and the agent's merge is kept", async () => {
    const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const github = new FakeGitHub();
    const write = "test -f {prompt_file} && echo branch > shared.txt && echo '<promise>COMPLETE</promise>'";
    await runWorker(
      inputs(workspace),
      config({ agents: { primary: { preset: "custom", command: write } }, qualityCommands: ["true"] }),
      await realDeps(workspace, github),
    );
    const other = await cloneWorkspace(root, remote, "other");
    await writeFile(join(other, "shared.txt"), "main\n");
    git(other, "add", "shared.txt");
    git(other, "commit", "--quiet", "-m", "conflicting task");
    git(other, "push", "--quiet", "origin", "main");

    const second = await cloneWorkspace(root, remote, "ws2");
    const promptCopy = join(root, "prompt-copy.md");
    const resolve = [
      `cp {prompt_file} ${promptCopy}`,
      "(git merge origin/main >/dev/null 2>&1 || (echo resolved > shared.txt && git add shared.txt && git commit --quiet --no-edit))",
      "echo '<promise>COMPLETE</promise>'",
    ].join(" && ");
    const run = await runWorker(
      inputs(second, { attempt: 2, dispatchId: "7-2-x" }),
      config({ agents: { primary: { preset: "custom", command: resolve } }, qualityCommands: ["true"] }),
      await realDeps(second, github),
    );

    expect(run.result.result).toBe("complete");
    const prompt = await readFile(promptCopy, "utf8");
    expect(prompt).toContain("merge with main");
    expect(prompt).toContain("- shared.txt");
    expect(git(remote, "show", "autopilot/issue-7:shared.txt")).toBe("resolved");
    // main is now an ancestor of the task branch: the PR merges cleanly.
    expect(() => git(remote, "merge-base", "--is-ancestor", "main", "autopilot/issue-7")).not.toThrow();
  });

  it("resumes after a killed run, losing at most the iteration that was running", async () => {
    const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const agent = await writeCounterAgent(root);
    const hangFile = join(root, "hang.pid");

    // First run: iterations 1 and 2 finish; iteration 3 writes its change and hangs; the job is killed.
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "fixtures", "worker-process.ts"),
        JSON.stringify({
          workspace,
          attempt: 1,
          dispatchId: "7-1-first",
          config: {
            agents: { primary: { preset: "custom", command: agentCommand(agent, root, 5, 3) } },
            qualityCommands: ["true"],
          },
        }),
      ],
      { cwd: repoRoot, stdio: "ignore" },
    );
    const deadline = Date.now() + 150_000;
    while (!existsSync(hangFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(hangFile)).toBe(true);
    // A runner that dies takes everything with it: the worker, and with it the agent's sandbox (bwrap's
    // --die-with-parent ends the sandbox's PID 1, and the kernel every process in it).
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    expect(git(remote, "show", "autopilot/issue-7:counter.txt")).toBe("2");

    // The next attempt starts from a fresh checkout and continues from the pushed branch.
    const second = await cloneWorkspace(root, remote, "ws2");
    const github = new FakeGitHub();
    const deps = await realDeps(second, github);
    const cfg = config({
      agents: { primary: { preset: "custom", command: agentCommand(agent, root, 5) } },
      qualityCommands: ["true"],
    });
    const run = await runWorker(inputs(second, { attempt: 2, dispatchId: "7-2-second" }), cfg, deps);

    expect(run.result.result).toBe("complete");
    expect(run.warnings).toEqual([]);
    expect(run.result.iterations).toBe(3);
    expect(git(remote, "show", "autopilot/issue-7:counter.txt")).toBe("5");
    // Runs 1 and 2 were kept; only run 3 (killed before its commit) was done again.
    expect(git(remote, "show", "autopilot/issue-7:log.txt").split("\n")).toEqual([
      "run 1",
      "run 2",
      "run 3",
      "run 4",
      "run 5",
    ]);
    const notes = git(remote, "show", "autopilot/issue-7~1:.autopilot/progress.md");
    expect(notes).toContain("attempt 1, iteration 2");
    expect(notes).toContain("attempt 2, iteration 1");
  }, 300_000);
});
