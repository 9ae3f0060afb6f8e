/**
 * Agent users for the sandbox's concurrent jobs. On GitHub every job has a runner machine of its own, so one
 * agent user per job is enough there. Here jobs share one machine — within a sandbox process, and across the
 * sandbox processes that run side by side (the e2e runs two scenarios at once, vitest several files) — and the
 * worker kills every process of its agent user after each iteration. So each running job takes a user that no
 * other running job on this machine holds: a small pool of numbered users, claimed through a lock directory
 * created atomically (`mkdir` fails when it exists), taken over when the process that claimed it is gone.
 * A takeover removes and re-creates the lock, so two processes finding the same stale lock would both win;
 * one takeover lock per slot (`<slot>.takeover`, also by `mkdir`) lets only one of them try, and it checks
 * the owner again once it holds it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LOCKS = join(tmpdir(), "autopilot-sandbox-agent-users");
/** More than any run here holds at once; past it, a claim fails loudly rather than sharing a user. */
const POOL_SIZE = 64;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the lock in `dir` is held by a running process (or claimed a moment ago, its pid not written yet). */
function held(dir: string): boolean {
  let owner = Number.NaN;
  try {
    owner = Number(readFileSync(join(dir, "pid"), "utf8"));
  } catch {
    return true;
  }
  return Number.isInteger(owner) && alive(owner);
}

function makeDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  }
}

function tryClaim(dir: string): boolean {
  if (!makeDir(dir)) {
    if (held(dir)) return false;
    // Left behind by a process that is gone: take it over, one process at a time.
    const takeover = `${dir}.takeover`;
    if (!makeDir(takeover)) return false;
    try {
      if (held(dir)) return false;
      rmSync(dir, { recursive: true, force: true });
      if (!makeDir(dir)) return false;
      writeFileSync(join(dir, "pid"), String(process.pid));
      return true;
    } finally {
      rmSync(takeover, { recursive: true, force: true });
    }
  }
  writeFileSync(join(dir, "pid"), String(process.pid));
  return true;
}

/**
 * Claims a user name no other running sandbox job on this machine holds; `release()` gives it back. `locks`
 * is for tests, which use a directory of their own so as not to touch the claims of jobs running beside them.
 */
export function claimAgentUser(locks = LOCKS): { name: string; release: () => void } {
  mkdirSync(locks, { recursive: true });
  for (let slot = 0; slot < POOL_SIZE; slot++) {
    const dir = join(locks, String(slot));
    if (tryClaim(dir)) {
      return { name: `ap-sbx-${slot}`, release: () => rmSync(dir, { recursive: true, force: true }) };
    }
  }
  throw new Error(`all ${POOL_SIZE} sandbox agent users are in use (locks in ${locks})`);
}
