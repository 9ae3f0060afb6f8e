/**
 * The agent's OS user. The agent CLI and the quality commands run as a separate, unprivileged user so that the
 * kernel, not good manners, keeps them away from the worker: another uid cannot read the worker's
 * `/proc/<pid>/environ` (where the runner's `INPUT_GITHUB-TOKEN` stays for the life of the process) or memory,
 * cannot write the worker's git directory or configuration, and is in no sudoers rule.
 *
 * How the worker becomes that user depends on what it is:
 * - root: `useradd` (idempotent, tolerant of a concurrent creation) and `setpriv --reuid --regid --clear-groups
 *   --no-new-privs` in front of each command;
 * - not root, with password-less sudo (GitHub-hosted runners' `runner` user): the same `setpriv` run through
 *   `sudo -n` (so the agent gets no-new-privs here too: a setuid-root binary cannot give it root), the
 *   environment passed with `env -i` because sudo resets it;
 * - neither: isolation is impossible and the worker refuses to start unless the configuration says
 *   `isolation: none`.
 *
 * At the end of every agent or quality run every process of the uid is killed (found by walking /proc, so
 * `setsid` daemons that left the process group go too), and the directories the agent worked in are taken back
 * (owned by the worker again) before the worker's git reads them.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import type { AgentNetwork } from "./agent-network.js";
import { trustedBinary, workerBinaries } from "./trusted-binaries.js";

/** How a command is started as the agent user. */
export interface Wrapped {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface AgentUser {
  /** False only with `isolation: none`: the agent runs as the worker's own user. */
  readonly isolated: boolean;
  /** The user name (null when not isolated). */
  readonly name: string | null;
  readonly uid: number | null;
  /** The command line that runs `command` as the agent user with exactly `env`. */
  wrap(command: string, args: string[], env: Record<string, string>): Wrapped;
  /** Kills every process of the agent's uid (a no-op when not isolated); returns how many were found. */
  killAll(): Promise<number>;
  /** Makes the agent user the owner of these directories (recursively, symbolic links not followed). */
  give(dirs: string[]): Promise<void>;
  /** Makes the worker the owner again, with owner read/write restored, before the worker reads them. */
  take(dirs: string[]): Promise<void>;
  /**
   * The network of every command wrapped from now on (agent-network.ts). Without a network namespace only a
   * proxied network's `env` can be applied: it is merged into the command's environment.
   */
  useNetwork(network: AgentNetwork): void;
}

/** `env` with a proxied network's variables merged in (they win over the agent's own). */
function withNetworkEnv(env: Record<string, string>, network: AgentNetwork): Record<string, string> {
  return typeof network === "object" ? { ...env, ...network.env } : env;
}

export class IsolationError extends Error {
  override readonly name = "IsolationError";
}

/** The default name; AUTOPILOT_AGENT_USER chooses another (tests running several workers on one machine). */
export const DEFAULT_AGENT_USER = "autopilot-agent";
const USER_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(command: string, args: string[], env?: Record<string, string>): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { encoding: "utf8", env: env ?? { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C" } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 127) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * The program of that name from a directory only root or the worker's user can write (trusted-binaries.ts):
 * never one another user could have planted on the worker's PATH.
 */
function systemBinary(name: string): string | null {
  return trustedBinary(name);
}

/** Like `systemBinary`, or an IsolationError naming where it looked. */
function requiredBinary(name: string): string {
  try {
    return workerBinaries().require(name);
  } catch (error) {
    throw new IsolationError(`the agent cannot be isolated: ${(error as Error).message}`);
  }
}

/** The pids of every process whose real or effective uid is `uid`, from /proc (readable by anyone). */
export async function processesOf(uid: number): Promise<number[]> {
  const pids: number[] = [];
  let entries: string[] = [];
  try {
    entries = await readdir("/proc");
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      const line = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
      if (line && (Number(line[1]) === uid || Number(line[2]) === uid || Number(line[3]) === uid)) {
        // Zombies hold no resources and cannot be killed; their parent reaps them.
        if (/^State:\s+Z/m.test(status)) continue;
        pids.push(Number(entry));
      }
    } catch {
      /* the process ended while we looked */
    }
  }
  return pids;
}

function notIsolated(): AgentUser {
  let network: AgentNetwork = "open";
  return {
    isolated: false,
    name: null,
    uid: null,
    wrap: (command, args, env) => ({ command, args, env: withNetworkEnv(env, network) }),
    killAll: async () => 0,
    give: async () => {},
    take: async () => {},
    useNetwork(chosen) {
      network = chosen;
    },
  };
}

export interface AgentUserOptions {
  /** `user` (the default) isolates; `none` runs the agent as the worker's own user. */
  isolation: "user" | "none";
  /** The worker's environment (AUTOPILOT_AGENT_USER). */
  env?: NodeJS.ProcessEnv;
}

/** Sets up the agent user, or explains why it cannot (an IsolationError naming the fix). */
export async function setupAgentUser(options: AgentUserOptions): Promise<AgentUser> {
  if (options.isolation === "none") return notIsolated();
  const name = options.env?.AUTOPILOT_AGENT_USER?.trim() || DEFAULT_AGENT_USER;
  if (!USER_NAME.test(name)) {
    throw new IsolationError(
      `AUTOPILOT_AGENT_USER is not a valid user name: ${JSON.stringify(name.slice(0, 40))}`,
    );
  }
  const root = process.getuid?.() === 0;
  const sudo = systemBinary("sudo");
  const setpriv = systemBinary("setpriv");
  if (!root) {
    const check = sudo ? await exec(sudo, ["-n", "true"]) : null;
    if (check?.code !== 0) {
      throw new IsolationError(
        "the agent cannot be isolated: the worker is not root and has no password-less sudo " +
          `(${sudo ? check?.stderr.trim().split("\n")[0] || "sudo -n failed" : "sudo is not installed in a directory only root or the worker's user can write"}). ` +
          "Run the worker on a GitHub-hosted runner (its user has password-less sudo) or as root, or set " +
          "`isolation: none` in .github/autopilot.yml on the default branch to let the agent run as the " +
          "worker's own user (it can then read the worker's token).",
      );
    }
  }
  if (!setpriv) {
    throw new IsolationError(
      "the agent cannot be isolated: setpriv (util-linux) is not installed in a directory only root or the " +
        "worker's user can write; install it, or set " +
        "`isolation: none` in .github/autopilot.yml on the default branch",
    );
  }
  const privileged = (command: string, args: string[]) =>
    root ? exec(command, args) : exec(sudo!, ["-n", command, ...args]);

  const ids = await ensureUser(name, privileged);
  const workerUid = process.getuid?.() ?? 0;
  const workerGid = process.getgid?.() ?? 0;
  const chown = requiredBinary("chown");
  const chmod = requiredBinary("chmod");
  const kill = requiredBinary("kill");
  const envBinary = requiredBinary("env");

  const owner = async (dirs: string[], uid: number, gid: number, restoreModes: boolean) => {
    const existing = dirs.filter((dir) => existsSync(dir));
    if (existing.length === 0) return;
    // -P: never follow a symbolic link found inside; -h: change the link itself, not what it points at.
    const result = await privileged(chown, ["-R", "-h", "-P", `${uid}:${gid}`, "--", ...existing]);
    if (result.code !== 0)
      throw new Error(`could not change the owner of the agent's directories: ${result.stderr.trim()}`);
    if (restoreModes) {
      // The agent may have made its files unreadable; the worker must read them to commit them.
      const modes = await privileged(chmod, ["-R", "u+rwX", "--", ...existing]);
      if (modes.code !== 0)
        throw new Error(`could not restore the modes of the agent's files: ${modes.stderr.trim()}`);
    }
  };

  let network: AgentNetwork = "open";
  return {
    isolated: true,
    name,
    uid: ids.uid,
    useNetwork(chosen) {
      network = chosen;
    },
    wrap(command, args, plainEnv) {
      const env = withNetworkEnv(plainEnv, network);
      const become = [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, "--clear-groups", "--no-new-privs", "--"];
      if (root) return { command: setpriv, args: [...become, command, ...args], env };
      const assignments = Object.entries(env).map(([key, value]) => `${key}=${value}`);
      return {
        command: sudo!,
        args: ["-n", "--", setpriv, ...become, envBinary, "-i", ...assignments, command, ...args],
        env,
      };
    },
    async killAll() {
      let found = 0;
      // A process may fork while we look: repeat until none is left (bounded, for a fork bomb).
      for (let round = 0; round < 50; round++) {
        const pids = await processesOf(ids.uid);
        if (pids.length === 0) return found;
        found += pids.length;
        if (root) {
          for (const pid of pids) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {
              /* gone already */
            }
          }
        } else {
          await privileged(kill, ["-KILL", "--", ...pids.map(String)]);
        }
        await delay(round < 5 ? 10 : 100);
      }
      const left = await processesOf(ids.uid);
      if (left.length > 0) throw new Error(`${left.length} processes of ${name} survived SIGKILL`);
      return found;
    },
    give: (dirs) => owner(dirs, ids.uid, ids.gid, false),
    take: (dirs) => owner(dirs, workerUid, workerGid, true),
  };
}

async function ensureUser(
  name: string,
  privileged: (command: string, args: string[]) => Promise<ExecResult>,
): Promise<{ uid: number; gid: number }> {
  const lookup = async () => {
    const result = await exec(requiredBinary("getent"), ["passwd", name]);
    if (result.code !== 0) return null;
    const fields = result.stdout.trim().split(":");
    return { uid: Number(fields[2]), gid: Number(fields[3]) };
  };
  const useradd = systemBinary("useradd");
  for (let attempt = 0; attempt < 20; attempt++) {
    const found = await lookup();
    if (found) {
      if (found.uid === 0 || found.gid === 0)
        throw new IsolationError(`the agent user ${name} has uid or gid 0; choose another name`);
      return found;
    }
    if (!useradd) throw new IsolationError("useradd is not installed: the agent user cannot be created");
    const created = await privileged(useradd, [
      "--system",
      "--user-group",
      "--no-create-home",
      "--home-dir",
      "/nonexistent",
      "--shell",
      "/usr/sbin/nologin",
      name,
    ]);
    // 9: the name exists (a concurrent worker made it); 10: /etc/passwd is locked by a concurrent useradd.
    if (created.code === 0 || created.code === 9) continue;
    if (created.code === 10) {
      await delay(50 + attempt * 50);
      continue;
    }
    throw new IsolationError(`could not create the agent user ${name}: ${created.stderr.trim()}`);
  }
  throw new IsolationError(`could not create the agent user ${name}: /etc/passwd stayed locked`);
}
