/**
 * The test frameworks a JavaScript project shows without a `test` script of its own, and the command that runs
 * each one once, non-interactively (no watch mode, no prompt, no report server left waiting; the quality
 * commands also run with CI=true, which the four tools read the same way):
 *
 * | framework  | recognised by (package.json dependency, or a config file)  | command                    |
 * |------------|------------------------------------------------------------|----------------------------|
 * | Vitest     | `vitest`, `vitest.config.*`                                | `npx --no vitest run`      |
 * | Jest       | `jest`, a `jest` key in package.json, `jest.config.*`      | `npx --no jest --ci`       |
 * | Playwright | `@playwright/test`, `playwright.config.*`                  | `npx --no playwright test` |
 * | Cypress    | `cypress`, `cypress.config.*`                              | `npx --no cypress run`     |
 *
 * Unit tests first, browser tests after (cheap checks first). `--no`: npx runs only the project's own binary.
 * Without it, a project that names the tool but has not installed it would have npx download and run the latest
 * package from whatever registry the agent's .npmrc names (with CI=true and no TTY npx assumes `--yes`); with it
 * npx stops ("npx canceled due to missing packages and no YES option") and the command fails. With pnpm or yarn
 * the same binaries run through `pnpm exec` / `yarn` instead, which run only installed binaries. The files are
 * the agent's: they are only looked at (lstat), never run here.
 */
import type { ProjectFiles } from "./project-files.js";

interface Framework {
  name: string;
  packages: string[];
  configs: string[];
  /** package.json keys that configure it. */
  keys?: string[];
  /** The binary and its arguments. */
  run: string;
}

const CONFIG_EXTENSIONS = ["js", "mjs", "cjs", "ts", "mts", "cts"];
const configs = (base: string, extra: string[] = []) => [
  ...CONFIG_EXTENSIONS.map((ext) => `${base}.${ext}`),
  ...extra,
];

const TEST_FRAMEWORKS: readonly Framework[] = [
  { name: "Vitest", packages: ["vitest"], configs: configs("vitest.config"), run: "vitest run" },
  {
    name: "Jest",
    packages: ["jest"],
    configs: configs("jest.config", ["jest.config.json"]),
    keys: ["jest"],
    run: "jest --ci",
  },
  {
    name: "Playwright",
    packages: ["@playwright/test"],
    configs: configs("playwright.config"),
    run: "playwright test",
  },
  { name: "Cypress", packages: ["cypress"], configs: configs("cypress.config"), run: "cypress run" },
];

function dependencyNames(pkg: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
    const deps = pkg[field];
    if (deps !== null && typeof deps === "object" && !Array.isArray(deps))
      for (const name of Object.keys(deps)) names.add(name);
  }
  return names;
}

/** The commands of the frameworks the project uses, in the table's order. */
export async function detectTestFrameworks(
  files: Pick<ProjectFiles, "has">,
  pkg: unknown,
  runner: "npm" | "pnpm" | "yarn",
): Promise<string[]> {
  const manifest = pkg !== null && typeof pkg === "object" ? (pkg as Record<string, unknown>) : {};
  const deps = dependencyNames(manifest);
  const prefix = runner === "npm" ? "npx --no" : runner === "pnpm" ? "pnpm exec" : "yarn";
  const commands: string[] = [];
  for (const framework of TEST_FRAMEWORKS) {
    let found =
      framework.packages.some((name) => deps.has(name)) ||
      (framework.keys ?? []).some((key) => key in manifest);
    for (const config of framework.configs) {
      if (found) break;
      found = await files.has(config);
    }
    if (found) commands.push(`${prefix} ${framework.run}`);
  }
  return commands;
}
