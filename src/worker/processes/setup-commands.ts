/**
 * The `setup:` commands `autopilot init` proposes: how the project installs its dependencies, read from the lock
 * and manifest files of the ecosystems the quality-command detection knows (quality.ts). One command per
 * ecosystem found, each the install that follows the lockfile exactly where there is one, and each in the
 * environment the quality commands then run in (toolchain-commands.ts).
 */
import { directoryFiles, type ProjectFiles } from "./project-files.js";
import { jvmBuild, pythonToolchain } from "./toolchain-commands.js";

/** The install commands for the checkout at `dir` (empty: nothing to install). */
export async function detectSetupCommands(project: string | ProjectFiles): Promise<string[]> {
  const files = typeof project === "string" ? directoryFiles(project) : project;
  const has = (name: string) => files.has(name);
  const commands: string[] = [];
  if ((await has("package-lock.json")) || (await has("npm-shrinkwrap.json"))) commands.push("npm ci");
  else if (await has("pnpm-lock.yaml")) commands.push("pnpm install --frozen-lockfile");
  else if (await has("yarn.lock"))
    // Yarn 2+ (a .yarnrc.yml) spells "do not change the lockfile" --immutable; Yarn 1 --frozen-lockfile.
    commands.push((await has(".yarnrc.yml")) ? "yarn install --immutable" : "yarn install --frozen-lockfile");
  else if (await has("package.json")) commands.push("npm install --no-audit --no-fund");

  const python = await pythonToolchain(files);
  if (python.install) commands.push(python.install);

  if (await has("go.mod")) commands.push("go mod download");
  if (await has("Cargo.toml")) commands.push("cargo fetch");
  const jvm = await jvmBuild(files);
  if (jvm) commands.push(jvm.install);
  return commands;
}
