/**
 * The agent's OS user, and the namespace sandbox around it. The agent CLI and the quality commands run as a
 * separate, unprivileged user so that the kernel, not good manners, keeps them away from the worker: another uid
 * cannot read the worker's `/proc/<pid>/environ` (where the runner's `INPUT_GITHUB-TOKEN` stays for the life of
 * the process) or memory, cannot write the worker's git directory or configuration, and is in no sudoers rule.
 *
 * Three isolation modes (`isolation` in .github/autopilot.yml):
 * - `namespace` (the default): every command runs in a `bwrap` sandbox (agent-namespace.ts: its own PID, mount,
 *   IPC, UTS and network namespaces, the host read-only, the worker's directories hidden) and, inside it, as the
 *   agent's uid with no new privileges. bwrap runs as root (the worker is root, or through `sudo -n` on a runner
 *   whose user has password-less sudo); the worker checks once at setup that a sandbox really starts, and refuses
 *   to start when it does not (no bubblewrap, or no namespaces).
 * - `uid`: the separate uid only (today's weaker wall, named as such in the log, job summary and dashboard);
 * - `none`: the agent runs as the worker's own user.
 *
 * How the worker becomes that user depends on what it is:
 * - root: `useradd` (idempotent, tolerant of a concurrent creation) and `setpriv --reuid --regid --clear-groups
 *   --no-new-privs` in front of each command (inside bwrap in `namespace` mode);
 * - not root, with password-less sudo (GitHub-hosted runners' `runner` user): the same command run through
 *   `sudo -n` (so the agent gets no-new-privs here too: a setuid-root binary cannot give it root), the
 *   environment passed with `env -i` because sudo resets it;
 * - neither: isolation is impossible and the worker refuses to start unless the configuration says
 *   `isolation: none`.
 *
 * At the end of every agent or quality run every process of the uid is killed (uid-kill.ts: kill(-1) as the uid,
 * which a fork chain cannot outrun, until a scan of /proc finds none) — in `namespace` mode the kernel has
 * already ended them with the sandbox's PID 1, and that kill is a second belt — and the
 * directories the agent worked in are taken back (owned by the worker again, no group/other write bits) before
 * the worker's git reads them.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { lchown, lstat } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { type AgentView, bwrapArgs, commandPaths, EMPTY_VIEW, openingsFor } from "./agent-namespace.js";
import { isToolchainName } from "./agent-env.js";
import { claimAgentSlot, SLOT_COUNT } from "./agent-slots.js";
import type { AgentNetwork } from "../network/agent-network.js";
import { trustedBinary, workerBinaries } from "./trusted-binaries.js";
import type { TreeWrites } from "../checkout/tree-writes.js";
import { killUid } from "./uid-kill.js";

// The /proc scan lives with the kill (uid-kill.ts); callers and tests keep reaching it here.
import { processesOf } from "./uid-kill.js";

export { processesOf };

/** How a command is started as the agent user. */
export interface Wrapped {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export type IsolationMode = "namespace" | "uid" | "none";

export interface WrapOptions {
  /** The network of this one command (the agent's side of git runs with none: checkout/agent-side-git.ts). */
  network?: AgentNetwork;
}

export interface AgentUser {
  /** False only with `isolation: none`: the agent runs as the worker's own user. */
  readonly isolated: boolean;
  readonly mode: IsolationMode;
  /** The user name (null when not isolated). */
  readonly name: string | null;
  readonly uid: number | null;
  /** The command line that runs `command` as the agent user with exactly `env` (`network` overrides the one in use). */
  wrap(command: string, args: string[], env: Record<string, string>, options?: WrapOptions): Wrapped;
  /** Kills every process of the agent's uid (a no-op when not isolated); returns how many were found. */
  killAll(): Promise<number>;
  /**
   * Makes the agent user the owner of these directories (recursively, symbolic links not followed). `written`
   * names, for some of them, every path the worker wrote there since the last hand-over (tree-writes.ts): where
   * the tree stays the agent's between runs (`namespace` as root), only those change hands, not the whole tree.
   */
  give(dirs: string[], written?: ReadonlyMap<string, TreeWrites>): Promise<void>;
  /** Makes the worker able to read them again, with nothing another user could still write, before it reads them. */
  take(dirs: string[]): Promise<void>;
  /** The network later wraps give the sandbox (`closed` until told otherwise; ignored outside `namespace`). */
  useNetwork(network: AgentNetwork): void;
  /** What later wraps show of the host (ignored outside `namespace`). */
  useView(view: AgentView): void;
}

/** `env` with a proxied network's variables merged in (they win over the agent's own). */
function withNetworkEnv(env: Record<string, string>, network: AgentNetwork): Record<string, string> {
  return typeof network === "object" ? { ...env, ...network.env } : env;
}

class IsolationError extends Error {
  override readonly name = "IsolationError";
}

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

/**
 * The agent as the worker's own user: no walls. A proxied network can only be offered through its variables
 * (agent-egress.ts names it "not enforced").
 */
function notIsolated(): AgentUser {
  let network: AgentNetwork = "open";
  return {
    isolated: false,
    mode: "none",
    name: null,
    uid: null,
    wrap: (command, args, env, options) => ({
      command,
      args,
      env: withNetworkEnv(env, options?.network ?? network),
    }),
    killAll: async () => 0,
    give: async () => {},
    take: async () => {},
    useNetwork(chosen) {
      network = chosen;
    },
    useView: () => {},
  };
}

interface AgentUserOptions {
  /** `namespace` (the default) and `uid` isolate; `none` runs the agent as the worker's own user. */
  isolation: IsolationMode;
  /**
   * The worker's environment: AUTOPILOT_AGENT_USER (the user's name), AUTOPILOT_AGENT_SHARED_DIRS (directories,
   * separated by `:`, that the sandbox shares writable with the host: test harnesses whose scripted agents keep
   * their state or reports outside the work tree; the runner machine's owner sets it, never the repository).
   */
  env?: NodeJS.ProcessEnv;
  /** Where the agent-user slots are locked (agent-slots.ts; tests use their own). */
  slotsDir?: string;
}

/** AUTOPILOT_AGENT_SHARED_DIRS, checked: absolute existing directories. */
function sharedDirs(env: NodeJS.ProcessEnv | undefined): string[] {
  const value = env?.AUTOPILOT_AGENT_SHARED_DIRS?.trim();
  if (!value) return [];
  const dirs = value.split(":").filter(Boolean);
  for (const dir of dirs) {
    if (!dir.startsWith("/") || !existsSync(dir))
      throw new IsolationError(
        `AUTOPILOT_AGENT_SHARED_DIRS names ${JSON.stringify(dir)}, which is not an existing absolute directory`,
      );
  }
  return dirs;
}

const WEAKER_FIX =
  "set `isolation: uid` (a separate user only: weaker, no namespace) or `isolation: none` in " +
  ".github/autopilot.yml on the default branch";
const INSTALL_FIX = `Install bubblewrap on the runner (\`sudo apt-get install -y bubblewrap\` in a step before the worker, or in the runner's image), or ${WEAKER_FIX}.`;
const NAMESPACES_FIX = `Run the worker where root may create namespaces (a virtual machine such as GitHub's hosted runners, or a container started with the capabilities to nest them), or ${WEAKER_FIX}.`;

/** Sets up the agent user, or explains why it cannot (an IsolationError naming the fix). */
export async function setupAgentUser(options: AgentUserOptions): Promise<AgentUser> {
  if (options.isolation === "none") return notIsolated();
  let name = options.env?.AUTOPILOT_AGENT_USER?.trim();
  if (!name) {
    // One user per concurrent job on this host (agent-slots.ts).
    const slot = claimAgentSlot(options.slotsDir);
    if (!slot)
      throw new IsolationError(
        `all ${SLOT_COUNT} agent users of this host are taken by running jobs; run fewer jobs at once on it`,
      );
    name = slot.name;
  }
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
  const find = requiredBinary("find");
  const kill = requiredBinary("kill");
  const envBinary = requiredBinary("env");
  const namespace = options.isolation === "namespace";
  const bwrap = namespace ? systemBinary("bwrap") : null;
  if (namespace && !bwrap)
    throw new IsolationError(
      `the agent's namespace sandbox needs bwrap, which is not installed. ${INSTALL_FIX}`,
    );
  const shared = sharedDirs(options.env);
  let chosenNetwork: AgentNetwork = "closed";
  let view: AgentView = { ...EMPTY_VIEW, shared };

  const wrap = (
    command: string,
    args: string[],
    env: Record<string, string>,
    options?: WrapOptions,
  ): Wrapped => {
    const network = options?.network ?? chosenNetwork;
    const become = [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, "--clear-groups", "--no-new-privs", "--"];
    // A proxied network's variables apply in every mode; its forwarder (the prefix) only where the sandbox has
    // a network namespace of its own (agent-egress.ts gives no prefix elsewhere, and names it "not enforced").
    const proxied = typeof network === "object" ? network : null;
    const fullEnv = withNetworkEnv(env, network);
    const assignments = Object.entries(fullEnv).map(([key, value]) => `${key}=${value}`);
    const inner = [
      ...(root ? [] : [envBinary, "-i", ...assignments]),
      ...(proxied?.prefix ?? []),
      command,
      ...args,
    ];
    if (namespace) {
      // Its command, the files its arguments name, its PATH and its toolchains (JAVA_HOME, GOROOT, …), wherever
      // they are on the host (agent-namespace.ts).
      // (What a shared directory holds is there already, and writable: no read-only bind over it.)
      const inShared = (p: string) => view.shared.some((dir) => p === dir || p.startsWith(`${dir}/`));
      const toolchains = Object.entries(fullEnv)
        .filter(([key]) => key === "PATH" || isToolchainName(key))
        .flatMap(([, value]) => value.split(":"));
      const needed = [...commandPaths(command, args), ...toolchains].filter(
        (p) => p.startsWith("/") && !inShared(p),
      );
      const openings = openingsFor([...needed, ...view.writable, ...view.readable], ids.uid, ids.gid);
      const sandboxArgs = bwrapArgs({
        view: { ...view, openings: [...view.openings, ...openings] },
        network,
        become: { setpriv, uid: ids.uid, gid: ids.gid },
        inner,
      });
      if (root) return { command: bwrap!, args: sandboxArgs, env: fullEnv };
      return { command: sudo!, args: ["-n", "--", bwrap!, ...sandboxArgs], env: fullEnv };
    }
    if (root) return { command: setpriv, args: [...become, ...inner], env: fullEnv };
    return { command: sudo!, args: ["-n", "--", setpriv, ...become, ...inner], env: fullEnv };
  };

  if (namespace) {
    // Once, before any agent runs: does a sandbox really start here (namespaces allowed, /proc mountable)?
    const probe = wrap("/bin/true", [], { PATH: "/usr/bin:/bin" });
    const started = await exec(probe.command, probe.args, probe.env);
    if (started.code !== 0)
      throw new IsolationError(
        `the agent's namespace sandbox does not start on this machine (${bwrap}: ` +
          `${started.stderr.trim().split("\n")[0] || `exit ${started.code}`}). ${NAMESPACES_FIX}`,
      );
  }

  const chownAll = async (existing: string[], uid: number, gid: number) => {
    // -P: never follow a symbolic link found inside; -h: change the link itself, not what it points at.
    const result = await privileged(chown, ["-R", "-h", "-P", `${uid}:${gid}`, "--", ...existing]);
    if (result.code !== 0)
      throw new Error(`could not change the owner of the agent's directories: ${result.stderr.trim()}`);
  };

  return {
    isolated: true,
    mode: namespace ? "namespace" : "uid",
    name,
    uid: ids.uid,
    wrap,
    async killAll() {
      // In a namespace every process of the uid lives in a sandbox whose end the kernel made the end of all of
      // them (its PID 1 exited): one scan is the belt, and the rounds of kill(-1) run only when it finds one.
      if (namespace && (await processesOf(ids.uid)).length === 0) return 0;
      return killUid({ name, uid: ids.uid, gid: ids.gid, setpriv, kill, sudo: root ? null : sudo! });
    },
    async give(dirs, written) {
      const existing = dirs.filter((dir) => existsSync(dir));
      if (existing.length === 0) return;
      if (!(namespace && root)) return chownAll(existing, ids.uid, ids.gid);
      // The tree stays the agent's between runs (see take); only what the worker wrote since (owned by the
      // worker) changes hands. Where the worker named every path it wrote, those paths; elsewhere one pass of
      // lstat over the tree. No write to the rest either way.
      const walked: string[] = [];
      const named: string[] = [];
      for (const dir of existing) {
        const record = written?.get(dir);
        if (record === undefined || record === "unknown") walked.push(dir);
        else named.push(...record);
      }
      const notYetGiven = await notOwnedBy(named, ids.uid, ids.gid);
      // As root, lchown itself (what `chown -h` calls, without a process per hand-over).
      for (const entry of notYetGiven)
        await lchown(entry, ids.uid, ids.gid).catch((error: unknown) => {
          throw new Error(`could not give the agent what the worker wrote: ${(error as Error).message}`);
        });
      if (walked.length === 0) return;
      const result = await privileged(find, [
        "-P",
        ...walked,
        "(",
        "!",
        "-uid",
        String(ids.uid),
        "-o",
        "!",
        "-gid",
        String(ids.gid),
        ")",
        "-exec",
        chown,
        "-h",
        `${ids.uid}:${ids.gid}`,
        "--",
        "{}",
        "+",
      ]);
      if (result.code !== 0)
        throw new Error(`could not give the agent its directories: ${result.stderr.trim().slice(0, 500)}`);
    },
    async take(dirs) {
      const existing = dirs.filter((dir) => existsSync(dir));
      if (existing.length === 0) return;
      // With a namespace, as root, nothing needs to change before the worker reads the tree: killAll ran first,
      // so the sandbox is gone (its PID 1 ended every process in it) and no process of the uid is left; no new
      // one can start, since only root starts processes as that uid and nothing outside the sandbox can reach
      // the tree to run a set-user-ID file in it (the agent's directory is 0700, the worker's: boundary.ts);
      // and root reads files whatever their modes. So the tree stays the agent's and the hand-over gives only what
      // the worker wrote since, instead of two recursive chowns (bench/handover.ts).
      if (namespace && root) return;
      await chownAll(existing, workerUid, workerGid);
      // The agent may have made its files unreadable (the worker must read them to commit them), or writable by
      // group and others (a survivor of another uid must not keep writing what the worker reads).
      const modes = await privileged(chmod, ["-R", "u+rwX,go-w", "--", ...existing]);
      if (modes.code !== 0)
        throw new Error(`could not restore the modes of the agent's files: ${modes.stderr.trim()}`);
    },
    useNetwork(next) {
      chosenNetwork = next;
    },
    useView(next) {
      view = { ...next, shared: [...next.shared, ...shared] };
    },
  };
}

/** Those of `paths` that exist (symbolic links not followed) and are not owned by `uid`:`gid`. */
async function notOwnedBy(paths: Iterable<string>, uid: number, gid: number): Promise<string[]> {
  const found: string[] = [];
  for (const entry of paths) {
    try {
      const info = await lstat(entry);
      if (info.uid !== uid || info.gid !== gid) found.push(entry);
    } catch {
      /* gone since the worker wrote it (a later git command removed it): nothing to give */
    }
  }
  return found;
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
