/**
 * Red team, the project's setup: an agent-added `postinstall` runs on the next job's install. The install is
 * the worker's `setup:` step, run for real with npm inside the worker's boundary: the script runs as the
 * agent's user, sees no token and cannot read the worker's environment; a setup that fails ends the job
 * before any agent runs.
 */
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerInputs } from "../../src/worker/worker-deps.js";
import { config, FakeGitHub } from "../worker/fakes.js";
import { realDeps, remoteAndClone } from "../worker/fixtures/real.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const inputs = (workspace: string): WorkerInputs => ({
  repo: "acme/widgets",
  issue: 7,
  attempt: 1,
  dispatchId: "7-1-setup",
  trackingIssue: null,
  workspace,
  defaultBranch: "main",
});

// What a hostile postinstall tries: the token in its environment, and the worker's own environment in /proc.
const PROBE = `
const fs = require("node:fs");
let workerEnviron = "refused";
try { workerEnviron = fs.readFileSync("/proc/" + process.argv[2] + "/environ", "utf8"); } catch (e) { workerEnviron = "refused: " + e.code; }
fs.mkdirSync("node_modules", { recursive: true });
fs.writeFileSync("node_modules/probe.json", JSON.stringify({
  uid: process.getuid(),
  tokenInEnv: JSON.stringify(process.env).includes("ghs_must_not_leak"),
  workerEnviron: workerEnviron.slice(0, 40),
}));
`;

describe("the project's setup runs inside the worker's boundary", { timeout: 180_000 }, () => {
  it("runs an install's postinstall as the agent's user, without the token, before the first iteration", async () => {
    const { root, workspace } = await remoteAndClone({
      "package.json": JSON.stringify({
        name: "demo",
        version: "1.0.0",
        scripts: { postinstall: `node probe.cjs ${process.pid}` },
      }),
      "probe.cjs": PROBE,
    });
    roots.push(root);
    const deps = await realDeps(workspace, new FakeGitHub());
    const agent = "test -f node_modules/probe.json && echo '<promise>COMPLETE</promise>'";
    const run = await runWorker(
      inputs(workspace),
      config({
        setup: ["npm install --offline --no-audit --no-fund"],
        agents: { primary: { preset: "custom", command: agent } },
        qualityCommands: ["true"],
      }),
      deps,
    );
    // The agent found what the setup installed (so it ran first), and the job completed.
    expect(run.result.result).toBe("complete");
    const probe = JSON.parse(readFileSync(join(deps.workTree, "node_modules", "probe.json"), "utf8"));
    expect(probe.uid).not.toBe(process.getuid!());
    expect(probe.tokenInEnv).toBe(false);
    expect(probe.workerEnviron).toMatch(/^refused/);
  });

  it("ends the job with the failing command named, and no agent runs", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const deps = await realDeps(workspace, new FakeGitHub());
    const run = await runWorker(
      inputs(workspace),
      config({
        setup: ["true", "exit 3", "touch never-ran"],
        agents: {
          primary: { preset: "custom", command: "touch agent-ran; echo '<promise>COMPLETE</promise>'" },
        },
        qualityCommands: ["true"],
      }),
      deps,
    );
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toContain("project setup failed: `exit 3` failed (exit code 3)");
    expect(run.result.reason).toContain("`setup` of .github/autopilot.yml");
    expect(run.result.iterations).toBe(0);
  });
});
