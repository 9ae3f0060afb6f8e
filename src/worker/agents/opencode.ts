/**
 * OpenCode: `opencode run --format json [--model provider/model] <prompt>`. JSON events: `text` parts (the last
 * group after the last tool use is the final message), `tool_use` parts (`bash` → commands), `step_finish`
 * parts with `tokens` and `cost`, and `error`.
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

export const opencode: AgentPreset = {
  name: "opencode",
  keyEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"],

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = Buffer.byteLength(options.prompt) > MAX_PROMPT_ARG_BYTES;
    const args = ["run", "--format", "json"];
    if (options.model) args.push("--model", options.model);
    args.push(...(options.args ?? []));
    if (!viaStdin) args.push(options.prompt);
    return {
      command: "opencode",
      args,
      env: { OPENCODE_DISABLE_AUTOUPDATE: "1" },
      ...(viaStdin ? { stdin: options.prompt } : {}),
    };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    const events = jsonLines(stdout);
    if (events.length === 0) {
      // Plain-text output (a user passed --format default).
      const finalMessage = finalMessageFromText(stdout);
      return {
        finalMessage,
        isError: exitCode !== 0,
        errorText:
          exitCode !== 0 ? [lastLines(stdout, 10), lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
        usage: { input: 0, output: 0 },
        costUsd: 0,
        commands: [],
      };
    }
    const commands: string[] = [];
    let group: string[] = [];
    let lastGroup: string[] = [];
    let input = 0;
    let output = 0;
    let cost = 0;
    const errors: string[] = [];
    for (const event of events) {
      const part = asRecord(event.part) ?? {};
      if (event.type === "text") {
        const text = asString(part.text);
        if (text?.trim()) {
          group.push(text);
          lastGroup = group;
        }
      } else if (event.type === "tool_use") {
        group = [];
        const tool = asString(part.tool);
        const input = asRecord(asRecord(part.state)?.input);
        const command = asString(input?.command);
        if (command && (tool === "bash" || tool === "shell")) commands.push(command);
      } else if (event.type === "step_finish") {
        const tokens = asRecord(part.tokens) ?? {};
        input += asNumber(tokens.input);
        output += asNumber(tokens.output) + asNumber(tokens.reasoning);
        cost += asNumber(part.cost);
      } else if (event.type === "error") {
        const error = asRecord(event.error) ?? {};
        const message =
          asString(asRecord(error.data)?.message) ?? asString(error.message) ?? asString(error.name);
        if (message) errors.push(message);
      }
    }
    const isError = errors.length > 0 || exitCode !== 0;
    return {
      finalMessage: lastGroup.join("\n\n"),
      isError,
      errorText: isError ? [...errors, lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
      usage: { input, output },
      costUsd: cost,
      commands,
    };
  },
};
