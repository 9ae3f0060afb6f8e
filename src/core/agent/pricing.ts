/**
 * What agent tokens cost, for the CLIs that report tokens but no price (Codex, Gemini CLI; OpenCode for a model
 * it does not know). Prices are US dollars per million tokens, the providers' published list prices for
 * standard (non-batch, uncached) API use, input and output; `prices` in the configuration overrides or adds
 * models (a negotiated price, a new model, a proxy's own name for one). Where neither knows the model, a USD
 * budget cannot limit that agent, and a configuration that sets one for it is refused
 * (src/core/config/cross-field-checks.ts): a cap that cannot be enforced is not a cap.
 *
 * The default prices are in each preset's record (`prices` in src/core/presets/<name>.ts), published at
 * anthropic.com/pricing, openai.com/api/pricing, ai.google.dev/gemini-api/docs/pricing (checked November 2026).
 */
import { type ModelPrice, PRESETS } from "../presets/index.js";

/** A configured price (`prices` in the configuration). */
export interface ConfiguredPrice {
  model: string;
  input: number;
  output: number;
}

/** Every preset's model prices together (a model is priced alike whichever CLI runs it). */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.assign(
  {},
  ...PRESETS.map((preset) => preset.prices),
);

/**
 * Presets whose CLI prices its own usage (Claude Code's `total_cost_usd`, OpenCode's and Aider's cost for the
 * models they know, a custom command's `autopilot-usage` line). The others report tokens only.
 */
export const SELF_PRICING_PRESETS: ReadonlySet<string> = new Set(
  PRESETS.filter((preset) => preset.selfPricing).map((preset) => preset.name),
);

/** `openai/gpt-5` (OpenCode's provider/model), `models/gemini-2.5-pro`, `Claude-Sonnet-4-5` → the bare name. */
function bareModel(model: string): string {
  const trimmed = model.trim().toLowerCase();
  const slash = trimmed.lastIndexOf("/");
  return slash >= 0 ? trimmed.slice(slash + 1) : trimmed;
}

/**
 * The price of a model: the configured entry, else the default table; by exact name, then by the longest name
 * the model extends with `-…` (a dated release such as `claude-sonnet-4-5-20250929`, a preview such as
 * `gemini-2.5-flash-preview-05-20`). Null when neither knows it.
 */
export function priceOf(
  model: string | null | undefined,
  overrides: readonly ConfiguredPrice[] = [],
): { model: string; price: ModelPrice } | null {
  if (!model) return null;
  const tables: Readonly<Record<string, ModelPrice>>[] = [
    Object.fromEntries(
      overrides.map((entry) => [
        entry.model.trim().toLowerCase(),
        { input: entry.input, output: entry.output },
      ]),
    ),
    DEFAULT_PRICES,
  ];
  for (const candidate of [model.trim().toLowerCase(), bareModel(model)]) {
    for (const table of tables) {
      const exact = table[candidate];
      if (exact) return { model: candidate, price: exact };
      const prefix = Object.keys(table)
        .filter((name) => candidate.startsWith(`${name}-`))
        .sort((a, b) => b.length - a.length)[0];
      if (prefix) return { model: prefix, price: table[prefix]! };
    }
  }
  return null;
}

/** USD for a run's tokens, rounded to a millionth of a dollar. */
export function costOf(usage: { input: number; output: number }, price: ModelPrice): number {
  const usd = (usage.input * price.input + usage.output * price.output) / 1_000_000;
  return Math.round(usd * 1e6) / 1e6;
}

/** An agent a USD budget cannot limit: its CLI reports no price and no price is known for its model. */
interface UnpricedAgent {
  preset: string;
  model: string | null;
}

/** The configured agents whose cost cannot be known (so only the token budget limits them). */
export function unpricedAgents(
  agents: readonly { preset: string; model: string | null }[],
  overrides: readonly ConfiguredPrice[] = [],
): UnpricedAgent[] {
  return agents
    .filter((agent) => !SELF_PRICING_PRESETS.has(agent.preset) && priceOf(agent.model, overrides) === null)
    .map((agent) => ({ preset: agent.preset, model: agent.model }));
}

/**
 * Dashboard notes for USD budgets that cannot apply: one per configured agent whose cost is unknown, when a
 * task or session USD budget is set.
 */
export function usdBudgetNotes(config: {
  agents: {
    primary: { preset: string; model: string | null };
    fallbacks: { preset: string; model: string | null }[];
  };
  bestOf?: { candidates: { preset: string; model: string | null }[] };
  budgets: { task: { usd: number | null }; session: { usd: number | null } };
  prices: readonly ConfiguredPrice[];
}): string[] {
  if (config.budgets.task.usd === null && config.budgets.session.usd === null) return [];
  return unpricedAgents(
    [config.agents.primary, ...config.agents.fallbacks, ...(config.bestOf?.candidates ?? [])],
    config.prices,
  ).map(
    (agent) =>
      `The USD budget cannot apply to the ${agent.preset} agent (${
        agent.model ? `no price known for model ${agent.model}` : "no model set, so no price is known"
      }): its CLI reports no cost. Its tokens count against the token budget; add the model under \`prices\` to price them.`,
  );
}
