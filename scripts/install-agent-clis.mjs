// Installs the real agent CLIs (Claude Code, Codex, Gemini CLI, OpenCode) that the worker is tested against,
// into cache folders outside the project's dependencies: they are large native binaries and bundles the product
// itself does not need. Each group has its own folder, so adding a CLI never reinstalls (or rewrites) another.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const cacheDir = join(import.meta.dirname, "..", "node_modules", ".cache");

/** Folder → pinned packages → the binaries they provide. */
export const AGENT_CLI_GROUPS = [
  {
    dir: join(cacheDir, "agent-clis"),
    versions: { "@anthropic-ai/claude-code": "2.1.330", "@openai/codex": "0.169.0" },
    bins: ["claude", "codex"],
  },
  {
    dir: join(cacheDir, "agent-clis-more"),
    versions: { "@google/gemini-cli": "0.61.0", "opencode-ai": "1.18.33" },
    bins: ["gemini", "opencode"],
  },
];

export const AGENT_CLI_VERSIONS = Object.assign({}, ...AGENT_CLI_GROUPS.map((group) => group.versions));
/** The first group's folder (kept for callers that knew only one). */
export const agentCliDir = AGENT_CLI_GROUPS[0].dir;

/** The path of a CLI's binary, in whichever group provides it. */
export function agentCliBin(name) {
  const group = AGENT_CLI_GROUPS.find((g) => g.bins.includes(name)) ?? AGENT_CLI_GROUPS[0];
  return join(group.dir, "node_modules", ".bin", name);
}

/** Every folder holding agent CLI binaries, for PATH. */
export function agentCliBinDirs() {
  return AGENT_CLI_GROUPS.map((group) => join(group.dir, "node_modules", ".bin"));
}

export function agentClisInstalled() {
  return AGENT_CLI_GROUPS.every((group) => group.bins.every((bin) => existsSync(agentCliBin(bin))));
}

export function ensureAgentClis() {
  for (const group of AGENT_CLI_GROUPS) {
    if (group.bins.every((bin) => existsSync(agentCliBin(bin)))) continue;
    mkdirSync(group.dir, { recursive: true });
    const specs = Object.entries(group.versions).map(([name, version]) => `${name}@${version}`);
    execFileSync(
      "npm",
      ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", group.dir, ...specs],
      { stdio: "inherit" },
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureAgentClis();
  console.log(`agent CLIs ready in ${AGENT_CLI_GROUPS.map((group) => group.dir).join(", ")}`);
}
