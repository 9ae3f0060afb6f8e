/**
 * Quality commands: the configured list, or what the repository shows it uses — package.json scripts (test,
 * lint, typecheck, build) that exist, else the test framework its package.json or config files show (Vitest,
 * Jest, Playwright, Cypress: test-frameworks.ts), pytest (with `uv run` or `poetry run` in such a project), `go
 * test ./...`, `cargo test`, Gradle's `check` or Maven's `verify` (through the project's wrapper), `make test`. Each runs
 * with `sh -c` in the agent's work tree, as the agent's OS user and in the agent's kind of environment (never the
 * GitHub token): the commands run code the agent wrote. A timeout kills its process tree, and its output is kept
 * (the tail) for the next prompt. A failing command is run again up to `reruns` times before it counts (a flaky
 * test passes on a re-run; the result says it was flaky).
 */
import { lastLines } from "../../core/presets/preset-helpers.js";
import type { AgentUser } from "../isolation/agent-user.js";
import { type ProcessResult, runProcess } from "./process.js";
import { detectTestFrameworks } from "./test-frameworks.js";
import { directoryFiles, type ProjectFiles } from "./project-files.js";
import { jvmBuild, pythonToolchain } from "./toolchain-commands.js";
import { trustedShell } from "../isolation/trusted-binaries.js";

export interface QualityCommandResult {
  command: string;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The end of the combined output, for the prompt and the PR body. */
  output: string;
  /** Runs it took: 1, or more when it failed and was run again (`quality.reruns`). */
  runs?: number;
  /** Failed at first and passed on a re-run: a flaky command, reported as such. */
  flaky?: boolean;
  /** A short measure shown beside the command in the PR body (the coverage gate's percentage). */
  detail?: string;
}

const NPM_DEFAULT_TEST = /no test specified/;

/** Detects the quality commands of a checkout. Order: lint, typecheck, build, test (cheap checks first). */
export async function detectQualityCommands(project: string | ProjectFiles): Promise<string[]> {
  const files = typeof project === "string" ? directoryFiles(project) : project;
  const readText = (name: string) => files.text(name);
  const exists = (name: string) => files.has(name);
  const commands: string[] = [];
  const pkgText = await readText("package.json");
  if (pkgText) {
    try {
      const pkg = JSON.parse(pkgText) as { scripts?: Record<string, unknown> };
      const scripts = pkg.scripts !== null && typeof pkg.scripts === "object" ? pkg.scripts : {};
      const runner = (await exists("pnpm-lock.yaml")) ? "pnpm" : (await exists("yarn.lock")) ? "yarn" : "npm";
      for (const name of ["lint", "typecheck", "build", "test"]) {
        const script = scripts[name];
        if (typeof script !== "string" || script.trim() === "") continue;
        if (name === "test" && NPM_DEFAULT_TEST.test(script)) continue;
        commands.push(
          runner === "npm" ? (name === "test" ? "npm test" : `npm run ${name}`) : `${runner} run ${name}`,
        );
      }
      // No test script of its own: the test frameworks the project shows, each run non-interactively.
      if (!commands.some((c) => c === "npm test" || c.endsWith(" run test")))
        commands.push(...(await detectTestFrameworks(files, pkg, runner)));
    } catch {
      /* a broken package.json is the agent's to fix; the gate cannot read it */
    }
  }

  const pyproject = await readText("pyproject.toml");
  const setupCfg = await readText("setup.cfg");
  const toxIni = await readText("tox.ini");
  const usesPytest =
    (await exists("pytest.ini")) ||
    (await exists("conftest.py")) ||
    (pyproject?.includes("[tool.pytest") ?? false) ||
    (setupCfg?.includes("[tool:pytest]") ?? false) ||
    (toxIni?.includes("[pytest]") ?? false);
  // In the environment the setup installed into (toolchain-commands.ts).
  if (usesPytest) commands.push(`${(await pythonToolchain(files)).run}python -m pytest -q`);

  if (await exists("go.mod")) commands.push("go test ./...");
  if (await exists("Cargo.toml")) commands.push("cargo test");
  const jvm = await jvmBuild(files);
  if (jvm) commands.push(jvm.check);

  const makefile = (await readText("Makefile")) ?? (await readText("makefile"));
  if (makefile && /^test\s*:/m.test(makefile)) commands.push("make test");
  return commands;
}

interface RunQualityOptions {
  commands: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * Time for the whole step: every command and every re-run share it, so an iteration's quality step ends within
   * it however many commands and re-runs there are (src/core/agent/job-silence.ts counts on that).
   */
  timeoutMs: number;
  /** The clock (tests pass their own). */
  now?: () => number;
  /** Characters of output kept per command. */
  keepChars?: number;
  /**
   * Times a failing command is run again before it counts as failing (flaky tests); 0 runs each once. A command
   * stopped by its timeout is not run again: a hang is not a flake, and each re-run could take as long.
   */
  reruns?: number;
  /** Run as the agent's OS user (agent-user.ts): what the commands execute is the agent's code. */
  runAs?: Pick<AgentUser, "wrap" | "killAll">;
  run?: (options: Parameters<typeof runProcess>[0]) => Promise<ProcessResult>;
}

/** Runs every command (all of them, so one iteration's feedback names every failure). */
export async function runQualityCommands(options: RunQualityOptions): Promise<QualityCommandResult[]> {
  const results: QualityCommandResult[] = [];
  const reruns = Math.max(0, Math.floor(options.reruns ?? 0));
  const now = options.now ?? Date.now;
  const deadline = now() + options.timeoutMs;
  const left = () => deadline - now();
  for (const command of options.commands) {
    if (left() <= 0) {
      results.push(notRun(command, options.timeoutMs));
      continue;
    }
    let result = await runOnce(command, options, left());
    let runs = 1;
    const firstFailure = result.passed ? null : result;
    while (!result.passed && !result.timedOut && runs <= reruns && left() > 0) {
      result = await runOnce(command, options, left());
      runs++;
    }
    if (runs === 1) {
      results.push(result);
      continue;
    }
    const flaky = result.passed;
    const output = flaky
      ? `[flaky: failed ${runs - 1} time${runs === 2 ? "" : "s"}, passed on run ${runs}; the first failure:]\n${firstFailure!.output}`
      : `[failed all ${runs} runs; the last one:]\n${result.output}`;
    results.push({ ...result, output, runs, flaky });
  }
  return results;
}

/** A command the step's time ran out before: it fails, saying so. */
function notRun(command: string, timeoutMs: number): QualityCommandResult {
  return {
    command,
    passed: false,
    exitCode: null,
    timedOut: true,
    durationMs: 0,
    output: `[not run: the quality step's ${Math.round(timeoutMs / 1000)} s were used up by the commands before it]`,
  };
}

async function runOnce(
  command: string,
  options: RunQualityOptions,
  timeoutMs: number,
): Promise<QualityCommandResult> {
  const run = options.run ?? runProcess;
  const keep = options.keepChars ?? 6_000;
  const result = await run({
    command: trustedShell(),
    args: ["-c", command],
    cwd: options.cwd,
    env: options.env,
    timeoutMs,
    maxOutputBytes: 2 * 1024 * 1024,
    ...(options.runAs ? { runAs: options.runAs } : {}),
  });
  const combined = [result.stdout, result.stderr].filter((s) => s.trim()).join("\n");
  const passed = result.exitCode === 0 && !result.timedOut;
  let output = lastLines(combined, 200, keep);
  if (result.timedOut) output += `\n[killed after ${Math.round(timeoutMs / 1000)} s]`;
  if (result.spawnError) output += `\n[could not start: ${result.spawnError}]`;
  return {
    command,
    passed,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    output,
  };
}
