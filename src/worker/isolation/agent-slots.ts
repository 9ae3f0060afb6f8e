/**
 * One agent user per concurrent job on a shared host. When AUTOPILOT_AGENT_USER does not name the user, the worker
 * takes the first free slot of `autopilot-agent-0…N`: every process of the agent's uid is killed at the end of
 * each run and its tree is the uid's, so two jobs sharing a uid would kill each other's agent and reach each
 * other's tree (on GitHub-hosted runners every job has a machine of its own; self-hosted runners share one).
 *
 * A slot is a lock directory made atomically (`mkdir` fails when it exists) holding the owner's pid, kept for the
 * worker's life and removed at its exit. A lock whose pid is gone (a worker that was killed) is taken over, one
 * claimant at a time through a second lock directory (`<slot>.takeover`), which checks the owner again once it
 * holds it. (flock(1) would need a process holding the lock for the job's life; a pid in a directory only the
 * worker's user can write needs none, and a dead job's lock frees itself.) The directory is root's
 * (`/run/autopilot/agent-slots`) or, for a worker using sudo, under the worker user's home: never a directory
 * another user can write, where an agent could pre-empt or forge a slot.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** More than the jobs one host runs at once; past it, the worker refuses rather than share a user. */
export const SLOT_COUNT = 32;

function defaultSlotsDir(): string {
  if (process.getuid?.() === 0) return "/run/autopilot/agent-slots";
  return path.join(os.homedir(), ".cache", "autopilot", "agent-slots");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the lock in `dir` is held by a running process (or was claimed a moment ago, its pid not yet written). */
function held(dir: string): boolean {
  let owner = Number.NaN;
  try {
    owner = Number(readFileSync(path.join(dir, "pid"), "utf8"));
  } catch {
    return true;
  }
  return Number.isInteger(owner) && alive(owner);
}

function makeDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  }
}

function tryClaim(dir: string): boolean {
  if (!makeDir(dir)) {
    if (held(dir)) return false;
    const takeover = `${dir}.takeover`;
    if (!makeDir(takeover)) return false;
    try {
      if (held(dir)) return false;
      rmSync(dir, { recursive: true, force: true });
      if (!makeDir(dir)) return false;
    } finally {
      rmSync(takeover, { recursive: true, force: true });
    }
  }
  writeFileSync(path.join(dir, "pid"), String(process.pid));
  return true;
}

/**
 * Claims the first free slot of `count` under `dir` for this process, named by `nameOf`; null when every slot is
 * taken. `release()` frees it; a slot of a process that is gone is taken over by the next claim. Also what the
 * offline sandbox's harness gives its concurrent jobs (`claimJobUser` in sandbox/scenario/autopilot-action.ts).
 */
export function claimSlot(
  dir: string,
  count: number,
  nameOf: (slot: number) => string,
): { name: string; release: () => void } | null {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let slot = 0; slot < count; slot++) {
    const lock = path.join(dir, String(slot));
    if (tryClaim(lock))
      return { name: nameOf(slot), release: () => rmSync(lock, { recursive: true, force: true }) };
  }
  return null;
}

/** Claims a free `autopilot-agent-N` for this process's life; null when every slot is taken. */
export function claimAgentSlot(dir = defaultSlotsDir()): { name: string; release: () => void } | null {
  const claimed = claimSlot(dir, SLOT_COUNT, (slot) => `autopilot-agent-${slot}`);
  if (claimed) process.once("exit", claimed.release);
  return claimed;
}
