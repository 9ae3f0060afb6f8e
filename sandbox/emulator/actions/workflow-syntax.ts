/**
 * The files a workflow run reads: workflow files, action manifests, and the key-value files (`GITHUB_OUTPUT`,
 * `GITHUB_ENV`) steps write; with the small readers of their values.
 */

export interface WorkflowFile {
  name?: string;
  "run-name"?: string;
  on?: unknown;
  env?: Record<string, unknown>;
  concurrency?: string | { group?: string; "cancel-in-progress"?: boolean | string };
  jobs?: Record<string, JobFile>;
}

export interface JobFile {
  name?: string;
  "runs-on"?: unknown;
  if?: unknown;
  env?: Record<string, unknown>;
  steps?: StepFile[];
  outputs?: Record<string, string>;
  "timeout-minutes"?: number | string;
  concurrency?: WorkflowFile["concurrency"];
  defaults?: { run?: { shell?: string; "working-directory"?: string } };
}

export interface StepFile {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  if?: unknown;
  shell?: string;
  "working-directory"?: string;
  "continue-on-error"?: boolean | string;
  "timeout-minutes"?: number | string;
}

export interface ActionFile {
  name?: string;
  inputs?: Record<string, { default?: unknown; required?: boolean }>;
  runs?: { using?: string; main?: string; pre?: string; post?: string; "post-if"?: string };
}

/** Parses `GITHUB_OUTPUT`/`GITHUB_ENV` file contents: `k=v` lines and `k<<DELIM` … `DELIM` blocks. */
export function parseKeyValueFile(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    const eq = line.indexOf("=");
    if (heredoc && (eq < 0 || eq > line.indexOf("<<"))) {
      const key = heredoc[1]!.trim();
      const delimiter = heredoc[2]!;
      const value: string[] = [];
      i++;
      while (i < lines.length && lines[i] !== delimiter) value.push(lines[i++]!);
      if (i >= lines.length) throw new Error(`Matching delimiter not found '${delimiter}'`);
      result[key] = value.join("\n");
    } else if (eq > 0) {
      result[line.slice(0, eq).trim()] = line.slice(eq + 1);
    } else {
      throw new Error(`Invalid format '${line}'`);
    }
  }
  return result;
}

export function minutes(value: unknown): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n * 60_000 : null;
}

export function truthyFlag(value: unknown): boolean {
  return value === true || (typeof value === "string" && value.toLowerCase() === "true");
}

/** The `on:` triggers of a workflow, normalized to an object. */
export function triggers(on: unknown): Record<string, unknown> {
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((e) => [String(e), null]));
  if (on && typeof on === "object") return on as Record<string, unknown>;
  return {};
}
