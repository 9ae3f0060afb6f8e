/**
 * Installs the real agent CLIs the worker is tested against (test/worker/real-agents.test.ts): every preset whose
 * record installs its CLI from npm, at the record's pinned version (src/core/presets/<name>.ts), so the tests
 * run exactly what the worker template and `autopilot init` install. They go into cache folders outside the
 * project's dependencies: large native binaries and bundles the product itself does not need. Each preset has
 * its own folder, so adding or bumping one CLI never reinstalls (or rewrites) another.
 *
 *   npx tsx scripts/install-agent-clis.ts   (vitest's global setup runs it too: test/helpers/global-setup.ts)
 */
import { execFileSync } from "node:child_process";
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

export function ensureAgentClis(): void {
  for (const cli of AGENT_CLIS) {
    if (installedAtPin(cli)) continue;
    mkdirSync(cli.dir, { recursive: true });
    console.log(`installing ${cli.preset}: ${installLine(cli.install)} (into ${cli.dir})`);
    execFileSync(
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
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensureAgentClis();
  console.log(`agent CLIs ready in ${agentCliDir}`);
}
