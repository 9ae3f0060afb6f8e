/**
 * `.github/autopilot.yml` for a scenario repository: the scenario's `repo.config` over the demo-agent defaults.
 */
import { stringify as stringifyYaml } from "yaml";
import { parseConfig, renderConfigError } from "../../core/config/index.js";
import { type Scenario, ScenarioError } from "./scenario-file.js";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The scenario's config mapping over the defaults: nested mappings merge, anything else (lists too) replaces. */
function mergeOverDefaults(
  defaults: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? mergeOverDefaults(current, value) : value;
  }
  return out;
}

/** Replaces `{demo_agent}` in every string of a config mapping (e.g. a fallback agent's command). */
function substituteDemoAgent(value: unknown, agentCommand: string): unknown {
  if (typeof value === "string") return value.replaceAll("{demo_agent}", agentCommand);
  if (Array.isArray(value)) return value.map((v) => substituteDemoAgent(v, agentCommand));
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substituteDemoAgent(v, agentCommand)]),
    );
  return value;
}

/**
 * `.github/autopilot.yml` for a scenario: its mapping over the demo-agent defaults, or its text. In both,
 * `{demo_agent}` stands for the demo agent's command (`{demo_agent} --agent fallback` names a fallback).
 */
export function scenarioConfigText(scenario: Scenario, agentCommand: string): string {
  const config = scenario.repo.config;
  const text =
    typeof config === "string"
      ? config.replaceAll("{demo_agent}", agentCommand)
      : stringifyYaml(
          mergeOverDefaults(
            { agents: { primary: { preset: "custom", command: agentCommand } } },
            substituteDemoAgent(config as Record<string, unknown>, agentCommand) as Record<string, unknown>,
          ),
          { lineWidth: 0 },
        );
  const parsed = parseConfig(text);
  if (!parsed.ok)
    throw new ScenarioError(
      `Invalid scenario: repo.config is not a valid .github/autopilot.yml:\n${renderConfigError(parsed.error)}`,
    );
  return text;
}
