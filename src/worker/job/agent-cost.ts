/**
 * Gives a run's tokens a price when its CLI reported none (Codex and Gemini CLI never do; OpenCode reports 0
 * for a model it does not know): from the configured `prices`, then the built-in table (src/core/agent/pricing.ts),
 * by the model the CLI says it used or else the configured one. A run whose model is priced nowhere keeps
 * cost 0; its tokens still count against the token budget.
 */
import type { AgentConfig } from "../../core/config/index.js";
import { type ConfiguredPrice, costOf, priceOf } from "../../core/agent/pricing.js";
import type { AgentRunResult } from "./agent-iteration.js";

export function priceRun(
  run: AgentRunResult,
  agent: AgentConfig,
  prices: readonly ConfiguredPrice[],
): AgentRunResult {
  const { usage, costUsd } = run.output;
  if (costUsd > 0 || usage.input + usage.output === 0) return run;
  const found = priceOf(run.output.model ?? agent.model, prices) ?? priceOf(agent.model, prices);
  if (!found) return run;
  return { ...run, output: { ...run.output, costUsd: costOf(usage, found.price) } };
}
