/**
 * The Dependabot configuration `autopilot init` offers a repository: the workflows it writes pin every action by
 * commit SHA, with the version as a comment, and pins stay where they are unless something moves them. Dependabot's
 * `github-actions` updates read the workflows in `.github/workflows` (`directory: "/"`) and propose a pull request
 * for each new release, the SHA and the version comment moved together
 * (https://docs.github.com/code-security/dependabot/working-with-dependabot/dependabot-options-reference#package-ecosystem-,
 * https://docs.github.com/code-security/dependabot/working-with-dependabot/keeping-your-actions-up-to-date-with-dependabot).
 */
import { parse } from "yaml";

export const DEPENDABOT_PATH = ".github/dependabot.yml";

/** The files whose presence says a repository keeps its pins with Renovate instead (docs.renovatebot.com/configuration-options). */
export const RENOVATE_PATHS: readonly string[] = [
  "renovate.json",
  "renovate.json5",
  ".renovaterc",
  ".renovaterc.json",
  ".renovaterc.json5",
  ".github/renovate.json",
  ".github/renovate.json5",
];

export function renderDependabotFile(): string {
  return [
    "# Dependabot keeps the actions the workflows pin by commit SHA current: once a week it proposes a pull request",
    "# for each new release, the SHA and its version comment moved together. Review it like any other change;",
    "# Autopilot's own pin moves to the commit of its new release.",
    "version: 2",
    "updates:",
    "  - package-ecosystem: github-actions",
    '    directory: "/"',
    "    schedule:",
    "      interval: weekly",
    "    groups:",
    "      actions:",
    '        patterns: ["*"]',
    "",
  ].join("\n");
}

/** Whether a Dependabot configuration has updates for GitHub Actions (false when it does not parse). */
export function dependabotUpdatesActions(text: string): boolean {
  try {
    const updates = (parse(text) as { updates?: unknown } | null)?.updates;
    return (
      Array.isArray(updates) &&
      updates.some(
        (u) => (u as { "package-ecosystem"?: unknown })?.["package-ecosystem"] === "github-actions",
      )
    );
  } catch {
    return false;
  }
}
