/**
 * Cross-field checks of the configuration: rules between keys that a single key's schema cannot state. They
 * run even when other keys are invalid, so one error lists every problem.
 */
import type { z } from "zod";
import { FORBIDDEN_AGENT_ENV, PROMPT_FILE_PLACEHOLDER } from "./config-constants.js";
import { formatPath, getAt, isPlainObject } from "./key-paths.js";
import { unpricedAgents } from "../agent/pricing.js";
import { DEFAULT_PRESET } from "../presets/index.js";

type Path = (string | number)[];
type Ctx = z.core.$RefinementCtx<unknown>;

/** True when some earlier issue is at `path` or inside it: then its value is not trusted for comparisons. */
function hasIssueAt(ctx: Ctx, path: Path): boolean {
  return ctx.issues.some((issue) => path.every((segment, i) => issue.path?.[i] === segment));
}

function crossIssue(ctx: Ctx, path: Path, input: unknown, message: string, expected: string): void {
  // zod drops `input` from finished issues; `params.value` keeps the value for "found … , the default".
  ctx.addIssue({ code: "custom", path, input, message, params: { expected, value: input } });
}

/** An agent with preset `custom` needs a command with the prompt-file placeholder; no token in `env`. */
export function checkAgent(agent: unknown, ctx: Ctx): void {
  if (!isPlainObject(agent)) return;
  const { preset, command, env } = agent;
  if (preset === "custom" && !hasIssueAt(ctx, ["preset"]) && !hasIssueAt(ctx, ["command"])) {
    if (typeof command !== "string" || !command.includes(PROMPT_FILE_PLACEHOLDER)) {
      crossIssue(
        ctx,
        ["command"],
        command,
        `preset \`custom\` needs a command containing ${PROMPT_FILE_PLACEHOLDER}`,
        `a shell command containing ${PROMPT_FILE_PLACEHOLDER} (required by preset "custom")`,
      );
    }
  }
  if (Array.isArray(env)) {
    env.forEach((name, i) => {
      if (
        typeof name === "string" &&
        (FORBIDDEN_AGENT_ENV as readonly string[]).includes(name.toUpperCase())
      ) {
        crossIssue(
          ctx,
          ["env", i],
          name,
          `${name} may not be passed to the agent`,
          `a variable name other than ${FORBIDDEN_AGENT_ENV.join(", ")} (the GitHub token is never passed to the agent)`,
        );
      }
    });
  }
}

/** Ordered thresholds, and label names distinct from each other. */
export function checkConfig(config: unknown, ctx: Ctx): void {
  if (!isPlainObject(config)) return;
  /** The value at `path` when it is a number with no issue of its own. */
  const num = (path: Path): number | null => {
    const value = getAt(config, path);
    return typeof value === "number" && !hasIssueAt(ctx, path) ? value : null;
  };
  const ordered = (low: Path, high: Path, strict: boolean) => {
    const lo = num(low);
    const hi = num(high);
    if (lo === null || hi === null || (strict ? hi > lo : hi >= lo)) return;
    const lowName = formatPath(low);
    crossIssue(
      ctx,
      high,
      hi,
      `${formatPath(high)} must be ${strict ? "greater than" : "at least"} ${lowName}`,
      `an integer ${strict ? "greater than" : "≥"} ${lowName} (${lo})`,
    );
  };
  ordered(["stuckThreshold"], ["stuckStopThreshold"], true);
  ordered(["retryBaseMs"], ["retryMaxMs"], false);
  ordered(["rateLimit", "baseMs"], ["rateLimit", "maxWaitMs"], false);

  checkUsdBudgets(config, ctx);
  checkWorkspaces(config.workspaces, ctx);
  checkReviewer(config.review, ctx);

  const labels = config.labels;
  if (isPlainObject(labels))
    reportSameNames(
      ctx,
      Object.entries(labels).map(([key, name]) => ({ path: ["labels", key], name })),
      (path, first) => [
        `${path.join(".")} is the same label as ${first.join(".")}`,
        `a label name different from ${first.join(".")} (names are compared case-insensitively)`,
      ],
    );
}

/** A required review needs a reviewer: with none, no task could ever merge. */
function checkReviewer(review: unknown, ctx: Ctx): void {
  if (!isPlainObject(review) || review.required !== true || hasIssueAt(ctx, ["review"])) return;
  if (review.agent !== undefined && review.agent !== null) return;
  crossIssue(
    ctx,
    ["review", "required"],
    true,
    "review.required is true but review.agent names no reviewer, so no task could merge",
    "false, or a reviewing agent under review.agent (a mapping with the keys of agents.primary)",
  );
}

/**
 * Names that must differ, compared trimmed and case-insensitively: each one that repeats an earlier is reported
 * at its own path (`say` gives the message and what was expected). A value with an error of its own, or not a
 * string, is left to that error.
 */
function reportSameNames(
  ctx: Ctx,
  entries: readonly { path: Path; name: unknown }[],
  say: (path: Path, first: Path) => [string, string],
): void {
  const seen = new Map<string, Path>();
  for (const { path, name } of entries) {
    if (typeof name !== "string" || hasIssueAt(ctx, path)) continue;
    const normalized = name.trim().toLowerCase();
    const first = seen.get(normalized);
    if (first === undefined) {
      seen.set(normalized, path);
      continue;
    }
    const [message, expected] = say(path, first);
    crossIssue(ctx, path, name, message, expected);
  }
}

/**
 * A USD budget (task or session) must be able to stop every configured agent: one whose CLI reports no cost
 * and whose model has no known price would spend without limit while the budget looked set, so the file is
 * refused rather than trusted with a cap that cannot hold (src/core/agent/pricing.ts).
 */
function checkUsdBudgets(config: Record<string, unknown>, ctx: Ctx): void {
  const budgets = config.budgets;
  if (!isPlainObject(budgets)) return;
  const agents = config.agents;
  if (!isPlainObject(agents) || hasIssueAt(ctx, ["agents"]) || hasIssueAt(ctx, ["prices"])) return;
  const bestOf = isPlainObject(config.bestOf) && !hasIssueAt(ctx, ["bestOf"]) ? config.bestOf.candidates : [];
  const reviewer = isPlainObject(config.review) && !hasIssueAt(ctx, ["review"]) ? config.review.agent : null;
  const list = [
    agents.primary ?? {},
    ...(Array.isArray(agents.fallbacks) ? agents.fallbacks : []),
    ...(Array.isArray(bestOf) ? bestOf : []),
    ...(isPlainObject(reviewer) ? [reviewer] : []),
  ]
    .filter(isPlainObject)
    .map((agent) => ({
      preset: typeof agent.preset === "string" ? agent.preset : DEFAULT_PRESET,
      model: typeof agent.model === "string" ? agent.model : null,
    }));
  const prices = Array.isArray(config.prices)
    ? config.prices.filter(
        (p): p is { model: string; input: number; output: number } =>
          isPlainObject(p) && typeof p.model === "string",
      )
    : [];
  const unpriced = unpricedAgents(list, prices);
  if (unpriced.length === 0) return;
  const which = unpriced
    .map((a) => `${a.preset} (${a.model ? `no price is known for model ${a.model}` : "no model set"})`)
    .join(", ");
  for (const scope of ["task", "session"] as const) {
    const usd = getAt(config, ["budgets", scope, "usd"]);
    if (typeof usd !== "number" || hasIssueAt(ctx, ["budgets", scope, "usd"])) continue;
    crossIssue(
      ctx,
      ["budgets", scope, "usd"],
      usd,
      `budgets.${scope}.usd cannot limit ${which}: its CLI reports no cost, so the agent could spend past it`,
      `no USD budget, or a known price for ${which}, whose CLI reports no cost: set its model to a priced one or add the model under prices (budgets.${scope}.tokens limits any agent)`,
    );
  }
}

/** Workspaces are told apart by name, and a routing label names one workspace. */
function checkWorkspaces(workspaces: unknown, ctx: Ctx): void {
  if (!Array.isArray(workspaces)) return;
  const at = (path: Path) => `workspaces[${path[1]}].${path[2]}`;
  for (const key of ["name", "label"] as const)
    reportSameNames(
      ctx,
      workspaces.map((workspace, i) => ({
        path: ["workspaces", i, key],
        name: isPlainObject(workspace) ? workspace[key] : undefined,
      })),
      (path, first) => [
        `${at(path)} is the same as ${at(first)}`,
        `a ${key} no other workspace has (compared case-insensitively)`,
      ],
    );
}
