/**
 * The quality gate on a completion claim: the work committed first (the commands' leftovers are reset away, the
 * work is not), then the repository's quality commands run in the sandbox — the configured or detected ones,
 * per workspace the change touches — with reruns for flaky commands and the coverage threshold.
 */
import type { QualityOutcome } from "../../core/agent/iteration.js";
import type { Signal } from "../../core/agent/signals.js";
import { qualityScopes } from "../../core/gates/workspace-scope.js";
import type { QualityCommandResult } from "../processes/quality.js";
import type { QualityGateOptions } from "../worker-deps.js";
import { commitWork } from "./commit.js";
import type { JobContext } from "./job-context.js";

/**
 * The quality commands a change runs: with `workspaces`, those of each workspace it touches (in its
 * directory) and the top-level ones only for shared files (src/core/gates/workspace-scope.ts); without, the
 * top-level ones. Every scope shares the step's time. The coverage gate reads the root's report, so it goes
 * with the top-level commands.
 */
async function runScopes(
  ctx: JobContext,
  rootCommands: string[],
  reruns: number,
  coverage: QualityGateOptions["coverage"],
): Promise<QualityCommandResult[]> {
  const { workspaces } = ctx.config;
  const scopes =
    workspaces.length > 0
      ? qualityScopes(await ctx.deps.git.changedPaths(ctx.state.setup!.base), workspaces, rootCommands)
      : [{ workspace: null, directory: null, commands: rootCommands }];
  const deadline = ctx.now() + ctx.config.iterationTimeoutMinutes * 60_000;
  const results: QualityCommandResult[] = [];
  for (const scope of scopes) {
    if (scope.commands.length === 0) continue;
    const where = scope.workspace === null ? "" : ` (workspace ${scope.workspace})`;
    ctx.log.info(`quality commands${where}: ${scope.commands.join(" && ")}`);
    const ran = await ctx.deps.quality.run(
      scope.commands,
      Math.max(1_000, deadline - ctx.now()),
      { reruns, coverage: scope.workspace === null ? coverage : null },
      scope.directory,
    );
    // A workspace's command is shown as it is reproduced: from the root, in its directory.
    results.push(
      ...ran.map((r) => (scope.directory ? { ...r, command: `cd ${scope.directory} && ${r.command}` } : r)),
    );
  }
  if (workspaces.length > 0 && !scopes.some((s) => s.workspace === null) && coverage)
    ctx.log.info(
      "quality.coverage: this change touches workspaces only; the root's coverage report is not read",
    );
  return results;
}

/** Runs the quality commands; writes `qualitySource`. */
async function runQuality(ctx: JobContext): Promise<QualityCommandResult[]> {
  const configured = ctx.config.qualityCommands;
  let commands: string[];
  if (configured === "auto") {
    commands = await ctx.deps.quality.detect(ctx.tree);
    ctx.state.qualitySource = commands.length ? "detected" : "none";
  } else {
    commands = configured;
    ctx.state.qualitySource = "configured";
  }
  const { reruns, coverage } = ctx.config.quality;
  if (commands.length === 0 && ctx.config.workspaces.length === 0) {
    if (coverage.threshold === 0) return [];
    // A coverage threshold with nothing to write the report is a gate that cannot pass, not one that is off.
    return [
      {
        command: "quality.coverage",
        passed: false,
        exitCode: null,
        timedOut: false,
        durationMs: 0,
        output:
          `quality.coverage.threshold is ${coverage.threshold}% but no quality command ran to write a coverage ` +
          "report: set qualityCommands (or add the project's test script) so the tests run with coverage.",
      },
    ];
  }
  const results = await runScopes(ctx, commands, reruns, coverage.threshold > 0 ? coverage : null);
  // Build output and caches the commands left behind are not the agent's work.
  await ctx.deps.git.resetWorkTree();
  for (const result of results) {
    ctx.log.info(
      `${result.passed ? "pass" : "FAIL"}: ${result.command} (${Math.round(result.durationMs / 1000)} s)`,
    );
    if (result.flaky)
      ctx.warn(`flaky: \`${result.command}\` failed before it passed on run ${result.runs ?? 2}`);
  }
  return results;
}

/**
 * On a completion claim: commits the work, then runs the quality commands (writes `quality`). The work is
 * pushed with the gate's note when the iteration ends (outcome.ts).
 */
export async function qualityGate(
  ctx: JobContext,
  iteration: number,
  signal: Signal,
): Promise<{ outcome: QualityOutcome; text: string }> {
  if (signal.kind !== "complete") return { outcome: "not_run", text: "" };
  await commitWork(ctx, iteration, signal);
  const quality = await runQuality(ctx);
  ctx.state.quality = quality;
  const outcome: QualityOutcome =
    quality.length === 0 ? "not_run" : quality.every((q) => q.passed) ? "pass" : "fail";
  const text = quality.length
    ? quality.map((q) => `${q.passed ? (q.flaky ? "pass (flaky)" : "pass") : "FAIL"} ${q.command}`).join(", ")
    : "no quality commands";
  return { outcome, text };
}
