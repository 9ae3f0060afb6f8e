/**
 * Installs the real agent CLIs the worker is tested against (test/worker/real-agents.test.ts): every preset whose
 * record installs its CLI from npm, at the record's pinned version (src/core/presets/<name>.ts), so the tests
 * run exactly what the worker template and `autopilot init` install. They go into cache folders outside the
 * project's dependencies: large native binaries and bundles the product itself does not need. Each preset has
 * its own folder, so adding or bumping one CLI never reinstalls (or rewrites) another.
 *
 *   npx tsx scripts/install-agent-clis.ts   (vitest's global setup runs it too: test/helpers/global-setup.ts)
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type CliInstall, installLine, PRESETS } from "../src/core/presets/index.js";

/** The folder holding every preset's folder. */
export const agentCliDir = join(import.meta.dirname, "..", "node_modules", ".cache", "agent-clis");

interface AgentCli {
  preset: string;
  install: CliInstall;
  dir: string;
}

/** The CLIs the tests run: the npm-installed presets (Aider is a Python program the npm registry lacks). */
export const AGENT_CLIS: readonly AgentCli[] = PRESETS.flatMap((preset) =>
  preset.install?.manager === "npm"
    ? [{ preset: preset.name, install: preset.install, dir: join(agentCliDir, preset.name) }]
    : [],
);

/** The path of a CLI's command, in the folder of the preset that provides it. */
export function agentCliBin(command: string): string {
  const cli = AGENT_CLIS.find((candidate) => candidate.install.command === command);
  if (!cli) throw new Error(`no npm-installed agent preset provides the command "${command}"`);
  return join(cli.dir, "node_modules", ".bin", command);
}

/** Every folder holding agent CLI commands, for PATH. */
export function agentCliBinDirs(): string[] {
  return AGENT_CLIS.map((cli) => join(cli.dir, "node_modules", ".bin"));
}

/** Whether a CLI is installed at its pinned version (a bumped pin is installed again). */
function installedAtPin(cli: AgentCli): boolean {
  const manifest = join(cli.dir, "node_modules", ...cli.install.package.split("/"), "package.json");
  if (!existsSync(agentCliBin(cli.install.command)) || !existsSync(manifest)) return false;
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version === cli.install.version;
}

export function agentClisInstalled(): boolean {
  return AGENT_CLIS.every(installedAtPin);
}

/** Runs one npm install into its preset's own folder; rejects with npm's exit status. */
function installOne(cli: AgentCli): Promise<void> {
  mkdirSync(cli.dir, { recursive: true });
  console.log(`installing ${cli.preset}: ${installLine(cli.install)} (into ${cli.dir})`);
  const npm = spawn(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-save",
      "--prefix",
      cli.dir,
      `${cli.install.package}@${cli.install.version}`,
    ],
    { stdio: "inherit" },
  );
  return new Promise((resolve, reject) => {
    npm.once("error", reject);
    npm.once("close", (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`npm install of ${cli.install.package} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

/**
 * Installs every CLI missing at its pin, all at once: each install mostly waits on the registry, and each has its
 * own folder (npm's shared download cache is safe for concurrent installs), so together they take about as long
 * as the slowest one rather than the sum.
 */
export async function ensureAgentClis(): Promise<void> {
  const results = await Promise.allSettled(AGENT_CLIS.filter((cli) => !installedAtPin(cli)).map(installOne));
  const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
  if (failures.length > 0)
    throw new Error(
      failures.map((failure) => (failure instanceof Error ? failure.message : String(failure))).join("; "),
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await ensureAgentClis();
  console.log(`agent CLIs ready in ${agentCliDir}`);
}
