/**
 * The GitHub runner's reading of a step's output, as far as workflow commands go, for tests that must show some
 * output runs none. As the runner does it (https://github.com/actions/runner: ProcessInvoker.cs reads lines with
 * StreamReader.ReadLine, ActionCommand.cs parses them, ActionCommandManager.cs runs them):
 * - a line ends at `\n`, `\r` or `\r\n`;
 * - `::name props::data` is a command when it starts the line after .NET's TrimStart (Char.IsWhiteSpace,
 *   https://learn.microsoft.com/dotnet/api/system.char.iswhitespace: U+0085 and U+00A0 included);
 * - `##[name props]data` is a command wherever it is in the line;
 * - after `stop-commands` with a token, only the command named by that token (either form, any case) runs: it
 *   resumes processing.
 * Stricter than the runner in one way: any name counts as a command here, registered or not.
 */

/** .NET's white space (Char.IsWhiteSpace) at the start of a string. */
const NET_LEADING_WHITE_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/;

interface RunnerCommand {
  name: string;
  data: string;
}

/** The command one line (no line break in it) holds for the runner's parsers, if any. */
function commandOf(line: string): RunnerCommand | null {
  const trimmed = line.replace(NET_LEADING_WHITE_SPACE, "");
  if (trimmed.startsWith("::")) {
    const end = trimmed.indexOf("::", 2);
    if (end >= 0) return { name: trimmed.slice(2, end).split(" ")[0]!, data: trimmed.slice(end + 2) };
  }
  const start = line.indexOf("##[");
  if (start >= 0) {
    const end = line.indexOf("]", start);
    if (end >= 0) return { name: line.slice(start + 3, end).split(" ")[0]!, data: line.slice(end + 1) };
  }
  return null;
}

/** The commands the runner would run for this output, in order (the stop and resume lines included). */
export function commandsRun(output: string): RunnerCommand[] {
  const run: RunnerCommand[] = [];
  let stopToken: string | null = null;
  for (const line of output.split(/\r\n|\r|\n/)) {
    const command = commandOf(line);
    if (!command) continue;
    if (stopToken !== null) {
      if (command.name.toLowerCase() !== stopToken.toLowerCase()) continue;
      stopToken = null;
    } else if (command.name.toLowerCase() === "stop-commands") stopToken = command.data;
    run.push(command);
  }
  return run;
}
