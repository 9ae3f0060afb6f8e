/**
 * Text on its way to the job log. The runner reads every stdout line that starts with `::` (after leading
 * whitespace) as a workflow command, and `##[` as an older form of one: text that came from GitHub (marker
 * strings, comment bodies, issue titles) or from the agent must never start a line that way, or it could add a
 * mask, stop command processing, write outputs or fake an error. @actions/core escapes the data of the commands
 * the worker itself emits (`%`, CR and LF become `%25`, `%0D`, `%0A`); plain log lines get no such escaping, so
 * each line of theirs that would parse as a command gets a visible prefix, and the whole is capped.
 */

/** At most this many characters of one log message. */
const LOG_TEXT_MAX = 4_000;

const COMMAND_START = /^(\s*)(::|##\[)/;

export function safeLogText(text: string, max = LOG_TEXT_MAX): string {
  const capped = text.length > max ? `${text.slice(0, max)}… [${text.length - max} characters cut]` : text;
  return capped
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(COMMAND_START, "$1› $2"))
    .join("\n");
}
