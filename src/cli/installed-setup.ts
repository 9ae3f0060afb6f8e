/**
 * What an earlier `autopilot init` left in a checkout that a later run should keep choosing: the controller's mode
 * (a worker workflow without the controller's is `app`) and the agent `.github/autopilot.yml` names. Without them
 * an upgrade taking the defaults would turn a hosted setup into an Actions one, or a codex worker into claude-code.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { isPresetName, type PresetName } from "../core/presets/index.js";
import type { InstallMode } from "../core/setup-files.js";

const WORKER = ".github/workflows/autopilot-worker.yml";
const CONTROLLER = ".github/workflows/autopilot-controller.yml";
const SETTINGS = ".github/autopilot.yml";

interface InstalledSetup {
  mode: InstallMode | null;
  agent: PresetName | null;
}

export function readInstalledSetup(dir: string): InstalledSetup {
  const worker = existsSync(join(dir, WORKER));
  const controller = existsSync(join(dir, CONTROLLER));
  const mode: InstallMode | null = controller ? "actions" : worker ? "app" : null;
  return { mode, agent: configuredAgent(join(dir, SETTINGS)) };
}

/** `agents.primary.preset` of the settings file; null when it is absent, unreadable, or names no preset. */
function configuredAgent(path: string): PresetName | null {
  if (!existsSync(path)) return null;
  try {
    const preset = (parseYaml(readFileSync(path, "utf8")) as { agents?: { primary?: { preset?: unknown } } })
      ?.agents?.primary?.preset;
    return typeof preset === "string" && isPresetName(preset) ? preset : null;
  } catch {
    return null;
  }
}
