/**
 * Location does not matter, and what cannot be reached is named at once: an agent command in a directory only root
 * may enter runs (the sandbox opens it), and one its user cannot read fails the job before the agent runs,
 * naming the path and why — not "agent exited with code 1" three times over.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerInputs } from "../../src/worker/worker-deps.js";
import { config, FakeGitHub } from "./fakes.js";
import { realDeps, remoteAndClone } from "./fixtures/real.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

function inputs(workspace: string): WorkerInputs {
  return {
    repo: "acme/widgets",
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-reach",
    trackingIssue: null,
    workspace,
    defaultBranch: "main",
  };
}

describe("the agent's command, wherever it lives", { timeout: 120_000 }, () => {
  it("runs from a checkout inside a directory only root may enter", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const locked = await mkdtemp(join(tmpdir(), "autopilot-locked-"));
    roots.push(locked);
    await chmod(locked, 0o700);
    const scripts = join(locked, "checkout", "scripts");
    await mkdir(scripts, { recursive: true });
    const agent = join(scripts, "agent.sh");
    await writeFile(agent, "#!/bin/sh\necho hi > a.txt\necho '<promise>COMPLETE</promise>'\n", {
      mode: 0o755,
    });
    const deps = await realDeps(workspace, new FakeGitHub());
    const run = await runWorker(
      inputs(workspace),
      config({
        agents: { primary: { preset: "custom", command: `/bin/sh ${agent}` } },
        qualityCommands: ["true"],
      }),
      deps,
    );
    expect(run.result.result).toBe("complete");
  });

  it("fails the job at once, naming the path and why, when the agent's user cannot read its command", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const tools = join(root, "tools");
    await mkdir(tools);
    await chmod(tools, 0o755);
    const agent = join(tools, "agent.sh");
    await writeFile(agent, "#!/bin/sh\necho '<promise>COMPLETE</promise>'\n", { mode: 0o600 });
    await chmod(agent, 0o600);
    const deps = await realDeps(workspace, new FakeGitHub());
    const run = await runWorker(
      inputs(workspace),
      config({
        agents: { primary: { preset: "custom", command: `/bin/sh ${agent}` } },
        qualityCommands: ["true"],
      }),
      deps,
    );
    expect(run.result.result).toBe("failed");
    expect(run.result.iterations).toBeLessThanOrEqual(1);
    const text = JSON.stringify(run);
    expect(text).toContain(agent);
    expect(text).toContain("not readable by that user (mode 600");
  });
});
