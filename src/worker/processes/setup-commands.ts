/**
 * The `setup:` commands `autopilot init` proposes: how the project installs its dependencies, read from the lock
 * and manifest files of the ecosystems the quality-command detection knows (quality.ts). One command per
 * ecosystem found, each the install that follows the lockfile exactly where there is one.
 */
import { stat } from "node:fs/promises";
import path from "node:path";

async function exists(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The install commands for the checkout at `dir` (empty: nothing to install). */
export async function detectSetupCommands(dir: string): Promise<string[]> {
  const has = (name: string) => exists(path.join(dir, name));
  const commands: string[] = [];
  if ((await has("package-lock.json")) || (await has("npm-shrinkwrap.json"))) commands.push("npm ci");
  else if (await has("pnpm-lock.yaml")) commands.push("pnpm install --frozen-lockfile");
  else if (await has("yarn.lock"))
    // Yarn 2+ (a .yarnrc.yml) spells "do not change the lockfile" --immutable; Yarn 1 --frozen-lockfile.
    commands.push((await has(".yarnrc.yml")) ? "yarn install --immutable" : "yarn install --frozen-lockfile");
  else if (await has("package.json")) commands.push("npm install --no-audit --no-fund");

  if (await has("uv.lock")) commands.push("uv sync --frozen");
  else if (await has("poetry.lock")) commands.push("poetry install --no-interaction");
  else if (await has("requirements.txt")) commands.push("python -m pip install --user -r requirements.txt");

  if (await has("go.mod")) commands.push("go mod download");
  if (await has("Cargo.toml")) commands.push("cargo fetch");
  return commands;
}
