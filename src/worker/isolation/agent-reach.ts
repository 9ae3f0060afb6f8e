/**
 * What the agent needs of the host, and whether its user reaches it — asked once per agent command, before its
 * first run, so that a command the agent's user cannot read fails the job at once, naming the path and why,
 * instead of failing every iteration with whatever the CLI prints.
 *
 * The needed paths are the absolute paths on the command line (commandPaths in agent-namespace.ts): the command
 * itself and every word of its arguments that is one (`node /srv/tools/agent.mjs` in a custom command's line).
 */
import { statSync } from "node:fs";
import path from "node:path";
import type { AgentUser } from "./agent-user.js";
import { indicesPrintedAsAgent } from "./agent-probe.js";

/** Why the user `uid`/`gid` cannot read `file`, judged from the host's modes (for the message). */
function why(file: string, uid: number | null): string {
  for (let at = path.dirname(file); ; at = path.dirname(at)) {
    try {
      const st = statSync(at);
      // (Its own group aside: the agent's user has no other group, and its group owns nothing of the host's.)
      const bit = st.uid === uid ? 0o100 : 0o001;
      if ((st.mode & bit) === 0)
        return `its directory ${at} (mode ${(st.mode & 0o7777).toString(8)}, owner uid ${st.uid}) cannot be entered`;
    } catch {
      /* judged by the probe */
    }
    if (at === path.dirname(at)) break;
  }
  try {
    const st = statSync(file);
    return `it is not readable by that user (mode ${(st.mode & 0o7777).toString(8)}, owner uid ${st.uid})`;
  } catch {
    return "it is not there for that user";
  }
}

/**
 * The needed paths the agent's user cannot read (in its sandbox when it has one), each with why; [] when all are
 * reached or the agent is not isolated.
 */
export async function unreachablePaths(
  user: Pick<AgentUser, "isolated" | "wrap" | "killAll" | "name" | "uid">,
  needed: readonly string[],
): Promise<{ path: string; why: string }[]> {
  if (!user.isolated || needed.length === 0) return [];
  const script = 'i=0; for p in "$@"; do [ -r "$p" ] || echo "$i"; i=$((i+1)); done';
  const indices = await indicesPrintedAsAgent(user, script, needed, "/");
  return indices
    .map((i) => needed[i])
    .filter((p): p is string => p !== undefined)
    .map((p) => ({ path: p, why: why(p, user.uid) }));
}
