// Installs the real agent CLIs (Claude Code, Codex) that the worker is tested against, into a cache folder
// outside the project's dependencies: they are large native binaries the product itself does not need.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export const AGENT_CLI_VERSIONS = { "@anthropic-ai/claude-code": "2.1.330", "@openai/codex": "0.169.0" };
export const agentCliDir = join(import.meta.dirname, "..", "node_modules", ".cache", "agent-clis");

export function agentCliBin(name) {
  return join(agentCliDir, "node_modules", ".bin", name);
}

export function ensureAgentClis() {
  if (existsSync(agentCliBin("claude")) && existsSync(agentCliBin("codex"))) return;
  mkdirSync(agentCliDir, { recursive: true });
  const specs = Object.entries(AGENT_CLI_VERSIONS).map(([name, version]) => `${name}@${version}`);
  execFileSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", agentCliDir, ...specs],
    {
      stdio: "inherit",
    },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureAgentClis();
  console.log(`agent CLIs ready in ${agentCliDir}`);
}
