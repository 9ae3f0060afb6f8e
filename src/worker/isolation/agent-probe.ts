/**
 * A question asked of the host as the agent's user, in its sandbox: a shell script run with words as "$@" that
 * prints, one a line, the index of each word it finds wanting. The reach checks (agent-reach.ts,
 * toolchain-reach.ts) ask theirs this way, once each, before the agent first runs.
 */
import type { AgentUser } from "./agent-user.js";
import { runProcess } from "../processes/process.js";
import { trustedShell } from "./trusted-binaries.js";

/** The indices the script printed; [] when the probe itself could not run (the check then says nothing). */
export async function indicesPrintedAsAgent(
  user: Pick<AgentUser, "wrap" | "killAll">,
  script: string,
  words: readonly string[],
  cwd: string,
): Promise<number[]> {
  const result = await runProcess({
    command: trustedShell(),
    args: ["-c", script, "sh", ...words],
    cwd,
    env: { PATH: "/usr/bin:/bin", LANG: "C" },
    timeoutMs: 30_000,
    runAs: user,
  });
  if (result.exitCode !== 0) return [];
  return result.stdout
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}
