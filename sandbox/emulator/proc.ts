/**
 * Small process helpers shared by the sandbox's git remote and Actions stand-in: run a command to completion
 * with captured output, and a git environment that ignores the machine's own configuration.
 */
import { type SpawnOptions, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Kill the process (group) after this many milliseconds. */
  timeoutMs?: number;
}

/** Where the machine's own git is installed (Debian, a source build, a merged-/usr layout, Homebrew). */
const SYSTEM_GIT_PATHS = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git", "/opt/homebrew/bin/git"];

/**
 * The machine's git by absolute path, for the sandbox's remote and the tests' harness. Never `git` by name: that
 * is the first one on PATH, and `npm run` puts `/tmp/node_modules/.bin` there for a checkout under /tmp, where any
 * user (the hostile agents of the red-team tests included) can plant one. The sandbox is test equipment and
 * imports nothing of Autopilot's (src/worker/isolation/trusted-binaries.ts is the worker's own), hence its own lookup.
 */
export function systemGit(): string {
  const found = SYSTEM_GIT_PATHS.find((file) => existsSync(file));
  if (!found) throw new Error(`git is not installed (looked for ${SYSTEM_GIT_PATHS.join(", ")})`);
  return found;
}

/**
 * Runs a command and resolves with its exit status and output (never rejects on a non-zero exit). `git` means
 * the machine's git (`systemGit`), not the first on PATH.
 */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    };
    const child = spawn(command === "git" ? systemGit() : command, args, spawnOptions);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    let timer: NodeJS.Timeout | undefined;
    if (options.timeoutMs) timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", (error) => {
      if (timer) clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
    child.stdin?.on("error", () => {});
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

const IDENTITY = { name: "Autopilot Sandbox", email: "sandbox@autopilot.invalid" };

/**
 * The environment for git commands the sandbox itself runs: the caller's environment without any GIT_*
 * variable that could point git elsewhere, no system or global config, no prompts, and a fixed identity.
 */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("GIT_")) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: IDENTITY.name,
    GIT_AUTHOR_EMAIL: IDENTITY.email,
    GIT_COMMITTER_NAME: IDENTITY.name,
    GIT_COMMITTER_EMAIL: IDENTITY.email,
    ...extra,
  };
}

/** A promise-based mutex per key: serializes writes to one repository. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async with<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous.catch(() => {});
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
}

/** Every process on the machine with its parent and group (Linux /proc); empty elsewhere. */
function processTable(): ProcInfo[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const table: ProcInfo[] = [];
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // "pid (comm) state ppid pgrp …" — comm may hold spaces and parentheses: split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      table.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]) });
    } catch {
      // the process exited meanwhile
    }
  }
  return table;
}

/** The descendants of a process (children, grandchildren, …), found before anything is killed. */
function descendantsOf(pid: number): ProcInfo[] {
  const table = processTable();
  const out: ProcInfo[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const info of table) {
      if (info.ppid === parent && !out.some((o) => o.pid === info.pid)) {
        out.push(info);
        queue.push(info.pid);
      }
    }
  }
  return out;
}

/**
 * Kills a process, its process group and every descendant with their groups — also those that started
 * their own group (the worker runs its agent detached). Never touches this process's own group.
 */
export function killTree(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  const own = processTable().find((p) => p.pid === process.pid)?.pgid ?? -1;
  const targets = [pid, ...descendantsOf(pid).map((d) => d.pid)];
  const groups = new Set<number>([pid]);
  for (const info of processTable()) if (targets.includes(info.pid)) groups.add(info.pgid);
  for (const group of groups) {
    if (group === own || group <= 1) continue;
    try {
      process.kill(-group, signal);
    } catch {
      // no such group
    }
  }
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}
