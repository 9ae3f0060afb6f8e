/**
 * OpenCode (1.18): `opencode run --format json [--model provider/model] <prompt>`. JSON events (recorded in
 * test/fixtures/agent-cli/opencode-*.stdout), each with its `part`: `step_start`; `text` (`part.text`; the last
 * group after the last tool use is the final message); `tool_use` (`part.tool`, `part.state.input`; `bash` →
 * commands); `step_finish` (`part.tokens` {input, output, reasoning, cache {read, write}}, `part.cost`, `reason`);
 * and `error` (`error.name` such as `APIError`, `error.data` {message, statusCode, responseBody}) after its own
 * retries, with exit code 1. `cost` is OpenCode's price for models it knows and 0 for the others (a custom
 * provider): then the worker prices the tokens from its price table.
 */
import {
  type AgentOutput,
  definePreset,
  type Invocation,
  type InvocationOptions,
  type UsageMeter,
} from "./preset-types.js";
import {
  asNumber,
  asRecord,
  asString,
  finalMessageFromText,
  jsonEvent,
  jsonLines,
  lastLines,
  promptViaStdin,
} from "./preset-helpers.js";

/** A `step_finish` part's tokens (reasoning counted as output) and OpenCode's price of them. */
function stepUsage(part: Record<string, unknown>): { input: number; output: number; cost: number } {
  const tokens = asRecord(part.tokens) ?? {};
  return {
    input: asNumber(tokens.input),
    output: asNumber(tokens.output) + asNumber(tokens.reasoning),
    cost: asNumber(part.cost),
  };
}

export const opencode = definePreset({
  name: "opencode",
  install: { manager: "npm", package: "opencode-ai", version: "1.18.33", command: "opencode" },
  keyEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"],
  // The APIs of the providers whose keys it gets, and models.dev: its model catalogue, fetched at start unless
  // OPENCODE_DISABLE_MODELS_FETCH is set.
  apiHosts: [
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
    "openrouter.ai",
    "api.groq.com",
    "models.dev",
  ],
  // `cost` in its `step_finish` events, for the models it knows (0 for the others: then the price table).
  selfPricing: true,
  // It runs the other presets' providers' models, priced by their records.
  prices: {},

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = promptViaStdin(options.prompt);
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

  /** Each `step_finish` adds its step's tokens and cost (0 for a model OpenCode does not price: the worker does). */
  usageMeter(): UsageMeter {
    let input = 0;
    let output = 0;
    let cost = 0;
    return (line) => {
      const event = jsonEvent(line, "step_finish");
      if (event?.type !== "step_finish") return null;
      const step = stepUsage(asRecord(event.part) ?? {});
      input += step.input;
      output += step.output;
      cost += step.cost;
      return { input, output, costUsd: cost > 0 ? cost : null, model: null };
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
        const step = stepUsage(part);
        input += step.input;
        output += step.output;
        cost += step.cost;
      } else if (event.type === "error") {
        const error = asRecord(event.error) ?? {};
        const data = asRecord(error.data);
        const message = asString(data?.message) ?? asString(error.message) ?? asString(error.name);
        const status = typeof data?.statusCode === "number" ? ` (HTTP ${data.statusCode})` : "";
        const name = asString(error.name);
        if (message) errors.push(`${name && name !== message ? `${name}: ` : ""}${message}${status}`);
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
});
