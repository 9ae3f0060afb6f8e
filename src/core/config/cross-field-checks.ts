/**
 * Cross-field checks of the configuration: rules between keys that a single key's schema cannot state. They
 * run even when other keys are invalid, so one error lists every problem.
 */
import type { z } from "zod";
import { FORBIDDEN_AGENT_ENV, PROMPT_FILE_PLACEHOLDER } from "./config-constants.js";
import { formatPath, getAt, isPlainObject } from "./key-paths.js";

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

  const labels = config.labels;
  if (isPlainObject(labels)) {
    const seen = new Map<string, string>();
    for (const [key, name] of Object.entries(labels)) {
      if (typeof name !== "string" || hasIssueAt(ctx, ["labels", key])) continue;
      const normalized = name.trim().toLowerCase();
      const first = seen.get(normalized);
      if (first === undefined) {
        seen.set(normalized, key);
        continue;
      }
      crossIssue(
        ctx,
        ["labels", key],
        name,
        `labels.${key} is the same label as labels.${first}`,
        `a label name different from labels.${first} (names are compared case-insensitively)`,
      );
    }
  }
}
