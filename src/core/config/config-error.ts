/** A bad configuration as data: each problem (path, found, expected, where) and the error that lists them. */
import type { AutopilotConfig } from "./config-schema.js";
import { isPlainObject } from "./key-paths.js";

export interface ConfigProblem {
  /** Key path such as `merge.method` or `agents.fallbacks[0].preset`; "" for the file as a whole. */
  path: string;
  /** What was found: the value and its type, truncated. */
  found: string;
  /** What is expected, e.g. `one of "merge", "squash", "rebase"` or `an integer from 1 to 20`. */
  expected: string;
  /** One line for people: path (and line), found, expected. */
  message: string;
  /** 1-based line in the file, when known. */
  line?: number;
  /** 1-based column in the file, when known. */
  column?: number;
}

/** A bad configuration: every problem at once. `cause` keeps the ZodError (or the YAML error). */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: ConfigProblem[];
  /** Where the configuration came from, e.g. `.github/autopilot.yml`. */
  readonly source: string;

  constructor(source: string, problems: ConfigProblem[], options?: { cause?: unknown }) {
    super(
      [`Invalid config in ${source}:`, ...problems.map((problem) => `- ${problem.message}`)].join("\n"),
      options,
    );
    this.source = source;
    this.problems = problems;
  }
}

export type ConfigResult =
  | { ok: true; config: AutopilotConfig; warnings: string[] }
  | { ok: false; error: ConfigError };

/** A 1-based place in the file. */
export interface Location {
  line: number;
  column: number;
}

const FOUND_MAX = 40;

export function truncate(text: string, max = FOUND_MAX): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Array.isArray(value) ? "[…]" : "{…}";
  }
}

/** `"sqash" (string)`, `0 (number)`, `[1,2] (list)`, `null`, `nothing`. */
export function describeFound(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return value === "" ? '"" (empty string)' : `${truncate(JSON.stringify(value))} (string)`;
    case "number":
    case "bigint":
      return `${String(value)} (number)`;
    case "boolean":
      return `${value} (boolean)`;
  }
  if (Array.isArray(value)) return `${truncate(safeJson(value))} (list)`;
  if (isPlainObject(value)) return `${truncate(safeJson(value))} (mapping)`;
  return Object.prototype.toString.call(value).slice(8, -1);
}

/** One line for people: path (and line), found, expected. */
export function problemMessage(
  path: string,
  where: Location | undefined,
  found: string,
  expected: string,
): string {
  return `${path ? `\`${path}\`` : "(top level)"}${where ? ` (line ${where.line})` : ""}: found ${found}; expected ${expected}`;
}
