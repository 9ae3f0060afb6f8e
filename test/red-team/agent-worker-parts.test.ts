/**
 * Red team, the agent's side, unit level: attacks that need a precise setup the end-to-end run cannot give
 * (the agent told the exact path of the worker's private directory, a world-writable directory early on the
 * worker's PATH, a link planted where the worker writes its notes) or that are about the worker's own input
 * and log handling rather than the agent's process.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { UNISOLATED_AGENT_ACCESS } from "../../src/core/tasks/worker-result.js";
import { applyWorkerOverrides } from "../../src/worker/settings/config-input.js";
import { Git, resolveGit } from "../../src/worker/checkout/private-git.js";
import { safeLogText } from "../../src/worker/log-text.js";
import { runWorker } from "../../src/worker/job/job.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { readTreeFile, UnsafeTreePathError, writeTreeFile } from "../../src/worker/checkout/tree-files.js";
import { config, FakeGitHub, harness } from "../worker/fakes.js";
import { realDeps, remoteAndClone } from "../worker/fixtures/real.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autopilot-red-unit-"));
  roots.push(dir);
  return dir;
}

describe("the worker's private directory, attacked by the agent's user knowing its exact path", {
  timeout: 120_000,
}, () => {
  it("cannot be listed, read or written, nor can the worker's git config or repository", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const deps = await realDeps(workspace, new FakeGitHub());
    await deps.git.prepare();
    const workerDir = join(deps.gitDir, "..");
    const attempts = [
      `ls ${workerDir}`,
      `cat ${deps.gitDir}/config`,
      `cat ${workerDir}/git/gitconfig`,
      `echo '[url "http://127.0.0.1:9/"]' >> ${deps.gitDir}/config`,
      `echo '[url "http://127.0.0.1:9/"]' >> ${workerDir}/git/gitconfig`,
      `mkdir -p ${deps.gitDir}/refs/replace && echo x > ${deps.gitDir}/refs/replace/x`,
      `echo x > ${deps.gitDir}/hooks/pre-push`,
      `echo '* -diff' > ${deps.gitDir}/info/attributes`,
    ];
    await deps.boundary.handOver();
    try {
      for (const attempt of attempts) {
        const result = await runProcess({
          command: "/bin/sh",
          args: ["-c", attempt],
          cwd: deps.workTree,
          env: { PATH: "/usr/bin:/bin" },
          runAs: deps.boundary.user,
        });
        expect(result.exitCode, attempt).not.toBe(0);
        expect(result.stderr, attempt).toMatch(/Permission denied/);
      }
    } finally {
      await deps.boundary.takeBack();
    }
    expect(await readFile(join(deps.gitDir, "config"), "utf8")).not.toContain("127.0.0.1");
    expect(existsSync(join(deps.gitDir, "refs", "replace", "x"))).toBe(false);
  });
});

describe("git planted on the worker's PATH or in the work tree", () => {
  it("is never run: git is resolved by absolute path before the agent starts, from no directory others can write", async () => {
    const dir = await scratch();
    const writable = join(dir, "writable-bin");
    await mkdir(writable);
    await chmod(writable, 0o1777);
    const marker = join(dir, "planted-ran");
    const planted = `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/git "$@"\n`;
    const worker = new Git({
      gitDir: dir,
      stateDir: join(dir, "state"),
      parentEnv: { PATH: `.:${writable}:/usr/bin:/bin`, HOME: dir },
    });
    // The agent plants a git after the worker started, early on its PATH and in the directory git runs in.
    await writeFile(join(writable, "git"), planted, { mode: 0o755 });
    await writeFile(join(dir, "git"), planted, { mode: 0o755 });
    await worker.run(["--version"]);
    expect(existsSync(marker)).toBe(false);
    // Even planted before the worker started, it is not the one resolved: its directory is world-writable.
    expect(resolveGit(`.:${writable}:/usr/bin:/bin`)).toMatch(/^\/(usr\/)?bin\/git$/);
    expect(resolveGit(".:relative/bin")).toMatch(/^\/(usr\/)?(local\/)?bin\/git$/);
  });
});

describe("links the agent plants where the worker reads and writes its notes", () => {
  it("are refused: the worker neither reads through them (a path to its own environ) nor writes through them", async () => {
    const dir = await scratch();
    const tree = join(dir, "tree");
    await mkdir(join(tree, ".autopilot"), { recursive: true });
    const outside = join(dir, "worker-file");
    await writeFile(outside, "WORKER SECRET\n");
    await symlink(outside, join(tree, ".autopilot", "progress.md"));
    await expect(readTreeFile(tree, ".autopilot/progress.md")).rejects.toBeInstanceOf(UnsafeTreePathError);
    await expect(writeTreeFile(tree, ".autopilot/progress.md", "x", { append: true })).rejects.toThrow();
    expect(await readFile(outside, "utf8")).toBe("WORKER SECRET\n");

    // A linked directory on the way is refused the same.
    const other = join(dir, "tree2");
    await mkdir(other);
    await symlink("/proc/self", join(other, ".autopilot"));
    await expect(readTreeFile(other, ".autopilot/environ")).rejects.toBeInstanceOf(UnsafeTreePathError);
  });
});

describe("the worker's `config` input", () => {
  it.each([
    "agents",
    "humanGate",
    "isolation",
    "qualityCommands",
    "setup",
    "setupTimeoutMinutes",
    "branchPrefix",
  ])("refuses %s with an error naming the key and where to set it", (key) => {
    const result = applyWorkerOverrides(DEFAULT_CONFIG, JSON.stringify({ [key]: {} }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(`\`${key}\` cannot be overridden per job`);
    expect(result.error.message).toContain(".github/autopilot.yml on the default branch");
  });

  it("accepts the controller's safe keys", () => {
    const result = applyWorkerOverrides(
      DEFAULT_CONFIG,
      JSON.stringify({ maxParallel: 3, dryRun: true, labels: { ready: "go" } }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.maxParallel).toBe(3);
    expect(result.config.dryRun).toBe(true);
    expect(result.config.labels.ready).toBe("go");
    // A hostile custom agent command cannot come in through a nested key of an allowed one either.
    expect(applyWorkerOverrides(DEFAULT_CONFIG, '{"labels":{"ready":{"x":1}}}').ok).toBe(false);
  });
});

describe("text from GitHub or the agent on its way to the job log", () => {
  it("cannot start a workflow command, whatever line it hides it on", () => {
    const hostile = [
      "::add-mask::ghs_x",
      "fine\n::set-output name=result::complete",
      "fine\r::stop-commands::abc",
      "  ::error::indented",
      "##[error]old form",
      "a%0A::warning::encoded newline stays text",
    ].join("\n");
    const safe = safeLogText(hostile);
    for (const line of safe.split("\n")) expect(line).not.toMatch(/^\s*(::|##\[)/);
    expect(safe).toContain("› ::add-mask::ghs_x");
    expect(safe).toContain("a%0A::warning::encoded newline stays text");
  });

  it("is capped", () => {
    expect(safeLogText("x".repeat(100_000)).length).toBeLessThan(5_000);
  });
});

describe("isolation: none", () => {
  it("is stated in the worker's result, in one line", async () => {
    const h = await harness([{ message: "All done.\n\n<promise>COMPLETE</promise>" }]);
    const run = await runWorker(h.inputs, config({ isolation: "none" }), h.deps);
    expect(run.result.agentAccess).toBe(UNISOLATED_AGENT_ACCESS);
    expect(UNISOLATED_AGENT_ACCESS).not.toContain("\n");
    const isolated = await runWorker(h.inputs, config(), (await harness([{ message: "x" }])).deps);
    expect(isolated.result.agentAccess).toBeUndefined();
  });
});
