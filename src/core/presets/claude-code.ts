/**
 * Claude Code: `claude -p <prompt> --output-format stream-json --verbose`. The stream ends with one `result`
 * event carrying the final text, `is_error`, `api_error_status`, `usage` and `total_cost_usd`; a failed API call
 * still says `"subtype":"success"`, so `is_error`, the API status and the exit code decide. Bash tool uses are
 * the commands the agent ran.
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
  jsonEvent,
  jsonLines,
  lastLines,
  promptViaStdin,
} from "./preset-helpers.js";

/** A `usage` record's tokens: cache writes count as input (cache reads are billed at a fraction), and the output. */
function tokensOf(usage: unknown): { input: number; output: number } {
  const record = asRecord(usage) ?? {};
  return {
    input: asNumber(record.input_tokens) + asNumber(record.cache_creation_input_tokens),
    output: asNumber(record.output_tokens),
  };
}

export const claudeCode = definePreset({
  name: "claude-code",
  install: { manager: "npm", package: "@anthropic-ai/claude-code", version: "2.1.330", command: "claude" },
  keyEnv: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
  // With CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC (set below) the API is all it calls, for both kinds of key.
  apiHosts: ["api.anthropic.com"],
  // `total_cost_usd` in its final event.
  selfPricing: true,
  // Anthropic's models (anthropic.com/pricing), for the CLIs that run them and report tokens only (OpenCode).
  prices: {
    "claude-opus-4-1": { input: 15, output: 75 },
    "claude-opus-4": { input: 15, output: 75 },
    "claude-sonnet-4-5": { input: 3, output: 15 },
    "claude-sonnet-4": { input: 3, output: 15 },
    "claude-haiku-4-5": { input: 1, output: 5 },
    "claude-3-5-haiku": { input: 0.8, output: 4 },
  },

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = promptViaStdin(options.prompt);
    const args = ["-p"];
    if (!viaStdin) args.push(options.prompt);
    // The Actions runner is a throwaway VM: the agent may edit and run anything in the checkout. As root the CLI
    // refuses bypass mode unless IS_SANDBOX=1 says the machine is disposable.
    args.push("--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions");
    if (options.model) args.push("--model", options.model);
    // Its own cap on what the run may spend (`--max-budget-usd`, print mode only): the worker's meter below stops
    // the run at the same amount; this holds where the stream's tokens are priced differently.
    if (options.maxCostUsd != null && options.maxCostUsd > 0)
      args.push("--max-budget-usd", options.maxCostUsd.toFixed(4));
    args.push(...(options.args ?? []));
    return {
      command: "claude",
      args,
      env: {
        IS_SANDBOX: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      ...(viaStdin ? { stdin: options.prompt } : {}),
    };
  },

  /**
   * Each `assistant` event carries its API call's `usage`, repeated for every content block of that message (one
   * event each, the same `message.id`): the last reading per message counts. The `result` event's totals and
   * `total_cost_usd` end it.
   */
  usageMeter(): UsageMeter {
    const messages = new Map<string, { input: number; output: number }>();
    let model: string | null = null;
    return (line) => {
      // Only the events that carry usage are parsed: the rest of the stream is most of it.
      const event = jsonEvent(line, '"usage"');
      if (event?.type === "result")
        return { ...tokensOf(event.usage), costUsd: asNumber(event.total_cost_usd), model };
      const message = event?.type === "assistant" ? asRecord(event.message) : null;
      const usage = asRecord(message?.usage);
      if (!message || !usage) return null;
      model = asString(message.model) ?? model;
      messages.set(asString(message.id) ?? `#${messages.size}`, tokensOf(usage));
      let input = 0;
      let output = 0;
      for (const m of messages.values()) {
        input += m.input;
        output += m.output;
      }
      return { input, output, costUsd: null, model };
    };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    const commands: string[] = [];
    let lastAssistantText = "";
    let lastRetry = "";
    let result: Record<string, unknown> | undefined;

    for (const event of jsonLines(stdout)) {
      const type = event.type;
      if (type === "assistant") {
        const content = asRecord(event.message)?.content;
        if (!Array.isArray(content)) continue;
        for (const block of content) {
          const item = asRecord(block);
          if (!item) continue;
          if (item.type === "text" && typeof item.text === "string" && item.text.trim()) {
            lastAssistantText = item.text;
          } else if (item.type === "tool_use" && item.name === "Bash") {
            const command = asString(asRecord(item.input)?.command);
            if (command) commands.push(command);
          }
        }
      } else if (type === "system" && event.subtype === "api_retry") {
        const status =
          event.error_status === null || event.error_status === undefined ? "" : ` ${event.error_status}`;
        lastRetry = `api_retry: ${asString(event.error) ?? "unknown"}${status}`;
      } else if (type === "result") {
        result = event;
      }
    }

    if (!result) {
      // Killed, crashed, or not stream-json at all: what it printed last is all there is.
      const plain = stdout
        .split("\n")
        .filter((line) => !line.trim().startsWith("{"))
        .join("\n");
      return {
        finalMessage: lastAssistantText || lastLines(plain, 5),
        isError: exitCode !== 0,
        errorText:
          exitCode === 0
            ? ""
            : [lastLines(plain, 10), lastLines(stderr, 10), lastRetry].filter(Boolean).join("\n"),
        usage: { input: 0, output: 0 },
        costUsd: 0,
        commands,
      };
    }

    const resultText = asString(result.result) ?? "";
    const apiStatus = result.api_error_status;
    const errors = Array.isArray(result.errors)
      ? result.errors.filter((e): e is string => typeof e === "string")
      : [];
    const subtype = asString(result.subtype) ?? "";
    const isError =
      result.is_error === true || (exitCode !== null && exitCode !== 0) || subtype.startsWith("error");
    const errorParts: string[] = [];
    if (isError) {
      if (resultText) errorParts.push(resultText);
      if (typeof apiStatus === "number") errorParts.push(`(api_error_status ${apiStatus})`);
      if (subtype && subtype !== "success") errorParts.push(`(${subtype})`);
      errorParts.push(...errors);
      if (lastRetry) errorParts.push(lastRetry);
      const err = lastLines(stderr, 10);
      if (err) errorParts.push(err);
    }
    return {
      finalMessage: resultText || lastAssistantText,
      isError,
      errorText: errorParts.join("\n"),
      // Cache reads are excluded: they are billed at a fraction and would dwarf a token budget.
      usage: tokensOf(result.usage),
      costUsd: asNumber(result.total_cost_usd),
      commands,
      ...(subtype === "error_max_turns" ? { turnLimit: true } : {}),
    };
  },
});
