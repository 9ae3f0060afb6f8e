/**
 * Any command: run with `sh -c`, `{prompt_file}` replaced by the quoted path of the prompt file (also in
 * `$AUTOPILOT_PROMPT_FILE`). The final message is stdout's last non-empty paragraph, or its last line that is a
 * `<promise>…</promise>` tag alone. A command may report what it used and ran with lines
 * `autopilot-usage: {"input":N,"output":N,"costUsd":X}` and `autopilot-command: <command>`.
 */
import {
  type AgentOutput,
  definePreset,
  type Invocation,
  type InvocationOptions,
  type UsageMeter,
} from "./preset-types.js";
import { asNumber, asRecord, finalMessageFromText, lastLines, shellQuote } from "./preset-helpers.js";

const USAGE_LINE = /^autopilot-usage:\s*(\{.*\})\s*$/;
const COMMAND_LINE = /^autopilot-command:\s*(.+)$/;

/** What an `autopilot-usage:` line reports (nothing, when its JSON is broken); null for any other line. */
function usageOfLine(line: string): { input: number; output: number; costUsd: number } | null {
  const usage = USAGE_LINE.exec(line.trim());
  if (!usage) return null;
  try {
    const value = asRecord(JSON.parse(usage[1]!)) ?? {};
    return { input: asNumber(value.input), output: asNumber(value.output), costUsd: asNumber(value.costUsd) };
  } catch {
    return { input: 0, output: 0, costUsd: 0 };
  }
}

export const custom = definePreset({
  name: "custom",
  // Whatever `command` runs is the maintainer's to install.
  install: null,
  keyEnv: [],
  // Whatever the command talks to is the maintainer's to list in `network.allow`.
  apiHosts: [],
  // Its own `autopilot-usage` lines, when it writes them.
  selfPricing: true,
  prices: {},

  buildInvocation(options: InvocationOptions): Invocation {
    if (!options.command) throw new Error("the custom agent preset needs a `command`");
    const script = options.command.replaceAll("{prompt_file}", shellQuote(options.promptFile));
    const extra = (options.args ?? []).map(shellQuote).join(" ");
    return { command: "/bin/sh", args: ["-c", extra ? `${script} ${extra}` : script], env: {} };
  },

  /** Each `autopilot-usage:` line adds what it reports, as it is printed. */
  usageMeter(): UsageMeter {
    let input = 0;
    let output = 0;
    let costUsd = 0;
    return (line) => {
      const usage = usageOfLine(line);
      if (!usage) return null;
      input += usage.input;
      output += usage.output;
      costUsd += usage.costUsd;
      return { input, output, costUsd, model: null };
    };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    let input = 0;
    let output = 0;
    let costUsd = 0;
    const commands: string[] = [];
    const kept: string[] = [];
    for (const line of stdout.split("\n")) {
      const usage = usageOfLine(line);
      const command = COMMAND_LINE.exec(line.trim());
      if (usage) {
        input += usage.input;
        output += usage.output;
        costUsd += usage.costUsd;
        continue;
      }
      if (command) {
        commands.push(command[1]!.trim());
        continue;
      }
      kept.push(line);
    }
    const text = kept.join("\n");
    const finalMessage = finalMessageFromText(text);
    const isError = exitCode !== 0;
    return {
      finalMessage,
      isError,
      errorText:
        isError || !finalMessage.includes("<promise>")
          ? [lastLines(text, 10), lastLines(stderr, 10)].filter(Boolean).join("\n")
          : "",
      usage: { input, output },
      costUsd,
      commands,
    };
  },
});
