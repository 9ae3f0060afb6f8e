/**
 * Child processes for the worker: the agent CLI and the quality commands. Each runs detached in its own process
 * group so a timeout (or the end of the iteration) can kill the whole tree — the agent's shells, test runners
 * and dev servers included — with SIGTERM and then SIGKILL to the negative process-group id. Output is captured
 * with a size cap (the head and the tail are kept, the middle is dropped) so a chatty agent cannot exhaust memory.
 * With `runAs`, the command runs as the agent's OS user, and when it ends (or times out) every process of that
 * user is killed, not only its process group: a `setsid` daemon escapes a group, not a uid.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { AgentUser } from "../isolation/agent-user.js";

export interface RunProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  /** The complete environment of the child (nothing is inherited). */
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed; stdin is /dev/null when absent. */
  stdin?: string;
  /** Kill the process tree after this many ms (0 or absent: no limit). */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Bytes kept per stream (head + tail). Default 8 MiB. */
  maxOutputBytes?: number;
  /** Called with each complete line of stdout (for live logs). */
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /**
   * Where stdout goes instead of being kept (a stream of data, not text: the agent side's pack). Piped with
   * backpressure; a sink that closes early closes the child's stdout too, so a child still writing ends.
   */
  stdoutTo?: NodeJS.WritableStream;
  /** Aborting kills the tree the same way a timeout does. */
  signal?: AbortSignal;
  /** Run as the agent's user (see agent-user.ts); its every process is killed when the command ends. */
  runAs?: Pick<AgentUser, "wrap" | "killAll">;
}

export interface ProcessResult {
  /** Exit code, or null when killed by a signal. */
  exitCode: number | null;
  /** The signal that ended the process, if any. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** True when some output was dropped by the cap. */
  truncated: boolean;
  pid: number | undefined;
  /** Set when the command could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
}

const DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;

/** Keeps the first and last `limit/2` bytes of a stream. */
export class CappedBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;
  private readonly half: number;

  constructor(limit: number) {
    this.half = Math.max(1, Math.floor(limit / 2));
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.headBytes < this.half) {
      const take = Math.min(this.half - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.half && this.tail.length > 0) {
      const first = this.tail[0]!;
      const excess = this.tailBytes - this.half;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
        this.dropped += excess;
      }
    }
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = Buffer.concat(this.tail).toString("utf8");
    if (this.dropped === 0) return head + tail;
    return `${head}\n[… ${this.dropped} bytes of output dropped …]\n${tail}`;
  }
}

function lineSplitter(onLine: ((line: string) => void) | undefined): {
  push(chunk: Buffer): void;
  flush(): void;
} {
  let pending = "";
  return {
    push(chunk) {
      if (!onLine) return;
      pending += chunk.toString("utf8");
      let index = pending.indexOf("\n");
      while (index >= 0) {
        onLine(pending.slice(0, index));
        pending = pending.slice(index + 1);
        index = pending.indexOf("\n");
      }
      // A single line longer than 1 MiB is not worth keeping whole for a live log.
      if (pending.length > 1024 * 1024) pending = pending.slice(-1024 * 1024);
    },
    flush() {
      if (onLine && pending.length > 0) onLine(pending);
      pending = "";
    },
  };
}

/** Sends `signal` to the whole process group of `pid`; false when the group no longer exists. */
function killProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const grace = options.killGraceMs ?? 5_000;
  const stdout = new CappedBuffer(maxBytes);
  const stderr = new CappedBuffer(maxBytes);
  const outLines = lineSplitter(options.onStdoutLine);
  const errLines = lineSplitter(options.onStderrLine);

  return new Promise<ProcessResult>((resolve) => {
    let child: ChildProcess;
    const wrapped = options.runAs
      ? options.runAs.wrap(options.command, options.args, options.env)
      : { command: options.command, args: options.args, env: options.env };
    // Every kill of the agent's uid started here is awaited before the result: one still looping when the next
    // command of that uid starts (the next quality command, the agent after the sync) would kill it too.
    let userKilled: Promise<unknown> = Promise.resolve();
    const killUser = () => {
      if (!options.runAs) return;
      const kill = options.runAs.killAll().catch(() => {
        /* reported by the caller's own killAll at the end of the iteration */
      });
      userKilled = Promise.all([userKilled, kill]);
    };
    try {
      child = spawn(wrapped.command, wrapped.args, {
        cwd: options.cwd,
        env: wrapped.env,
        detached: true,
        stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      });
    } catch (error) {
      resolve(failedToStart(error, started));
      return;
    }

    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    let spawnError: string | undefined;
    const timers: NodeJS.Timeout[] = [];

    const killTree = () => {
      if (child.pid === undefined) return;
      killProcessGroup(child.pid, "SIGTERM");
      const hard = setTimeout(() => {
        if (child.pid !== undefined) killProcessGroup(child.pid, "SIGKILL");
        killUser();
      }, grace);
      hard.unref();
      timers.push(hard);
    };

    if (options.timeoutMs && options.timeoutMs > 0) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          killTree();
        }, options.timeoutMs),
      );
    }
    const onAbort = () => {
      aborted = true;
      killTree();
    };
    if (options.signal) {
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener("abort", onAbort, { once: true });
    }

    const sink = options.stdoutTo;
    if (sink && child.stdout) {
      child.stdout.pipe(sink);
      sink.on("close", () => child.stdout?.destroy());
      sink.on("error", () => child.stdout?.destroy());
    } else {
      child.stdout?.on("data", (chunk: Buffer) => {
        stdout.push(chunk);
        outLines.push(chunk);
      });
    }
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      errLines.push(chunk);
    });
    if (options.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => {
        /* the child may exit without reading its stdin (EPIPE) */
      });
      child.stdin.end(options.stdin);
    }

    const finish = () => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      outLines.flush();
      errLines.flush();
      const result: ProcessResult = {
        exitCode,
        signal: exitSignal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        truncated: stdout.truncated || stderr.truncated,
        pid: child.pid,
        ...(spawnError ? { spawnError } : {}),
      };
      void userKilled.then(() => resolve(result));
    };

    child.on("error", (error) => {
      spawnError = error.message;
      if (child.pid === undefined) finish();
    });
    child.on("exit", (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // The leader is gone; whatever it left behind in its group (background jobs, servers) goes too, so the
      // next iteration starts clean and the pipes close.
      if (child.pid !== undefined) killProcessGroup(child.pid, "SIGKILL");
      killUser();
      // Grandchildren that escaped the group may still hold the pipes open: don't wait for them forever.
      const closeWait = setTimeout(finish, 2_000);
      closeWait.unref();
      timers.push(closeWait);
    });
    child.on("close", finish);
  });
}

function failedToStart(error: unknown, started: number): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    aborted: false,
    durationMs: Math.round(performance.now() - started),
    truncated: false,
    pid: undefined,
    spawnError: error instanceof Error ? error.message : String(error),
  };
}
