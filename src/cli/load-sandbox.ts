/**
 * The one door from the product to the offline sandbox (sandbox/: the GitHub emulator and the scenario
 * harness). `autopilot start`, `sandbox` and `status --report` open it; nothing else in src/ imports sandbox/
 * (.dependency-cruiser.cjs enforces it), so `autopilot serve`, `--help` and the setup commands load no emulator
 * file. A production install (`npm ci --omit=dev`, the Docker image) has neither sandbox/ nor the emulator's
 * packages; then this says so and how to get them instead of failing on a missing module.
 */
import type { CliIo } from "./cli-io.js";

export type SandboxCommands = typeof import("../../sandbox/scenario/sandbox-command.js");

const NOT_INSTALLED = [
  "The offline sandbox is not installed here. It (the GitHub emulator and scenario harness in sandbox/, with",
  "its development dependencies) is left out of production installs: `npm ci --omit=dev` and the Docker image.",
  "To run the demo or a scenario, use a clone of Autopilot with all dependencies: `npm ci && npm start`",
  "(or `npx autopilot sandbox --scenario FILE`).",
].join("\n");

/**
 * The sandbox is TypeScript run from its sources (it is development equipment, never bundled): the CLI, compiled
 * into dist/cli/index.js (scripts/bundle.mjs), compiles it at this moment through tsx, a development dependency
 * like the sandbox itself. Both paths are two folders up from either file (src/cli/ and dist/cli/).
 */
const SANDBOX_COMMAND = new URL("../../sandbox/scenario/sandbox-command.ts", import.meta.url);

/** The sandbox's commands, or null after telling the user it is not installed. */
export async function loadSandbox(io: CliIo): Promise<SandboxCommands | null> {
  try {
    const { register } = await import("tsx/esm/api");
    register();
    return (await import(SANDBOX_COMMAND.href)) as SandboxCommands;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw error;
    io.err(NOT_INSTALLED);
    io.err(`(${(error as Error).message.split("\n")[0]})`);
    return null;
  }
}
