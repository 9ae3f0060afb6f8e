/**
 * What agent tokens cost, for the CLIs that report tokens but no price (Codex, Gemini CLI; OpenCode for a model
 * it does not know). Prices are US dollars per million tokens, the providers' published list prices for
 * standard (non-batch, uncached) API use, input and output; `prices` in the configuration overrides or adds
 * models (a negotiated price, a new model, a proxy's own name for one). Where neither knows the model, a USD
 * budget cannot limit that agent: the token budget still does, and the dashboard says so.
 *
 * Published at: anthropic.com/pricing, openai.com/api/pricing, ai.google.dev/gemini-api/docs/pricing (checked
 * November 2026). Long-context tiers (Gemini 2.5 Pro above 200k prompt tokens) are not modelled: the lower
 * price is used, so a budget may run a little late there, never early.
 */

/** A configured price (`prices` in the configuration). */
export interface ConfiguredPrice {
  model: string;
  input: number;
  output: number;
}

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-sonnet-4-5": { input: 3, output: 15 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  // OpenAI
  "gpt-5": { input: 1.25, output: 10 },
  "gpt-5-codex": { input: 1.25, output: 10 },
  "gpt-5-mini": { input: 0.25, output: 2 },
  "gpt-5-nano": { input: 0.05, output: 0.4 },
  "gpt-4.1": { input: 2, output: 8 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  "o4-mini": { input: 1.1, output: 4.4 },
  // Google
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
};

/**
 * Presets whose CLI prices its own usage (Claude Code's `total_cost_usd`, OpenCode's and Aider's cost for the
 * models they know, a custom command's `autopilot-usage` line). The others report tokens only.
 */
export const SELF_PRICING_PRESETS: ReadonlySet<string> = new Set([
  "claude-code",
  "opencode",
  "aider",
  "custom",
]);

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
export interface UnpricedAgent {
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
  budgets: { task: { usd: number | null }; session: { usd: number | null } };
  prices: readonly ConfiguredPrice[];
}): string[] {
  if (config.budgets.task.usd === null && config.budgets.session.usd === null) return [];
  return unpricedAgents([config.agents.primary, ...config.agents.fallbacks], config.prices).map(
    (agent) =>
      `The USD budget cannot apply to the ${agent.preset} agent (${
        agent.model ? `no price known for model ${agent.model}` : "no model set, so no price is known"
      }): its CLI reports no cost. Its tokens count against the token budget; add the model under \`prices\` to price them.`,
  );
}
