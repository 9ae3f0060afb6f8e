/**
 * The hand-over gives the agent's user what the worker wrote into the work tree since the agent last had it
 * (src/worker/checkout/tree-writes.ts): the files a merge of the default branch brought (moved by the agent's side
 * of git), and the files it wrote itself (the progress notes). Each is tried for real: the worker writes as root, then the agent, in its namespace sandbox as its own
 * uid, must be able to change what was written.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIsolatedParts, type IsolatedParts } from "../../src/worker/isolation/boundary.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { writeTreeFile } from "../../src/worker/checkout/tree-files.js";
import { git, remoteAndClone, testAgentUser } from "./fixtures/real.js";

let root: string;
let remote: string;
let scratch: string;
let parts: IsolatedParts;

/** One agent run: `script` in the agent's work tree, in its sandbox, between a hand-over and a take-back. */
async function agentRuns(script: string): Promise<{ code: number | null; err: string }> {
  await parts.boundary.handOver();
  try {
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", script],
      cwd: parts.boundary.dirs.workTree,
      env: { PATH: "/usr/bin:/bin" },
      runAs: parts.boundary.user,
      timeoutMs: 30_000,
    });
    return { code: result.exitCode, err: result.stderr.trim() };
  } finally {
    await parts.boundary.takeBack();
  }
}

beforeAll(async () => {
  const made = await remoteAndClone({ "README.md": "hello\n" });
  root = made.root;
  remote = made.remote;
  scratch = await mkdtemp(join(tmpdir(), "autopilot-handover-"));
  parts = await createIsolatedParts({
    workspace: made.workspace,
    workerDir: scratch,
    agentBase: root,
    user: await testAgentUser("namespace"),
    parentEnv: process.env,
    secretValues: [],
    warn: () => {},
  });
  await parts.git.prepare();
  await parts.git.setupBranch("autopilot/issue-1", "main");
  // The first hand-over gives the whole tree; what follows is what changes hands at each later one.
  expect((await agentRuns("echo agent >> README.md")).code).toBe(0);
  await parts.git.commitAll("agent: readme");
}, 60_000);

afterAll(async () => {
  await parts?.boundary.close();
  await rm(scratch, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
});

describe("the hand-over after the worker wrote into the tree", { timeout: 60_000 }, () => {
  it("lets the agent change the files a merge of the default branch brought", async () => {
    const seed = join(root, "seed");
    await writeFile(join(seed, "merged.txt"), "from main\n");
    git(seed, "add", "-A");
    git(seed, "commit", "--quiet", "-m", "main moves on");
    git(seed, "push", "--quiet", remote, "main");
    await parts.git.repository.fetchBranch("main");
    const merge = await parts.git.mergeDefault("main", "merge main");
    expect(merge.merged).toBe(true);

    const run = await agentRuns("echo agent >> merged.txt && rm merged.txt && echo again > merged.txt");
    expect(run).toEqual({ code: 0, err: "" });
  });

  it("lets the agent change a file, and a directory, the worker wrote itself (the progress notes)", async () => {
    await writeTreeFile(parts.boundary.dirs.workTree, ".autopilot/notes/progress.md", "- iteration 1\n");

    const run = await agentRuns(
      "echo agent >> .autopilot/notes/progress.md && echo mine > .autopilot/notes/agent.md && " +
        "rm .autopilot/notes/progress.md",
    );
    expect(run).toEqual({ code: 0, err: "" });
  });

  it("lets the agent change a file the worker appended to after it had it", async () => {
    await writeTreeFile(parts.boundary.dirs.workTree, "appended.md", "worker\n");
    expect((await agentRuns("echo agent >> appended.md")).code).toBe(0);
    await writeTreeFile(parts.boundary.dirs.workTree, "appended.md", "worker again\n", { append: true });

    expect(await agentRuns("echo agent again >> appended.md && rm appended.md")).toEqual({
      code: 0,
      err: "",
    });
  });
});
