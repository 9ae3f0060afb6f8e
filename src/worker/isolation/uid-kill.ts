/**
 * The processes of the agent's uid: finding them in /proc, and ending them all at once.
 *
 * A kill that scans /proc and then signals pid after pid loses to a fork chain: a process that forks its
 * successor and exits at once is never the pid the scan saw by the time the signal is sent, so the chain
 * outlives any number of rounds. The kernel offers one signal that reaches every process of a uid together:
 * kill(-1, sig) sent by a process whose real and effective uid are that uid reaches every process it may signal
 * (those whose real or saved uid is that uid) except itself, in one pass over the process list during which no
 * fork can complete, and a fork whose parent has a pending SIGKILL gives no child
 * (https://man7.org/linux/man-pages/man2/kill.2.html). So each round runs the trusted `kill -KILL -1`
 * (trusted-binaries.ts) as the agent's uid, through setpriv (and `sudo -n` when the worker is not root), outside
 * any sandbox: inside one, its PID namespace would hide the processes to kill.
 *
 * That killer is itself a process of the uid, so a process of the agent could stop or kill it before it sends
 * the signal; every round therefore also SIGKILLs, as root, each pid the scan found (which the agent cannot
 * stop), and the rounds go on until the scan finds no process of the uid (bounded: a survivor is an error the
 * caller reports). The killer starts in `/`, with an empty environment, so it holds nothing of the worker's.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

/**
 * The pids of every process whose real, effective or saved uid is `uid`, from /proc (readable by anyone). The
 * status files are read one after another without leaving the thread: each is a few microseconds of procfs,
 * where an asynchronous read costs four thread-pool round trips (about six times the whole scan's time with a
 * hundred processes, and it holds up every other file operation of the worker meanwhile).
 */
export async function processesOf(uid: number): Promise<number[]> {
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = await ofUid(entry, uid);
    if (pid !== null) found.push(pid);
  }
  return found;
}

/** The pid, when the process `entry` of /proc runs with `uid` (real, effective or saved) and can still run. */
async function ofUid(entry: string, uid: number): Promise<number | null> {
  let status: string;
  try {
    status = readFileSync(`/proc/${entry}/status`, "utf8");
  } catch {
    /* the process ended while we looked */
    return null;
  }
  const line = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
  if (!line || (Number(line[1]) !== uid && Number(line[2]) !== uid && Number(line[3]) !== uid)) return null;
  // A zombie whose threads are all gone holds nothing and cannot be killed; its parent reaps it. But a
  // leader that called pthread_exit() while another thread runs also shows as a zombie: that one lives,
  // and SIGKILL to its pid kills the whole thread group.
  if (/^State:\s+Z/m.test(status) && !(await hasOtherThreads(entry))) return null;
  return Number(entry);
}

async function hasOtherThreads(pid: string): Promise<boolean> {
  try {
    return (await readdir(`/proc/${pid}/task`)).some((task) => task !== pid);
  } catch {
    return false;
  }
}

interface UidKillTools {
  /** The user's name, for the error. */
  name: string;
  uid: number;
  gid: number;
  /** Trusted paths (trusted-binaries.ts). */
  setpriv: string;
  kill: string;
  /** `sudo` when the worker is not root (it then has password-less sudo: agent-user.ts checked), else null. */
  sudo: string | null;
}

/** Rounds before a survivor is reported; the pause after a round grows after the first few. */
const ROUNDS = 50;
/** A killer the agent stopped (SIGSTOP) must not hold the worker up: it is itself killed, and the next round runs. */
const KILLER_TIMEOUT_MS = 10_000;

/** Runs a command; resolves whether it ran to its end (not killed by a signal, nor stopped past the timeout). */
function run(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: "/",
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C" },
        timeout: KILLER_TIMEOUT_MS,
        killSignal: "SIGKILL",
      },
      // An exit code is an end: `kill` fails when a pid is gone already, and the scan judges what is left.
      (error) => resolve(!error || (typeof error.code === "number" && !error.signal)),
    );
  });
}

/**
 * Kills every process of `tools.uid`: each round SIGKILLs, as root, every pid the scan finds, then sends kill(-1)
 * as that uid; it ends once a kill(-1) ran to its end (so nothing of the uid could still fork) and a later scan
 * finds nothing. A scan alone cannot end it: a fork chain can be missed by a walk of /proc (its next pid is
 * made behind the walk while the pid ahead exits). Returns how many processes the scans found in all rounds, or
 * throws when some survive every round.
 */
export async function killUid(tools: UidKillTools): Promise<number> {
  const become = [`--reuid=${tools.uid}`, `--regid=${tools.gid}`, "--clear-groups", "--no-new-privs", "--"];
  const asRoot = (command: string, args: string[]) =>
    tools.sudo ? run(tools.sudo, ["-n", "--", command, ...args]) : run(command, args);
  let found = 0;
  let sent = false;
  for (let round = 0; round < ROUNDS; round++) {
    const pids = await processesOf(tools.uid);
    if (pids.length === 0 && sent) return found;
    found += pids.length;
    // Root's kill first: what lives across the scan (a process that would stop or kill the killer) ends here.
    if (tools.sudo) {
      if (pids.length > 0) await asRoot(tools.kill, ["-KILL", "--", ...pids.map(String)]);
    } else
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone already */
        }
      }
    if (await asRoot(tools.setpriv, [...become, tools.kill, "-KILL", "--", "-1"])) sent = true;
    // SIGKILLed processes leave /proc (or become zombies, which the scan skips) as the kernel gets to them.
    await delay(round < 5 ? 10 : 100);
  }
  const left = await processesOf(tools.uid);
  if (!sent) throw new Error(`the kill of every process of ${tools.name} never ran to its end`);
  if (left.length > 0) throw new Error(`${left.length} processes of ${tools.name} survived SIGKILL`);
  return found;
}
