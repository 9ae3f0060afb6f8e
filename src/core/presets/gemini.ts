/**
 * Gemini CLI (0.61): `gemini -p <prompt> --output-format stream-json --approval-mode yolo --skip-trust`. JSONL
 * events (recorded in test/fixtures/agent-cli/gemini-*.stdout): `init` (`model`), `message` (assistant chunks,
 * `delta: true` for streamed pieces), `tool_use` (`tool_name`, `parameters`; `run_shell_command` → commands),
 * `tool_result`, `error`, and a final `result` with `status` (`success` | `error`), `error: {type, message}` and
 * `stats` (`input_tokens`, `input` = the uncached part, `output_tokens`, per-model `models`). A failed run exits
 * non-zero (1, or 41/42/44/52/53/130/145/173… by cause; 53 = its own turn limit). The single-object
 * `--output-format json` shape (`response`, `stats`, `error`) is read as well.
 *
 * `--skip-trust`: in a folder it has not been told to trust, the CLI silently downgrades `yolo` to `default`,
 * and headless it then refuses every tool. The Actions runner's checkout is the one folder the agent works in.
 */
import { type AgentOutput, definePreset, type Invocation, type InvocationOptions } from "./preset-types.js";
import {
  asNumber,
  asRecord,
  asString,
  finalMessageFromText,
  jsonLines,
  lastLines,
  promptViaStdin,
} from "./preset-helpers.js";

const SHELL_TOOLS = new Set(["run_shell_command", "shell", "run_shell"]);

/** Exit code of a run that stopped at the CLI's own turn limit (`model.maxSessionTurns`). */
const TURN_LIMIT_EXIT = 53;

function statsTokens(stats: Record<string, unknown> | undefined): { input: number; output: number } {
  if (!stats) return { input: 0, output: 0 };
  // `input` is the uncached part of `input_tokens`: cache reads are billed at a fraction (as for Claude Code).
  let input =
    "input" in stats ? asNumber(stats.input) : asNumber(stats.input_tokens) || asNumber(stats.inputTokens);
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

export const gemini = definePreset({
  name: "gemini",
  install: { manager: "npm", package: "@google/gemini-cli", version: "0.61.0", command: "gemini" },
  keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  // The Gemini API (the API-key auth method); Vertex AI or a Google login needs its hosts in `network.allow`.
  apiHosts: ["generativelanguage.googleapis.com"],
  // Tokens only: the worker prices them.
  selfPricing: false,
  // Google's models (ai.google.dev/gemini-api/docs/pricing). Long-context tiers (Gemini 2.5 Pro above 200k
  // prompt tokens) are not modelled: the lower price is used, so a budget may run a little late, never early.
  prices: {
    "gemini-2.5-pro": { input: 1.25, output: 10 },
    "gemini-2.5-flash": { input: 0.3, output: 2.5 },
    "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
    "gemini-2.0-flash": { input: 0.1, output: 0.4 },
  },

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = promptViaStdin(options.prompt);
    // `-p` text is appended to what stdin holds: a long prompt goes through stdin with a short pointer.
    const args = [
      "-p",
      viaStdin ? "Follow the task instructions given above." : options.prompt,
      "--output-format",
      "stream-json",
      "--approval-mode",
      "yolo",
      "--skip-trust",
    ];
    if (options.model) args.push("-m", options.model);
    args.push(...(options.args ?? []));
    return {
      command: "gemini",
      args,
      // No telemetry from a CI job.
      env: { GEMINI_TELEMETRY_ENABLED: "false" },
      ...(viaStdin ? { stdin: options.prompt } : {}),
    };
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
    let model: string | undefined;
    let turn = "";
    let lastTurn = "";
    let usage = { input: 0, output: 0 };
    const errors: string[] = [];
    let failed = false;
    for (const event of events) {
      if (event.type === "init") {
        model = asString(event.model) ?? model;
      } else if (event.type === "message" && event.role === "assistant") {
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
        // The model that answered (the stand-in and the API name it in the stats), for the price table.
        const models = Object.keys(asRecord(asRecord(event.stats)?.models) ?? {});
        if (models.length === 1 && !model) model = models[0];
        if (event.status === "error") {
          failed = true;
          const message = errorMessage(event.error);
          if (message) errors.push(message);
        }
      }
    }
    const turnLimit = exitCode === TURN_LIMIT_EXIT;
    const isError = failed || exitCode !== 0;
    return {
      finalMessage: lastTurn,
      isError,
      errorText: isError ? [...errors.slice(-3), lastLines(stderr, 10)].filter(Boolean).join("\n") : "",
      usage,
      // Gemini CLI reports tokens, never a price: the worker prices them from the price table.
      costUsd: 0,
      commands,
      ...(model ? { model } : {}),
      ...(turnLimit ? { turnLimit: true } : {}),
    };
  },
});
