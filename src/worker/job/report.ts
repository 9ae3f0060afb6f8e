/**
 * What the job says about itself while it runs: the progress comment on the task issue (its result marker and
 * warnings) and the progress notes the agent reads at each iteration.
 */
import type { Signal } from "../../core/agent/signals.js";
import { agentLabel } from "../../core/config/index.js";
import { describeSignal } from "./iteration-signal.js";
import { errorMessage, type JobContext } from "./job-context.js";
import { appendProgressNote } from "./progress-notes.js";
import { renderProgressComment } from "./progress-comment.js";

/** The hosts the agent's proxy refused so far, into the result (the progress comment and the job's outputs). */
export function noteRefusedHosts(ctx: JobContext): void {
  const refused = ctx.deps.network?.refused() ?? [];
  if (refused.length) ctx.state.result.refusedHosts = refused.slice(0, 20);
}

/** The agent in use and why it is not the primary, into the result marker the controller reads. */
function noteAgent(ctx: JobContext): void {
  const agent = ctx.agents[ctx.state.agentIndex];
  const fallback = ctx.state.agentFallback;
  if (!agent) delete ctx.state.result.agent;
  else
    ctx.state.result.agent = {
      name: agentLabel(agent).slice(0, 120),
      fallback: fallback?.reason.slice(0, 300) ?? null,
      from: fallback?.from.slice(0, 60) ?? null,
    };
}

export function progressBody(ctx: JobContext): string {
  noteRefusedHosts(ctx);
  noteAgent(ctx);
  const agent = ctx.agents[ctx.state.agentIndex];
  return renderProgressComment({
    result: ctx.state.result,
    elapsedMs: ctx.now() - ctx.startedAt,
    runUrl: ctx.inputs.runUrl ?? null,
    agent: agent ? agentLabel(agent) : "none",
    warnings: ctx.state.warnings,
    transcript: ctx.deps.transcript?.artifact ?? null,
  });
}

/** Rewrites the progress comment with the result as it stands (not in a dry run); failing only warns. */
export async function updateProgress(ctx: JobContext): Promise<void> {
  const { state } = ctx;
  state.result.updatedAt = new Date(ctx.now()).toISOString();
  if (state.progressCommentId === null || ctx.config.dryRun) return;
  try {
    await ctx.deps.github.updateComment(state.progressCommentId, progressBody(ctx));
  } catch (error) {
    ctx.warn(`could not update the progress comment: ${errorMessage(error)}`);
  }
}

/** One line of the progress notes: what the iteration's agent signalled and what the job made of it. */
export async function appendNote(
  ctx: JobContext,
  iteration: number,
  preset: string,
  signal: Signal,
  outcome: string,
): Promise<void> {
  const note = {
    attempt: ctx.inputs.attempt,
    iteration,
    at: ctx.now(),
    preset,
    signal: describeSignal(signal),
    outcome,
  };
  await appendProgressNote(ctx.tree, note, (message) => ctx.warn(message));
}
