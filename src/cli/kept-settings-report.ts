/**
 * What `autopilot init` says about a `.github/autopilot.yml` that is already there and differs from what it would
 * write: the file is the team's own and is kept byte for byte (src/core/setup-files.ts planFiles); what this
 * version offers is reported instead, for the team to add by hand.
 */
import { parse as parseYaml } from "yaml";
import { DEFAULT_CONFIG } from "../core/config/index.js";
import { settingsNotSet } from "../core/config/unset-settings.js";

/** The indented lines under init's `kept` line: the settings init now writes and the defaults the file leaves. */
export function keptSettingsReport(current: string, initWouldWrite: string): string[] {
  let written: unknown;
  try {
    written = parseYaml(current);
  } catch (error) {
    return [
      `it is not valid YAML (${(error as Error).message.split("\n")[0]}): fix it by hand; \`autopilot doctor\` names the problem`,
    ];
  }
  const lines: string[] = [];
  const offered = settingsNotSet(written, parseYaml(initWouldWrite));
  if (offered.length)
    lines.push(
      `new settings available in this version (init writes them in a new file; add them by hand if you want them): ${offered.join(", ")}`,
    );
  const defaults = settingsNotSet(written, DEFAULT_CONFIG).filter((key) => !offered.includes(key));
  if (defaults.length) lines.push(`left at their defaults (docs/CONFIGURATION.md): ${defaults.join(", ")}`);
  return lines;
}
