/**
 * The registry of agent presets: the one list every other list is derived from — the configuration's `preset`
 * enum and its default, the model keys no other preset receives, the egress allow-list's model APIs, the price
 * table, `autopilot init`'s install line and key, the CLIs the real-CLI tests install. Adding a preset is its
 * record (`<name>.ts`, with `definePreset`) and one line here (docs/WORKER.md, "Adding a preset").
 */
import { aider } from "./aider.js";
import { claudeCode } from "./claude-code.js";
import { codex } from "./codex.js";
import { custom } from "./custom.js";
import { gemini } from "./gemini.js";
import { opencode } from "./opencode.js";
import type { AgentPreset } from "./preset-types.js";

/** Every preset, in the order the configuration reference and `init` list them. */
const PRESET_LIST = [claudeCode, codex, aider, opencode, gemini, custom] as const;

export type PresetName = (typeof PRESET_LIST)[number]["name"];

/** The presets' names (the configuration's `preset` enum). */
export const PRESET_NAMES = PRESET_LIST.map((preset) => preset.name) as [PresetName, ...PresetName[]];

/** The preset an agent without `preset` runs and `init` offers first. */
export const DEFAULT_PRESET: PresetName = claudeCode.name;

export const PRESETS: readonly AgentPreset[] = PRESET_LIST;

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

export function getPreset(name: string): AgentPreset {
  const preset = PRESETS.find((candidate) => candidate.name === name);
  if (!preset) throw new Error(`unknown agent preset "${name}" (expected one of ${PRESET_NAMES.join(", ")})`);
  return preset;
}

/** Every model key any preset may receive: none of them reaches a preset it does not belong to. */
export const ALL_MODEL_KEYS: readonly string[] = [...new Set(PRESETS.flatMap((preset) => preset.keyEnv))];

export type { AgentOutput, CliInstall, ModelPrice } from "./preset-types.js";
export { installLine, unpinnedInstallLine } from "./preset-types.js";
