/**
 * What an agent's failed run said of itself (auth, quota, a limit and its reset), read from its raw output by
 * the classifier (src/core/agent/classify.ts) at the job's clock; a usage limit without a reset gets the
 * configured wait (`rateLimit.usageLimitWaitMs`). Shared by the author's turn and the reviewer's run.
 */
import { classifyAgentOutput, withDefaultReset } from "../../core/agent/classify.js";
import type { AgentRunResult } from "./agent-iteration.js";
import type { JobContext } from "./job-context.js";

export function runErrorClass(ctx: JobContext, run: AgentRunResult) {
  const at = new Date(ctx.now());
  const found = classifyAgentOutput(run.rawOutput, at);
  return found.kind === "none" ? null : withDefaultReset(found, at, ctx.config.rateLimit.usageLimitWaitMs);
}
