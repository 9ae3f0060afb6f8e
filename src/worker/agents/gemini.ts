/**
 * Gemini CLI: `gemini -p <prompt> --output-format stream-json --yolo`. JSONL events: `message` (assistant
 * chunks, `delta` for streamed pieces), `tool_use` (`run_shell_command` → commands), `error`, and a final
 * `result` with `status`, `error` and `stats` (`input_tokens`, `output_tokens`). The single-object `--output-format
 * json` shape (`response`, `stats`, `error`) is read as well.
 */
import {
  type AgentOutput,
  type AgentPreset,
  asNumber,
  asRecord,
  asString,
  finalMessageFromText,
  type Invocation,
  type InvocationOptions,
  jsonLines,
  lastLines,
  MAX_PROMPT_ARG_BYTES,
} from "./types.js";

const SHELL_TOOLS = new Set(["run_shell_command", "shell", "run_shell"]);

function statsTokens(stats: Record<string, unknown> | undefined): { input: number; output: number } {
  if (!stats) return { input: 0, output: 0 };
  let input = asNumber(stats.input_tokens) || asNumber(stats.input) || asNumber(stats.inputTokens);
  let output = asNumber(stats.output_tokens) || asNumber(stats.outputTokens);
  const models = asRecord(stats.models);
  if (!input && !output && models) {
    for (const model of Object.values(models)) {
      const tokens = asRecord(asRecord(model)?.tokens) ?? {};
      input += asNumber(tokens.prompt) || asNumber(tokens.input);
      output += asNumber(tokens.candidates) || asNumber(tokens.output);
    }
  }
  return { input, output };
}

function errorMessage(value: unknown): string {
  const error = asRecord(value);
  if (!error) return typeof value === "string" ? value : "";
  return [asString(error.type), asString(error.message)].filter(Boolean).join(": ");
}

export const gemini: AgentPreset = {
  name: "gemini",
  keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = Buffer.byteLength(options.prompt) > MAX_PROMPT_ARG_BYTES;
    const args = [
      "-p",
      viaStdin ? "Follow the task instructions given on standard input." : options.prompt,
      "--output-format",
      "stream-json",
      "--yolo",
    ];
    if (options.model) args.push("-m", options.model);
    args.push(...(options.args ?? []));
    return { command: "gemini", args, env: {}, ...(viaStdin ? { stdin: options.prompt } : {}) };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    const events = jsonLines(stdout);
    const single =
      events.length === 1 && ("response" in events[0]! || "stats" in events[0]!) ? events[0] : undefined;
    if (single) {
      const error = errorMessage(single.error);
      const isError = error !== "" || exitCode !== 0;
      return {
        finalMessage: asString(single.response) ?? "",
        isError,
        errorText: isError ? [error, lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
        usage: statsTokens(asRecord(single.stats)),
        costUsd: 0,
        commands: [],
      };
    }
    if (events.length === 0) {
      const isError = exitCode !== 0;
      return {
        finalMessage: finalMessageFromText(stdout),
        isError,
        errorText: isError ? [lastLines(stdout, 10), lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
        usage: { input: 0, output: 0 },
        costUsd: 0,
        commands: [],
      };
    }

    const commands: string[] = [];
    let turn = "";
    let lastTurn = "";
    let usage = { input: 0, output: 0 };
    const errors: string[] = [];
    let failed = false;
    for (const event of events) {
      if (event.type === "message" && event.role === "assistant") {
        const content = asString(event.content) ?? "";
        turn = event.delta === true ? turn + content : content;
        if (turn.trim()) lastTurn = turn;
      } else if (event.type === "tool_use") {
        turn = "";
        const name = asString(event.tool_name) ?? "";
        const command = asString(asRecord(event.parameters)?.command);
        if (command && SHELL_TOOLS.has(name)) commands.push(command);
      } else if (event.type === "error") {
        const message = asString(event.message) ?? errorMessage(event.error);
        if (message) errors.push(message);
      } else if (event.type === "result") {
        usage = statsTokens(asRecord(event.stats));
        if (event.status === "error") {
          failed = true;
          const message = errorMessage(event.error);
          if (message) errors.push(message);
        }
      }
    }
    const isError = failed || exitCode !== 0;
    return {
      finalMessage: lastTurn,
      isError,
      errorText: isError ? [...errors.slice(-3), lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
      usage,
      costUsd: 0,
      commands,
    };
  },
};
