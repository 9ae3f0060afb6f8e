/**
 * The processes of a run's steps: each spawned in its own process group with a runner-like environment, its
 * output streamed into the run log; cancelling signals the group SIGINT, then SIGTERM, then SIGKILL.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import type { ActionsOptions, RunHandle } from "./actions-types.js";
import { killTree } from "../proc.js";

const LOG_LINES = 400;

/** Runs steps' processes and keeps their runs' logs. */
export class StepProcesses {
  constructor(private readonly options: Pick<ActionsOptions, "onEvent" | "verbose" | "cancelGraceMs">) {}

  /** Appends a line to the run's log (last LOG_LINES kept); reports annotations, and the line when verbose. */
  log(handle: RunHandle, line: string): void {
    const log = handle.record.log;
    log.push(line);
    if (log.length > LOG_LINES) log.splice(0, log.length - LOG_LINES);
    const annotation = /^::(error|warning|notice)(?:\s[^:]*)?::(.*)$/.exec(line);
    if (annotation) {
      const level = annotation[1] as "error" | "warning" | "notice";
      const message = annotation[2]!.replace(/%0A/g, "\n").replace(/%0D/g, "\r").replace(/%25/g, "%");
      handle.record.annotations.push({ level, message });
      this.options.onEvent?.({ type: "annotation", run: handle.record, level, message });
    }
    if (this.options.verbose) this.options.onEvent?.({ type: "log", run: handle.record, line });
  }

  /** Spawns a step process in its own process group and streams its output into the run log. */
  exec(
    handle: RunHandle,
    command: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number | null },
  ): Promise<number | null> {
    return new Promise((resolvePromise) => {
      if (!existsSync(options.cwd)) mkdirSync(options.cwd, { recursive: true });
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      handle.process = child;
      let timer: NodeJS.Timeout | undefined;
      if (options.timeoutMs) {
        timer = setTimeout(() => {
          this.log(handle, "##[error]The step exceeded its timeout.");
          killGroup(child, "SIGKILL");
        }, options.timeoutMs);
      }
      let partial = { out: "", err: "" };
      const onData = (which: "out" | "err") => (chunk: Buffer) => {
        const text = partial[which] + chunk.toString("utf8");
        const lines = text.split("\n");
        partial = { ...partial, [which]: lines.pop() ?? "" };
        for (const line of lines) this.log(handle, line);
      };
      child.stdout?.on("data", onData("out"));
      child.stderr?.on("data", onData("err"));
      child.on("error", (error) => this.log(handle, `##[error]${error.message}`));
      child.on("close", (code) => {
        if (timer) clearTimeout(timer);
        if (partial.out) this.log(handle, partial.out);
        if (partial.err) this.log(handle, partial.err);
        if (handle.process === child) handle.process = null;
        resolvePromise(code);
      });
      // A cancel that arrived while the step was starting (not one the job knew of when it chose the step).
      if (handle.killed) killGroup(child, "SIGKILL");
      else if (handle.cancelRequested && !handle.cancelAcknowledged) this.signal(handle, false);
    });
  }

  /** Signals the running step: SIGINT, then SIGTERM, then SIGKILL (`immediate`: SIGKILL at once). */
  signal(handle: RunHandle, immediate: boolean): void {
    const child = handle.process;
    if (!child) return;
    if (immediate) {
      killGroup(child, "SIGKILL");
      return;
    }
    const grace = this.options.cancelGraceMs ?? 2500;
    killGroup(child, "SIGINT");
    handle.timers.push(
      setTimeout(() => killGroup(child, "SIGTERM"), grace),
      setTimeout(() => killGroup(child, "SIGKILL"), grace * 2),
    );
  }
}

/** The environment every runner process starts from: no parent secrets, a runner-like HOME. */
export function runnerBaseEnv(home: string): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LANG: process.env.LANG ?? "C.UTF-8",
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    GIT_CONFIG_NOSYSTEM: "1",
  };
  if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
  return env;
}

/** Sends a signal to a child's whole process group (it was spawned detached), falling back to the child. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (signal === "SIGKILL") {
    // A lost runner or a stop: nothing may survive, not even what the step started in groups of its own.
    killTree(child.pid, "SIGKILL");
    return;
  }
  // The leader may have exited while its group lives on; the group is still signalled.
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}
