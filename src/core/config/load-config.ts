/**
 * Reading a configuration: the text of `.github/autopilot.yml` (parsed as YAML, problems located by line)
 * and the overrides of a workflow input (deep-merged over it), each validated as a whole. Never throws.
 *
 * Pure: the caller reads the file and passes its text (null when it does not exist).
 */
import { isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { CONFIG_PATH } from "./config-constants.js";
import {
  ConfigError,
  type ConfigProblem,
  type ConfigResult,
  describeFound,
  type Location,
  truncate,
} from "./config-error.js";
import { type AutopilotConfig, ConfigSchema } from "./config-schema.js";
import { configWarnings } from "./config-warnings.js";
import { type Locate, problemsFromIssues } from "./explain-config-errors.js";
import { isPlainObject } from "./key-paths.js";

const noLocation: Locate = () => undefined;

function validate(input: unknown, source: string, locate: Locate): ConfigResult {
  const result = ConfigSchema.safeParse(input);
  if (result.success) return { ok: true, config: result.data, warnings: configWarnings(result.data) };
  const problems = problemsFromIssues(result.error.issues, input, locate);
  return { ok: false, error: new ConfigError(source, problems, { cause: result.error }) };
}

function defaults(warnings: string[] = []): ConfigResult {
  return { ok: true, config: ConfigSchema.parse({}), warnings };
}

/**
 * Parses and validates the text of `.github/autopilot.yml`. `null` (no file), empty text or a document with
 * only comments means all defaults. Never throws.
 */
export function parseConfig(text: string | null, path: string = CONFIG_PATH): ConfigResult {
  if (text === null || text.trim() === "") return defaults();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number): Location => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const sourceLines = text.split(/\r?\n/);

  if (doc.errors.length > 0) {
    const problems = doc.errors.map((error): ConfigProblem => {
      const where = position(error.pos[0]);
      const lineText = sourceLines[where.line - 1]?.trim() ?? "";
      const found = lineText
        ? `line ${where.line}: ${JSON.stringify(truncate(lineText))}`
        : `line ${where.line}`;
      const expected = `valid YAML (${error.message})`;
      const message = `YAML syntax error at line ${where.line}, column ${where.column}: ${error.message}`;
      return { path: "", found, expected, message, line: where.line, column: where.column };
    });
    return { ok: false, error: new ConfigError(path, problems, { cause: doc.errors[0] }) };
  }
  const warnings = doc.warnings.map((warning) => {
    const where = position(warning.pos[0]);
    return `${path} line ${where.line}: ${warning.message}`;
  });

  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const problem: ConfigProblem = {
      path: "",
      found: "a document that cannot be read",
      expected: "valid YAML",
      message: `YAML could not be read: ${reason}`,
    };
    return { ok: false, error: new ConfigError(path, [problem], { cause: error }) };
  }
  if (input === null || input === undefined) return defaults(warnings);
  if (!isPlainObject(input)) return rootNotMapping(input, path, {});

  const locate: Locate = (keyPath, atKey) => {
    // Falls back to the nearest enclosing key that is in the file (never to the whole document).
    for (let depth = keyPath.length; depth >= 1; depth--) {
      const prefix = keyPath.slice(0, depth);
      if (atKey && depth === keyPath.length && prefix.length > 0) {
        const parent = prefix.length === 1 ? doc.contents : doc.getIn(prefix.slice(0, -1), true);
        if (isMap(parent)) {
          const key = String(prefix[prefix.length - 1]);
          const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
          const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
          if (range) return position(range[0]);
        }
        continue;
      }
      const node = doc.getIn(prefix, true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return position(range[0]);
    }
    return undefined;
  };
  const renamed = renamedValues(input, path);
  const result = validate(renamed.input, path, locate);
  return result.ok ? { ...result, warnings: [...warnings, ...renamed.warnings, ...result.warnings] } : result;
}

/**
 * Values earlier versions took that now have another name. `isolation: user` named the separate user, which the
 * namespace sandbox now runs inside its own namespaces: it reads as `namespace` (the stronger wall, and the
 * default), never as the weaker `uid`, so an upgrade loosens nothing; a runner without bubblewrap then refuses to
 * start, naming the fix.
 */
function renamedValues(
  input: Record<string, unknown>,
  path: string,
): { input: Record<string, unknown>; warnings: string[] } {
  if (input.isolation !== "user") return { input, warnings: [] };
  return {
    input: { ...input, isolation: "namespace" },
    warnings: [
      `${path}: isolation "user" is read as "namespace" (the separate user, now inside its own namespaces: the ` +
        'default); write "namespace", or "uid" for the separate user alone (weaker).',
    ],
  };
}

/** A failed result with one problem about the input as a whole: `<what>: found …; expected …`. */
function wholeInputError(
  source: string,
  what: string,
  input: unknown,
  expected: string,
  options: { cause?: unknown },
): ConfigResult {
  const found = describeFound(input);
  const problem: ConfigProblem = {
    path: "",
    found,
    expected,
    message: `${what}: found ${found}; expected ${expected}`,
  };
  return { ok: false, error: new ConfigError(source, [problem], options) };
}

function rootNotMapping(input: unknown, source: string, options: { cause?: unknown }): ConfigResult {
  return wholeInputError(source, "(top level)", input, "a mapping of settings (`key: value` lines)", options);
}

/** Objects merge key by key; anything else (lists included) replaces. Safe against `__proto__` keys. */
export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const merged = new Map<string, unknown>(Object.entries(base));
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    merged.set(key, Object.hasOwn(base, key) ? deepMerge(base[key], value) : value);
  }
  return Object.fromEntries(merged);
}

/**
 * Applies overrides (the `config` input of a workflow_dispatch or of the worker action) on top of a
 * configuration: a JSON object string or an object, deep-merged (lists replace), then validated as a whole.
 * Empty or absent overrides return the configuration unchanged. Never throws.
 */
export function applyConfigOverrides(
  config: AutopilotConfig,
  overrides: unknown,
  source = "config overrides",
): ConfigResult {
  let value = overrides;
  if (value === undefined || value === null || (typeof value === "string" && value.trim() === "")) {
    return { ok: true, config, warnings: [] };
  }
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return wholeInputError(source, `not valid JSON (${reason})`, overrides, "a JSON object", {
        cause: error,
      });
    }
  }
  if (!isPlainObject(value)) return rootNotMapping(value, source, {});
  return validate(deepMerge(config, value), source, noLocation);
}
