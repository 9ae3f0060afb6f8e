/** What the worker tells people when an agent cannot start, authenticate or pay: the failure and its fix. */
import type { AgentConfig } from "../../core/config/index.js";
import { getPreset, installLine } from "../../core/presets/index.js";

export function spawnFailureText(agent: AgentConfig, error: string): string {
  // The pinned line the worker template and `autopilot init` write: the version the worker is tested with.
  const cli = getPreset(agent.preset).install;
  const install = cli ? installLine(cli) : null;
  return `the ${agent.preset} agent could not be started (${error})${
    install ? `: install it in the worker workflow before the Autopilot step (\`${install}\`)` : ""
  }`;
}

export function authFailureText(agent: AgentConfig, evidence: string | undefined): string {
  const keys = getPreset(agent.preset).keyEnv;
  const fix = keys.length
    ? `set the ${keys[0]} secret and pass it to the worker step's env (and list it in agents.*.env if the agent needs more)`
    : "give the agent the credentials it needs through agents.*.env";
  return `the ${agent.preset} agent could not authenticate${evidence ? ` (${evidence.slice(0, 200)})` : ""}: ${fix}`;
}

export function quotaFailureText(agent: AgentConfig, evidence: string | undefined): string {
  const keys = getPreset(agent.preset).keyEnv;
  return `the ${agent.preset} agent's account is out of quota or credit${
    evidence ? ` (${evidence.slice(0, 200)})` : ""
  }: add credit or raise the quota of the account behind ${keys[0] ?? "its key"}, or configure a fallback agent`;
}
