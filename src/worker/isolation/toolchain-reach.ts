/**
 * Which toolchain directories the agent's OS user cannot use. The agent and the quality commands get the
 * runner's PATH and toolchain variables (agent-env.ts), but they run as another user: a toolchain installed under
 * the runner user's home (the image's Rust in ~/.cargo and ~/.rustup, a `pip install --user`, pnpm's default
 * `~/setup-pnpm`) is out of its reach when that home is not open to other users. The worker checks once, as the
 * agent's user, and says which ones in the log, so a failing `cargo test` is explained before it happens.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { AgentUser } from "./agent-user.js";
import { isToolchainName } from "./agent-env.js";
import { indicesPrintedAsAgent } from "./agent-probe.js";

/** Caches a toolchain writes to while it works (cargo's registry lock, Go's module and build caches, Gradle's). */
const WRITTEN = new Set(["CARGO_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GRADLE_USER_HOME"]);

interface ToolchainDir {
  /** `PATH` or the variable's name. */
  source: string;
  dir: string;
  /** The toolchain writes there, so the agent's user needs write access too. */
  written: boolean;
}

/** The existing absolute directories of PATH and of the toolchain variables in an agent environment. */
export function toolchainDirs(env: Readonly<Record<string, string>>): ToolchainDir[] {
  const found: ToolchainDir[] = [];
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (name !== "PATH" && !isToolchainName(name)) continue;
    const parts = name.endsWith("PATH") ? value.split(path.delimiter) : [value];
    for (const dir of parts) {
      if (!path.isAbsolute(dir) || seen.has(`${name}\0${dir}`) || !existsSync(dir)) continue;
      seen.add(`${name}\0${dir}`);
      found.push({ source: name, dir, written: WRITTEN.has(name) });
    }
  }
  return found;
}

/** The directories among `dirs` the agent's user cannot enter (or, for a cache, write); [] when not isolated. */
export async function unreachableToolchainDirs(
  dirs: readonly ToolchainDir[],
  user: Pick<AgentUser, "isolated" | "wrap" | "killAll">,
  cwd: string,
): Promise<ToolchainDir[]> {
  if (!user.isolated || dirs.length === 0) return [];
  // One shell as the agent's user prints the index of each directory it cannot use; its arguments come in
  // pairs: 1 or 0 (written to or not), then the directory.
  const script = [
    "i=0; while [ $# -gt 1 ]; do w=$1; d=$2; shift 2;",
    'if [ ! -x "$d" ] || [ ! -r "$d" ] || { [ "$w" = 1 ] && [ ! -w "$d" ]; }; then echo "$i"; fi;',
    "i=$((i+1)); done",
  ].join(" ");
  const words = dirs.flatMap((d) => [d.written ? "1" : "0", d.dir]);
  const indices = await indicesPrintedAsAgent(user, script, words, cwd);
  return indices.map((i) => dirs[i]).filter((d): d is ToolchainDir => d !== undefined);
}

/** The log line naming them, with what to do. */
export function unreachableToolchainText(dirs: readonly ToolchainDir[], userName: string | null): string {
  const named = dirs
    .map(
      (d) =>
        `${d.source === "PATH" ? "PATH entry " : `${d.source}=`}${d.dir}${d.written ? " (needs write)" : ""}`,
    )
    .join(", ");
  return (
    `the agent's user ${userName ?? ""} cannot use these toolchain directories, so neither the agent nor the ` +
    `quality commands can: ${named}. Install the toolchain where every user can read it (setup actions use ` +
    'the tool cache, $RUNNER_TOOL_CACHE), or see "Toolchains" in docs/WORKER.md.'
  );
}
