/**
 * Aider: `aider --message-file <prompt> --yes-always --no-auto-commits …`. Aider prints plain text; the final
 * message is the last paragraph (or a `<promise>` line), and usage comes from its
 * `Tokens: 12k sent, 1.2k received. Cost: $0.04 message, $0.10 session.` lines (with `108k cache write` among
 * them when prompt caching is on; wrapped at the terminal's width). Aider is a Python program, not installable
 * from the npm registry the tests can reach: its parser is tested on output published in Aider's issue tracker
 * (test/worker/aider-output.test.ts), not on a run of the real CLI.
 *
 * Auto-commits are off: the worker commits each iteration itself with one consistent message, and Aider's
 * dirty-commit of files it did not touch would mix a person's local state into the branch. Its history files
 * go to the scratch home so they are never committed.
 */
import {
  type AgentOutput,
  definePreset,
  type Invocation,
  type InvocationOptions,
  type UsageMeter,
} from "./preset-types.js";
import { finalMessageFromText, lastLines } from "./preset-helpers.js";

function parseCount(text: string): number {
  const match = /^([\d.,]+)\s*([kKmM]?)$/.exec(text.trim());
  if (!match) return 0;
  const value = Number(match[1]!.replace(/,/g, ""));
  if (!Number.isFinite(value)) return 0;
  const unit = match[2]!.toLowerCase();
  return Math.round(unit === "k" ? value * 1_000 : unit === "m" ? value * 1_000_000 : value);
}

export function parseAiderUsage(stdout: string): { input: number; output: number; costUsd: number } {
  let input = 0;
  let output = 0;
  let session = 0;
  let messages = 0;
  const lines = stdout.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    // Aider wraps its report at the terminal's width: `… Cost: $0.34 message, $0.67` / `session.`
    while (/^Tokens:/.test(line) && /\$[\d.]+$/.test(line) && /^session\b/.test(lines[i + 1]?.trim() ?? "")) {
      line = `${line} ${lines[++i]!.trim()}`;
    }
    const tokens = /^Tokens:\s*(.*?)(?:\.\s*Cost:\s*(.*))?$/.exec(line);
    if (!tokens) continue;
    const sent = /(\d[\d.,]*\s*[kKmM]?)\s+sent\b/.exec(tokens[1]!);
    const received = /(\d[\d.,]*\s*[kKmM]?)\s+received\b/.exec(tokens[1]!);
    if (sent) input += parseCount(sent[1]!);
    if (received) output += parseCount(received[1]!);
    if (tokens[2]) {
      const message = /\$([\d.]+)\s+message/.exec(tokens[2]);
      const total = /\$([\d.]+)\s+session/.exec(tokens[2]);
      if (message) messages += Number(message[1]);
      if (total) session = Number(total[1]);
    }
  }
  return { input, output, costUsd: session || messages };
}

export const aider = definePreset({
  name: "aider",
  // A Python program: installed with pipx (the npm registry does not have it).
  install: { manager: "pipx", package: "aider-chat", version: "0.86.2", command: "aider" },
  // Aider talks to many providers; it gets the common provider keys, and nothing else.
  keyEnv: [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
  ],
  // The APIs of the providers whose keys it gets (through litellm).
  apiHosts: [
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
    "api.deepseek.com",
    "openrouter.ai",
    "api.groq.com",
    "api.mistral.ai",
  ],
  // Its `Cost: $… session` lines, for the models it knows.
  selfPricing: true,
  // It runs the other presets' providers' models, priced by their records.
  prices: {},

  buildInvocation(options: InvocationOptions): Invocation {
    const args = [
      "--message-file",
      options.promptFile,
      "--yes-always",
      "--no-auto-commits",
      "--no-dirty-commits",
      "--no-pretty",
      "--no-stream",
      "--no-fancy-input",
      "--no-check-update",
      "--no-show-release-notes",
      "--no-gitignore",
      "--analytics-disable",
      "--chat-history-file",
      `${options.home}/.aider.chat.history.md`,
      "--input-history-file",
      `${options.home}/.aider.input.history`,
    ];
    if (options.model) args.push("--model", options.model);
    args.push(...(options.args ?? []));
    return { command: "aider", args, env: {} };
  },

  /** Its `Tokens: … sent, … received. Cost: $… message, $… session.` report after each message. */
  usageMeter(): UsageMeter {
    const reports: string[] = [];
    return (line) => {
      const text = line.trim();
      // A report wrapped at the terminal's width goes on with its `session.` line.
      if (/^Tokens:/.test(text)) reports.push(text);
      else if (/^session\b/.test(text) && reports.length > 0) reports[reports.length - 1] += ` ${text}`;
      else return null;
      const usage = parseAiderUsage(reports.join("\n"));
      return { ...usage, costUsd: usage.costUsd || null, model: null };
    };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    const usage = parseAiderUsage(stdout);
    const finalMessage = finalMessageFromText(
      stdout
        .split("\n")
        .filter((l) => !/^Tokens:/.test(l.trim()))
        .join("\n"),
    );
    const isError = exitCode !== 0;
    const hasSignal = finalMessage.includes("<promise>");
    return {
      finalMessage,
      isError,
      // Aider may give up on provider errors and still exit 0: without a signal its last words are checked too.
      errorText:
        isError || !hasSignal
          ? [lastLines(stdout, 10), lastLines(stderr, 10)].filter(Boolean).join("\n")
          : "",
      usage: { input: usage.input, output: usage.output },
      costUsd: usage.costUsd,
      commands: [],
    };
  },
});
