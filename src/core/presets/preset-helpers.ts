/** What the presets share to start a CLI and read what it printed: prompt passing, JSON lines, last lines, quoting. */

/** Prompts longer than this go through stdin: one argv string may not exceed 128 KiB on Linux. */
export const MAX_PROMPT_ARG_BYTES = 100 * 1024;

/** Whether a prompt is too long for one argument and goes through the agent's stdin instead. */
export function promptViaStdin(prompt: string): boolean {
  return Buffer.byteLength(prompt) > MAX_PROMPT_ARG_BYTES;
}

/** One line of JSON Lines output as an object, when it is one and mentions `needle` (cheap to skip the rest). */
export function jsonEvent(line: string, needle: string): Record<string, unknown> | null {
  const text = line.trim();
  if (!text.startsWith("{") || !text.includes(needle)) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Parses JSON-lines output, skipping lines that are not JSON objects (banners, truncation marks). */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .map((line) => jsonEvent(line, "{"))
    .filter((event): event is Record<string, unknown> => event !== null);
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
