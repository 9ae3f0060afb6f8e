/** The agent presets by name. */
import { aider } from "./aider.js";
import { claudeCode } from "./claude-code.js";
import { codex } from "./codex.js";
import { custom } from "./custom.js";
import { gemini } from "./gemini.js";
import { opencode } from "./opencode.js";
import type { AgentPreset, PresetName } from "./types.js";

export const PRESETS: Record<PresetName, AgentPreset> = {
  "claude-code": claudeCode,
  codex,
  aider,
  opencode,
  gemini,
  custom,
};

export function getPreset(name: string): AgentPreset {
  const preset = (PRESETS as Record<string, AgentPreset | undefined>)[name];
  if (!preset)
    throw new Error(`unknown agent preset "${name}" (expected one of ${Object.keys(PRESETS).join(", ")})`);
  return preset;
}

/** Every model key any preset may receive: none of them reaches a preset it does not belong to. */
export const ALL_MODEL_KEYS: readonly string[] = [
  ...new Set(Object.values(PRESETS).flatMap((p) => p.keyEnv)),
];

export type { AgentPreset, PresetName } from "./types.js";
