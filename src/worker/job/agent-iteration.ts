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
import { type ConfiguredPrice, costOf, priceOf } from "../../core/agent/pricing.js";
import type { MeteredUsage } from "../../core/presets/preset-types.js";
import type { AgentUser } from "../isolation/agent-user.js";
import { buildAgentEnv } from "../isolation/agent-env.js";
import { commandPaths } from "../isolation/agent-namespace.js";
import { unreachablePaths } from "../isolation/agent-reach.js";
import { runProcess } from "../processes/process.js";
import { treeDirectory } from "../isolation/tree-directory.js";

export interface AgentRunRequest {
  agent: AgentConfig;
  /** Aborting kills the agent's process tree (the job is being cancelled). */
  signal?: AbortSignal;
  prompt: string;
  issue: number;
  iteration: number;
  timeoutMs: number;
  /** What is left of the task's and the session's budgets for this run: it is stopped when its usage reaches it. */
  cap?: RunCap | null;
  /**
   * Where in the work tree the agent starts (a workspace's directory, relative; its CLI reads the instructions
   * file there); absent: the work tree's root. One that is not a real directory of the tree (missing, or reached
   * through a link) is refused: the agent starts at the root, and `directoryRefused` says so.
   */
  directory?: string | null;
}

/** A run's share of the budgets: tokens and US dollars (null: no limit), and the prices to value tokens with. */
export interface RunCap {
  tokens: number | null;
  usd: number | null;
  prices: readonly ConfiguredPrice[];
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
  /** Why the worker stopped the run mid-way: its streamed usage reached its cap (`cap`). */
  budgetStop?: string;
  /** Why the agent started at the work tree's root instead of the `directory` asked for. */
  directoryRefused?: string;
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
    takeBack(options?: { capture?: boolean }): Promise<unknown>;
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
    // A workspace's directory that is not a real directory of the tree: the agent starts at the root (and is told).
    const start = request.directory ? await treeDirectory(options.workdir, request.directory) : null;
    const workdir = start && "dir" in start ? start.dir : options.workdir;
    const directoryRefused =
      start && "refused" in start ? `${start.refused}; the agent started at its root` : null;
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
      workdir,
      home,
      model: request.agent.model,
      args: request.agent.args,
      command: request.agent.command,
      maxCostUsd: request.cap?.usd ?? null,
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
    // The run's usage as it streams (the preset's meter): reaching the cap stops it, as a cancel would.
    const meter =
      request.cap && (request.cap.tokens !== null || request.cap.usd !== null)
        ? preset.usageMeter?.()
        : undefined;
    const stop = new AbortController();
    const forward = () => stop.abort();
    if (request.signal?.aborted) stop.abort();
    else request.signal?.addEventListener("abort", forward, { once: true });
    let metered: MeteredUsage | null = null;
    let budgetStop: string | null = null;
    const onStdoutLine = (line: string) => {
      options.onLine?.(line);
      if (!meter || budgetStop !== null) return;
      const reading = meter(line);
      if (!reading) return;
      metered = reading;
      budgetStop = overCap(reading, request.cap!, request.agent.model);
      if (budgetStop !== null) stop.abort();
    };
    await options.boundary?.handOver();
    const result = await runProcess({
      ...(options.boundary ? { runAs: options.boundary.user } : {}),
      command: invocation.command,
      args: invocation.args,
      cwd: workdir,
      env,
      ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
      timeoutMs: request.timeoutMs,
      signal: stop.signal,
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
      onStdoutLine,
      ...(options.onLine ? { onStderrLine: options.onLine } : {}),
    }).finally(() => {
      request.signal?.removeEventListener("abort", forward);
      // The agent's work comes back as objects while the tree is still its own (task-checkout.ts).
      return options.boundary?.takeBack({ capture: true });
    });
    let output = preset.parseOutput(result.stdout, result.stderr, result.exitCode);
    // A run stopped mid-way has no final report: what the meter counted is what it used.
    if (budgetStop !== null && metered)
      output = withMetered(output, metered, request.cap!, request.agent.model);
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
      ...(budgetStop !== null ? { budgetStop } : {}),
      ...(directoryRefused ? { directoryRefused } : {}),
    };
  };
}

/** The US dollars of a reading: the CLI's own price, else its tokens at the model's price; null when unknown. */
function usdOf(reading: MeteredUsage, cap: RunCap, model: string | null): number | null {
  if (reading.costUsd !== null) return reading.costUsd;
  const price = priceOf(reading.model ?? model, cap.prices);
  return price ? costOf(reading, price.price) : null;
}

/** Why a reading reached the cap; null while it is under. */
function overCap(reading: MeteredUsage, cap: RunCap, model: string | null): string | null {
  const tokens = reading.input + reading.output;
  if (cap.tokens !== null && tokens >= cap.tokens)
    return `the run's usage reached ${tokens} tokens (budget ${cap.tokens} tokens left)`;
  const usd = usdOf(reading, cap, model);
  if (cap.usd !== null && usd !== null && usd >= cap.usd)
    return `the run's usage reached $${usd.toFixed(2)} (budget $${cap.usd.toFixed(2)} left)`;
  return null;
}

/** The larger of what the output reports and what the meter counted. */
function withMetered(
  output: AgentOutput,
  reading: MeteredUsage,
  cap: RunCap,
  model: string | null,
): AgentOutput {
  const usd = usdOf(reading, cap, model) ?? 0;
  return {
    ...output,
    usage: {
      input: Math.max(output.usage.input, reading.input),
      output: Math.max(output.usage.output, reading.output),
    },
    costUsd: Math.max(output.costUsd, usd),
  };
}

const RAW_KEEP = 1024 * 1024;

/** The end of stdout and of stderr: errors are printed last. */
function rawOutput(stdout: string, stderr: string): string {
  const out = stdout.length > RAW_KEEP ? stdout.slice(-RAW_KEEP) : stdout;
  const err = stderr.length > RAW_KEEP / 4 ? stderr.slice(-RAW_KEEP / 4) : stderr;
  return err.trim() ? `${out}\n${err}` : out;
}
