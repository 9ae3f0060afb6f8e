/** What every agent preset provides: how to start the CLI, and how to read what it printed. */

export type PresetName = "claude-code" | "codex" | "aider" | "opencode" | "gemini" | "custom";

export interface InvocationOptions {
  /** The whole prompt text. */
  prompt: string;
  /** The same prompt written to a file outside the workspace. */
  promptFile: string;
  /** The repository checkout the agent works in. */
  workdir: string;
  /** The agent's scratch home (outside the workspace). */
  home: string;
  model?: string | null;
  /** Extra arguments from the configuration, appended to the preset's own. */
  args?: string[];
  /** The shell command of the `custom` preset, with `{prompt_file}` to substitute. */
  command?: string | null;
}

export interface Invocation {
  command: string;
  args: string[];
  /** Non-secret variables the preset needs (added to the allow-listed environment). */
  env: Record<string, string>;
  /** Written to the process's stdin when set. */
  stdin?: string;
}

export interface AgentUsage {
  input: number;
  output: number;
}

export interface AgentOutput {
  /** The agent's own final message: the only text signals are read from. */
  finalMessage: string;
  /** The CLI reported a failed run (API error, max turns, turn failed…). */
  isError: boolean;
  /** What went wrong, in the CLI's words, for the classifier and the logs. */
  errorText: string;
  usage: AgentUsage;
  costUsd: number;
  /** Shell commands the agent ran (for the human gate), where the CLI reports them. */
  commands: string[];
  /** The CLI stopped at its own turn limit: not a failure, the next iteration goes on. */
  turnLimit?: boolean;
  /** The model the CLI says it used, when it says (prices tokens a CLI reports without a cost). */
  model?: string;
}

export interface AgentPreset {
  name: PresetName;
  /** The model-provider keys this preset (and only this preset) receives from the worker's environment. */
  keyEnv: readonly string[];
  /**
   * Keys the CLI reads under another name than the one users hold: `{ CODEX_API_KEY: "OPENAI_API_KEY" }` sets
   * CODEX_API_KEY from OPENAI_API_KEY when only that one is set. Both names are in `keyEnv`.
   */
  keyAliases?: Readonly<Record<string, string>>;
  buildInvocation(options: InvocationOptions): Invocation;
  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput;
}

/** Prompts longer than this go through stdin: one argv string may not exceed 128 KiB on Linux. */
export const MAX_PROMPT_ARG_BYTES = 100 * 1024;

/** Whether a prompt is too long for one argument and goes through the agent's stdin instead. */
export function promptViaStdin(prompt: string): boolean {
  return Buffer.byteLength(prompt) > MAX_PROMPT_ARG_BYTES;
}

export function emptyOutput(): AgentOutput {
  return {
    finalMessage: "",
    isError: false,
    errorText: "",
    usage: { input: 0, output: 0 },
    costUsd: 0,
    commands: [],
  };
}

/** Parses JSON-lines output, skipping lines that are not JSON objects (banners, truncation marks). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === "object" && !Array.isArray(value))
        events.push(value as Record<string, unknown>);
    } catch {
      /* not a JSON line */
    }
  }
  return events;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asNumber(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** The last few non-empty lines of a text, for error reports. */
export function lastLines(text: string, count = 20, maxChars = 4_000): string {
  const lines = text
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim().length > 0);
  const tail = lines.slice(-count).join("\n");
  return tail.length > maxChars ? tail.slice(-maxChars) : tail;
}

const PROMISE_ONLY_LINE = /^\s*<promise>[^<]*<\/promise>\s*$/;

/**
 * The final message of a CLI that prints plain text: stdout's last non-empty paragraph; when that paragraph
 * carries no `<promise>` tag, the last line that consists of a promise tag alone (an agent may print its
 * signal and then a closing remark).
 */
export function finalMessageFromText(stdout: string): string {
  const text = stdout.replace(/\r\n/g, "\n");
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph.length > 0);
  const last = paragraphs.at(-1) ?? "";
  if (last.includes("<promise>")) return last;
  const promiseLine = text
    .split("\n")
    .filter((line) => PROMISE_ONLY_LINE.test(line))
    .at(-1);
  return promiseLine ? promiseLine.trim() : last;
}

/** Single-quotes a string for POSIX sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
