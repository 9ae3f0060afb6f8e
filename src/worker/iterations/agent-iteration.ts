/**
 * Runs one agent iteration as a real process: the prompt goes to a file outside the work tree, the preset
 * builds the command line, the environment is the allow-list of agent-env.ts, and the process tree is killed at
 * the iteration timeout. With a boundary (boundary.ts) the process runs as the agent's OS user: its directories
 * are handed over before it starts, and after it ends every process of that user is killed and the directories
 * are taken back.
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AgentConfig } from "../../core/config/index.js";
import { type AgentOutput, getPreset, type PresetName } from "../../core/presets/index.js";
import type { AgentUser } from "../isolation/agent-user.js";
import { buildAgentEnv } from "../isolation/agent-env.js";
import { commandPaths } from "../isolation/agent-namespace.js";
import { unreachablePaths } from "../isolation/agent-reach.js";
import { runProcess } from "../processes/process.js";

export interface AgentRunRequest {
  agent: AgentConfig;
  /** Aborting kills the agent's process tree (the job is being cancelled). */
  signal?: AbortSignal;
  prompt: string;
  issue: number;
  iteration: number;
  timeoutMs: number;
}

export interface AgentRunResult {
  preset: PresetName;
  output: AgentOutput;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  /** The CLI could not be started (not installed, not executable). */
  spawnError?: string;
  /** Configured env names that were refused. */
  refusedEnv: { name: string; why: string }[];
  /** What the CLI printed (stdout then stderr, capped), for the agent-output classifier. */
  rawOutput: string;
}

export type AgentRunner = (request: AgentRunRequest) => Promise<AgentRunResult>;

interface AgentRunnerOptions {
  workdir: string;
  /** Outside the work tree: prompt files (and, by default, the agent's HOME and TMPDIR). */
  scratchDir: string;
  home?: string;
  tmpdir?: string;
  /** Runs the agent as its own OS user (absent: as the worker's user, in tests of the runner alone). */
  boundary?: {
    handOver(): Promise<void>;
    takeBack(): Promise<unknown>;
    user: Pick<AgentUser, "wrap" | "killAll" | "isolated" | "name" | "uid">;
  };
  parentEnv: NodeJS.ProcessEnv;
  /** Values that must never reach the agent (the GitHub token). */
  secretValues: string[];
  killGraceMs?: number;
  maxOutputBytes?: number;
  onLine?: (line: string) => void;
}

export function createAgentRunner(options: AgentRunnerOptions): AgentRunner {
  /** Command lines whose needed paths were found reachable. */
  const reached = new Set<string>();
  return async (request) => {
    const preset = getPreset(request.agent.preset);
    const home = options.home ?? path.join(options.scratchDir, "home");
    const tmpdir = options.tmpdir ?? path.join(options.scratchDir, "tmp");
    await mkdir(home, { recursive: true });
    await mkdir(tmpdir, { recursive: true });
    const promptFile = path.join(options.scratchDir, `prompt-${request.iteration}.md`);
    // Readable by the agent's user, writable only by the worker.
    const mode = options.boundary?.user.isolated ? 0o644 : 0o600;
    await writeFile(promptFile, request.prompt, { mode });
    await chmod(promptFile, mode);

    const invocation = preset.buildInvocation({
      prompt: request.prompt,
      promptFile,
      workdir: options.workdir,
      home,
      model: request.agent.model,
      args: request.agent.args,
      command: request.agent.command,
    });
    if (invocation.env.CODEX_HOME) await mkdir(invocation.env.CODEX_HOME, { recursive: true });
    const { env, refused } = buildAgentEnv({
      parentEnv: options.parentEnv,
      presetKeys: preset.keyEnv,
      ...(preset.keyAliases ? { keyAliases: preset.keyAliases } : {}),
      extraNames: request.agent.env,
      home,
      tmpdir,
      additions: {
        ...invocation.env,
        CI: "true",
        AUTOPILOT_PROMPT_FILE: promptFile,
        AUTOPILOT_ISSUE: String(request.issue),
        AUTOPILOT_ITERATION: String(request.iteration),
      },
      secretValues: options.secretValues,
    });

    // Once per command line, before its first run: a path it needs that the agent's user cannot read fails the
    // job at once (a spawn error), naming the path and why (agent-reach.ts).
    // (The prompt file's name changes at each iteration; the rest of the line does not.)
    const line = [invocation.command, ...invocation.args].join("\0").replaceAll(promptFile, "");
    if (options.boundary?.user.isolated && !reached.has(line)) {
      const missing = await unreachablePaths(
        options.boundary.user,
        commandPaths(invocation.command, invocation.args).filter((p) => p !== promptFile),
      );
      if (missing.length > 0) {
        const named = missing.map((m) => `${m.path}: ${m.why}`).join("; ");
        return {
          preset: request.agent.preset,
          output: preset.parseOutput("", "", null),
          exitCode: null,
          signal: null,
          timedOut: false,
          durationMs: 0,
          refusedEnv: refused,
          rawOutput: "",
          spawnError: `the agent's user ${options.boundary.user.name ?? ""} cannot reach what its command needs — ${named}. Install it where that user can read it, or make it readable`,
        };
      }
      reached.add(line);
    }
    await options.boundary?.handOver();
    const result = await runProcess({
      ...(options.boundary ? { runAs: options.boundary.user } : {}),
      command: invocation.command,
      args: invocation.args,
      cwd: options.workdir,
      env,
      ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
      timeoutMs: request.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
      ...(options.onLine ? { onStdoutLine: options.onLine, onStderrLine: options.onLine } : {}),
    }).finally(() => options.boundary?.takeBack());
    const output = preset.parseOutput(result.stdout, result.stderr, result.exitCode);
    return {
      preset: request.agent.preset,
      output,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      refusedEnv: refused,
      rawOutput: rawOutput(result.stdout, result.stderr),
      ...(result.spawnError ? { spawnError: result.spawnError } : {}),
    };
  };
}

const RAW_KEEP = 1024 * 1024;

/** The end of stdout and of stderr: errors are printed last. */
function rawOutput(stdout: string, stderr: string): string {
  const out = stdout.length > RAW_KEEP ? stdout.slice(-RAW_KEEP) : stdout;
  const err = stderr.length > RAW_KEEP / 4 ? stderr.slice(-RAW_KEEP / 4) : stderr;
  return err.trim() ? `${out}\n${err}` : out;
}
