/**
 * The job's meters and what they allow: tokens and dollars spent (this job's and earlier attempts'), and the cap
 * on the next agent run from the task's budget and this worker's share of the session's.
 */
import type { AgentRunResult, RunCap } from "./agent-iteration.js";
import type { JobContext } from "./job-context.js";

/** The result's totals: what earlier attempts carried plus what this job spent. */
export function syncUsage(ctx: JobContext): void {
  const { carried, jobUsage, result } = ctx.state;
  result.tokens = { input: carried.input + jobUsage.input, output: carried.output + jobUsage.output };
  result.costUsd = Math.round((carried.costUsd + jobUsage.costUsd) * 1e6) / 1e6;
}

/** Counts one agent run's usage (priced: agent-cost.ts) into the job's meters. */
export function addUsage(ctx: JobContext, run: AgentRunResult): void {
  const usage = ctx.state.jobUsage;
  usage.input += run.output.usage.input;
  usage.output += run.output.usage.output;
  usage.costUsd += run.output.costUsd;
  syncUsage(ctx);
}

/** The task's spend so far, as the session's budget counts it. */
export function spend(ctx: JobContext): { issue: number; tokens: number; usd: number } {
  const { tokens, costUsd } = ctx.state.result;
  return { issue: ctx.inputs.issue, tokens: tokens.input + tokens.output, usd: costUsd };
}

/**
 * What the next run may use: what is left of the task's budget and of this worker's share of the session's
 * (read at the iteration boundary); null when neither sets a limit.
 */
export function runCap(ctx: JobContext): RunCap | null {
  const used = spend(ctx);
  const task = ctx.config.budgets.task;
  const { sessionLeft } = ctx.state;
  const smaller = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  const tokens = smaller(
    task.tokens === null ? null : Math.max(0, task.tokens - used.tokens),
    sessionLeft?.tokens ?? null,
  );
  const usd = smaller(task.usd === null ? null : Math.max(0, task.usd - used.usd), sessionLeft?.usd ?? null);
  return tokens === null && usd === null ? null : { tokens, usd, prices: ctx.config.prices };
}
