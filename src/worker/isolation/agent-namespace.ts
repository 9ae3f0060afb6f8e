/**
 * The namespace sandbox around every command of the agent's user (`isolation: namespace`): the `bwrap`
 * (Debian's `bubblewrap`) command line, built from what the agent may see and how it reaches the network.
 *
 * What the command gets (see "The walls" in docs/SECURITY.md for what each stops):
 * - its own PID namespace with its own `/proc`: it sees no process outside, and when bwrap's init (PID 1 inside)
 *   ends, the kernel kills every process left in it — no survivor can outlive the run by escaping a process group
 *   or a scan; `--die-with-parent` ends that init when the worker's bwrap goes;
 * - its own IPC, UTS and (where possible) cgroup namespaces, and a new session (no `TIOCSTI` into a terminal);
 * - its own mount namespace: the host read-only (`--ro-bind / /`: the tools, the toolchains and the caches a
 *   project needs are wherever the image put them, and a minimal list would break a setup action's install in a
 *   place nobody listed), a fresh `/dev` and an empty `/tmp` of its own (nothing planted in the host's `/tmp`,
 *   `/var/tmp` or `/dev/shm` survives it, and nothing there is its to read), the worker's private directories
 *   hidden under an empty tmpfs, and only its work tree, home and tmp writable;
 * - for a directory it needs (its command, its PATH, its work tree) below one its uid cannot enter (a home of mode
 *   700), an empty tmpfs on that ancestor with only the needed directory bound under it: it reaches what it
 *   needs and still sees nothing else of that ancestor, which it could not read anyway;
 * - no network but loopback (`--unshare-net`) unless the network is `open`; a proxied network binds the proxy's
 *   socket directory in and puts the forwarder in front of the command (agent-network.ts);
 * - then `setpriv` to the agent's uid with no groups and no new privileges: the separate uid stays the second
 *   wall inside the first.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { AgentNetwork } from "../network/agent-network.js";

/** What the sandbox shows of the host besides the read-only root. */
export interface AgentView {
  /**
   * Host directories shared writable with the sandbox (AUTOPILOT_AGENT_SHARED_DIRS: a test harness's scripted
   * agent keeps its state or reports there), bound first so the agent's own directories can be bound inside them.
   */
  shared: string[];
  /** Directories the agent writes (its work tree, home and tmp), bound read-write at the same path. */
  writable: string[];
  /** Directories it reads but does not write (the prompt files' directory), bound read-only. */
  readable: string[];
  /** Directories it must not see at all (the worker's git directory and state): an empty tmpfs over each. */
  hidden: string[];
  /**
   * Ancestors of a needed path that the agent's uid cannot enter, each with the needed paths below it: an empty
   * tmpfs (0755) goes over the ancestor, and each needed path is bound read-only under it.
   */
  openings: { ancestor: string; paths: string[] }[];
}

export const EMPTY_VIEW: AgentView = { shared: [], writable: [], readable: [], hidden: [], openings: [] };

/** How the command inside becomes the agent's user: `setpriv` and its arguments, ending with `--`. */
interface Become {
  setpriv: string;
  uid: number;
  gid: number;
}

function byDepth(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => path.resolve(p)))].sort(
    (a, b) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b),
  );
}

/**
 * The argv after `bwrap` (everything up to and including the agent's own command and arguments). `inner` is what
 * runs as the agent's user after `setpriv`: the command behind a proxied network's prefix, or `env -i …` first on
 * the sudo path (sudo resets the environment).
 */
export function bwrapArgs(options: {
  view: AgentView;
  network: AgentNetwork;
  become: Become;
  inner: string[];
}): string[] {
  const { view, network, become } = options;
  const args = [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
  ];
  if (network !== "open") args.push("--unshare-net");
  // Its own /tmp, open to all as a host's is (and its TMPDIR is its own tmp directory anyway).
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp");
  // Directories bwrap makes on the way to a mount point inside one of its tmpfs are 0700 root: made here as
  // 0755 instead, so the agent's uid can go through them.
  const tmpfsRoots = ["/tmp", ...view.openings.map((o) => o.ancestor)];
  const made = new Set<string>();
  const mount = (option: string, target: string, source?: string) => {
    for (const root of tmpfsRoots) {
      if (!target.startsWith(`${root}/`)) continue;
      const parts = target
        .slice(root.length + 1)
        .split("/")
        .slice(0, -1);
      let dir = root;
      for (const part of parts) {
        dir = `${dir}/${part}`;
        if (!made.has(dir)) args.push("--dir", dir);
        made.add(dir);
      }
    }
    if (source === undefined) args.push("--perms", "0755", option, target);
    else args.push(option, source, target);
  };
  for (const dir of byDepth(view.shared)) mount("--bind", dir, dir);
  // Mounts apply in order: a shallower one first, so one below it is not covered by it.
  for (const { ancestor, paths } of [...view.openings].sort(
    (a, b) => a.ancestor.split(path.sep).length - b.ancestor.split(path.sep).length,
  )) {
    // The sandbox's /tmp is already an empty tmpfs of its own (and shared directories are bound in it).
    if (ancestor !== "/tmp") mount("--tmpfs", ancestor);
    for (const needed of byDepth(paths)) mount("--ro-bind", needed, needed);
  }
  for (const dir of byDepth(view.readable)) mount("--ro-bind", dir, dir);
  for (const dir of byDepth(view.writable)) mount("--bind", dir, dir);
  if (typeof network === "object") {
    for (const file of byDepth(network.readOnlyPaths)) mount("--ro-bind", file, file);
    mount("--bind", network.socketDir, network.socketDir);
  }
  // Last, so that no bind above can uncover them (a bind below a hidden directory vanishes instead: a loud
  // failure rather than a leak).
  for (const dir of byDepth(view.hidden).filter((d) => existsSync(d)))
    args.push("--perms", "0700", "--tmpfs", dir);
  args.push(
    "--",
    become.setpriv,
    `--reuid=${become.uid}`,
    `--regid=${become.gid}`,
    "--clear-groups",
    "--no-new-privs",
    "--",
    ...options.inner,
  );
  return args;
}

/** Whether a user with only `uid` and `gid` (no other groups) may enter the directory `dir`. */
function traversable(dir: string, uid: number, gid: number): boolean {
  try {
    const st = statSync(dir);
    if (!st.isDirectory()) return true;
    if (st.uid === uid) return (st.mode & 0o100) !== 0;
    if (st.gid === gid) return (st.mode & 0o010) !== 0;
    return (st.mode & 0o001) !== 0;
  } catch {
    return true;
  }
}

/**
 * The openings the sandbox needs so that the agent's uid reaches `needed` (absolute paths: a directory, or a
 * file whose directory is bound) wherever they are: for each, the shallowest ancestor its uid cannot enter gets
 * an empty tmpfs with the needed directory bound under it (every directory between them is then one bwrap made,
 * 0755). A path under the host's `/tmp`, which the sandbox replaces with its own, is bound the same way. Paths it
 * can already reach need nothing.
 */
export function openingsFor(needed: readonly string[], uid: number, gid: number): AgentView["openings"] {
  const byAncestor = new Map<string, Set<string>>();
  for (const raw of needed.flatMap(withPackageTree)) {
    if (!path.isAbsolute(raw) || !existsSync(raw)) continue;
    const target = path.resolve(raw);
    let dir = target;
    try {
      if (!statSync(target).isDirectory()) dir = path.dirname(target);
    } catch {
      continue;
    }
    let blocked: string | null = null;
    for (let at = path.dirname(dir); ; at = path.dirname(at)) {
      if (!traversable(at, uid, gid)) blocked = at;
      if (at === path.dirname(at)) break;
    }
    // Below the host's /tmp, which the sandbox replaces with its own, a needed path is bound in the same way.
    if (!blocked && dir.startsWith("/tmp/")) blocked = "/tmp";
    if (!blocked) continue;
    const set = byAncestor.get(blocked) ?? new Set<string>();
    set.add(dir);
    byAncestor.set(blocked, set);
  }
  // An ancestor inside another one's tmpfs would be covered: keep the shallowest, with every path under it.
  const ancestors = [...byAncestor.keys()].sort((a, b) => a.length - b.length);
  const openings: AgentView["openings"] = [];
  for (const ancestor of ancestors) {
    // (/tmp is no tmpfs of ours to cover a deeper opening: an opening below it keeps its own.)
    const outer = openings.find((o) => o.ancestor !== "/tmp" && ancestor.startsWith(`${o.ancestor}/`));
    const paths = [...(byAncestor.get(ancestor) ?? [])];
    if (outer) outer.paths.push(...paths);
    else openings.push({ ancestor, paths });
  }
  return openings;
}

/**
 * What a needed path brings along: the file or directory a link names (a `node_modules/.bin` entry is a link into
 * its package), and for anything inside a `node_modules` tree the whole outermost tree, since Node resolves a
 * package's own modules and its dependencies by walking up from the real path of its files. Read-only, and only
 * where the agent's uid could not reach it anyway (openingsFor).
 */
function withPackageTree(raw: string): string[] {
  if (!path.isAbsolute(raw)) return [raw];
  let real = raw;
  try {
    real = realpathSync(raw);
  } catch {
    return [raw];
  }
  return [...new Set([raw, real].map((p) => outermostNodeModules(path.resolve(p)) ?? p))];
}

/** `/a/node_modules/x/node_modules/.bin` → `/a/node_modules`; null outside any `node_modules`. */
function outermostNodeModules(p: string): string | null {
  const at = p.split(path.sep).indexOf("node_modules");
  return at > 0
    ? p
        .split(path.sep)
        .slice(0, at + 1)
        .join(path.sep)
    : null;
}

/**
 * The absolute paths among the words of a command line (quotes removed; `{…}` placeholders are not paths): a
 * custom command runs as `sh -c "<line>"`, so the words of that line count (`node /srv/tools/agent.mjs`).
 */
export function commandPaths(command: string, args: readonly string[]): string[] {
  const words = [command, ...args].flatMap((arg) => arg.split(/\s+/));
  const paths = words
    .map((word) => word.replace(/^['"]+|['"]+$/g, ""))
    .filter((word) => word.startsWith("/") && !word.includes("{") && existsSync(word));
  return [...new Set(paths)];
}
