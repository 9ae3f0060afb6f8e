/** Markdown explaining a bad configuration, for the tracking issue. */
import { markdownTable } from "markdown-table";
import type { ConfigError } from "./config-error.js";

/** Escapes text for a markdown table cell: no markup, mentions, HTML or hidden markers survive. */
function escapeCell(text: string): string {
  return text.replace(/[^A-Za-z0-9 .,;:=+\-/()'"?≥≤…]/gu, (char) => `&#${char.codePointAt(0)};`);
}

/** Cell text where `code` spans of plain identifiers stay code spans and everything else is escaped. */
function cell(text: string): string {
  return text
    .split(/(`[^`\n]*`)/)
    .map((part) => (/^`[^`<|\n]+`$/.test(part) ? part : escapeCell(part)))
    .join("");
}

const MAX_ROWS = 50;

/** Markdown explaining a bad configuration, for the tracking issue: one table row per problem. */
export function renderConfigError(error: ConfigError): string {
  const problems = error.problems;
  const withLines = problems.some((problem) => problem.line !== undefined);
  const header = withLines ? ["Key", "Line", "Found", "Expected"] : ["Key", "Found", "Expected"];
  const rows = problems.slice(0, MAX_ROWS).map((problem) => {
    const key = !problem.path
      ? "(file)"
      : /^[^`<|\n]+$/.test(problem.path)
        ? `\`${problem.path}\``
        : escapeCell(problem.path);
    const line = problem.line === undefined ? "" : String(problem.line);
    const found = cell(problem.found);
    const expected = cell(problem.expected);
    return withLines ? [key, line, found, expected] : [key, found, expected];
  });
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const more = problems.length > MAX_ROWS ? `\n\n…and ${problems.length - MAX_ROWS} more.` : "";
  return [
    `### ⚠️ Invalid config in ${cell(`\`${error.source}\``)}`,
    "",
    `Autopilot found ${count}:`,
    "",
    markdownTable([header, ...rows], { alignDelimiters: false }) + more,
    "",
    "Every key, its type and its default are listed in Autopilot's `docs/CONFIGURATION.md`.",
  ].join("\n");
}
