/**
 * Text on its way to the job log, escaped so that no line of it is a workflow command. The runner reads the
 * output line by line, a line ending at `\n`, `\r` or `\r\n` (.NET's StreamReader.ReadLine), and hands each line
 * to two parsers (https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs):
 * - `::name::data` at the start of the line once `String.TrimStart()` has removed its leading white space, which
 *   is .NET's `Char.IsWhiteSpace` (https://learn.microsoft.com/dotnet/api/system.char.iswhitespace): the Unicode
 *   space, line and paragraph separators, U+0009–U+000D and U+0085 (NEXT LINE, which JavaScript's `\s` lacks);
 * - `##[name]data` ANYWHERE in the line (the older form).
 * Text that came from GitHub (marker strings, comment bodies, issue titles) or from the agent could otherwise add
 * a mask, stop command processing, write outputs or fake an error. @actions/core escapes the data of the
 * commands the worker itself emits (`%`, CR and LF become `%25`, `%0D`, `%0A`); plain log lines get no such
 * escaping, so every `##[` gets a mark inside it, each line (split as the runner splits) that would start with
 * `::` gets a visible prefix, and the whole is capped. The agent's own output is, besides, written between
 * stop-commands markers (job-log.ts); this escaping is what keeps it from ending that block early.
 */

/** At most this many characters of one log message. */
const LOG_TEXT_MAX = 4_000;

/**
 * Leading white space as .NET trims it, and more: JavaScript's `\s`, U+0085, and the separators and invisible
 * marks older .NET or Unicode versions counted as spaces (U+180E, U+200B, U+001C–U+001F). A superset is safe:
 * a line it makes escaped only gains a visible prefix.
 */
const COMMAND_START = /^([\s\u0085\u180e\u200b\u001c-\u001f]*)::/;

/** One line (no line break in it) that no parser of the runner reads as a command. */
function escapeLine(line: string): string {
  // Inserting the mark between `##` and `[` can make no new `##[`: every `[` keeps what came before it or gets `›`.
  return line.replaceAll("##[", "##›[").replace(COMMAND_START, "$1› ::");
}

export function safeLogText(text: string, max = LOG_TEXT_MAX): string {
  const capped = text.length > max ? `${text.slice(0, max)}… [${text.length - max} characters cut]` : text;
  return capped
    .split(/\r\n|\r|\n/)
    .map(escapeLine)
    .join("\n");
}
