/**
 * What keeps a checkout's action pins current, as `autopilot init` finds it: its own Dependabot configuration
 * (with or without GitHub Actions updates), a Renovate configuration (whose `github-actions` manager is on by
 * default and moves a SHA pin with its version comment, https://docs.renovatebot.com/modules/manager/github-actions/),
 * or nothing, when init offers `.github/dependabot.yml` (src/core/dependabot-file.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEPENDABOT_PATH,
  dependabotUpdatesActions,
  RENOVATE_PATHS,
  renderDependabotFile,
} from "../core/dependabot-file.js";

type PinUpdates =
  | { kind: "none" }
  /** `ours`: the file is what init writes (init then reports it unchanged). */
  | { kind: "dependabot"; actions: boolean; ours: boolean }
  | { kind: "renovate"; path: string };

export function pinUpdates(dir: string): PinUpdates {
  const dependabot = join(dir, DEPENDABOT_PATH);
  if (existsSync(dependabot)) {
    const text = readFileSync(dependabot, "utf8");
    return {
      kind: "dependabot",
      actions: dependabotUpdatesActions(text),
      ours: text === renderDependabotFile(),
    };
  }
  const renovate = RENOVATE_PATHS.find((path) => existsSync(join(dir, path)));
  if (renovate) return { kind: "renovate", path: renovate };
  return { kind: "none" };
}

/**
 * init's line about what moves the pins; null when `.github/dependabot.yml` is init's own (its `created` or
 * `unchanged` line says so).
 */
export function pinUpdatesLine(updates: PinUpdates, added: boolean): string | null {
  if (updates.kind === "dependabot" && updates.ours) return null;
  if (updates.kind === "dependabot")
    return updates.actions
      ? `kept       ${DEPENDABOT_PATH}: yours; its github-actions updates move the pins`
      : `kept       ${DEPENDABOT_PATH}: yours; it has no github-actions updates, so nothing moves the pins: add one (docs/INSTALL.md, "Versions and releases")`;
  if (updates.kind === "renovate")
    return `pins       moved by Renovate (${updates.path}): its github-actions manager updates a SHA and its version comment together`;
  if (added) return null;
  return `pins       nothing moves them: no ${DEPENDABOT_PATH} or Renovate configuration (init without --upgrade offers one)`;
}
