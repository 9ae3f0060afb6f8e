/**
 * `.github/autopilot.yml` for a scenario repository: the scenario's `repo.config` over the demo-agent defaults.
 */
import { stringify as stringifyYaml } from "yaml";
import { deepMerge, parseConfig, renderConfigError } from "../../src/core/config/index.js";
import { type Scenario, ScenarioError } from "./scenario-file.js";

/** Replaces `{demo_agent}` in every string of a config mapping (e.g. a fallback agent's command). */
function substituteDemoAgent(value: unknown, agentCommand: string): unknown {
  if (typeof value === "string") return value.replaceAll("{demo_agent}", agentCommand);
  if (Array.isArray(value)) return value.map((v) => substituteDemoAgent(v, agentCommand));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        substituteDemoAgent(v, agentCommand),
      ]),
    );
  return value;
}

/**
 * `.github/autopilot.yml` for a scenario: its mapping over the demo-agent defaults, or its text. In both,
 * `{demo_agent}` stands for the demo agent's command (`{demo_agent} --agent fallback` names a fallback).
 */
export function scenarioConfigText(scenario: Scenario, agentCommand: string): string {
  return repoConfigText(scenario.repo.config, agentCommand, "repo.config");
}

/** The same for one repository's `config` value; `where` names it in the error of a bad one. */
export function repoConfigText(
  config: Scenario["repo"]["config"],
  agentCommand: string,
  where: string,
): string {
  const text =
    typeof config === "string"
      ? config.replaceAll("{demo_agent}", agentCommand)
      : stringifyYaml(
          deepMerge(
            { agents: { primary: { preset: "custom", command: agentCommand } } },
            substituteDemoAgent(config as Record<string, unknown>, agentCommand) as Record<string, unknown>,
          ),
          { lineWidth: 0 },
        );
  const parsed = parseConfig(text);
  if (!parsed.ok)
    throw new ScenarioError(
      `Invalid scenario: ${where} is not a valid .github/autopilot.yml:\n${renderConfigError(parsed.error)}`,
    );
  return text;
}
