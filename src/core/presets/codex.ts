/**
 * Codex: `codex exec --json … <prompt>`. JSON events: `item.completed` items of type `agent_message` (the last
 * one is the final message) and `command_execution` (the commands), `turn.completed` with `usage`, and
 * `turn.failed` with the error after Codex's own retries.
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

/**
 * Undoes the POSIX shell quoting of ONE word: `'…'` is literal, `"…"` honours `\"`, `\\`, `\$`, `\``, and a bare
 * backslash escapes the next character. Codex prints its commands shell-joined, which mixes the quote styles
 * inside one word (`'mkdir -p "$(dirname '"'a b')\" && …"`). Null when the text is not a single word.
 */
function shellUnquoteWord(text: string): string | null {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      out += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const d = text[i]!;
        if (d === "\\" && i + 1 < text.length && `"\\$\`\n`.includes(text[i + 1]!)) {
          if (text[i + 1] !== "\n") out += text[i + 1];
          i += 2;
        } else if (d === '"') {
          closed = true;
          i++;
          break;
        } else {
          out += d;
          i++;
        }
      }
      if (!closed) return null;
    } else if (c === "\\") {
      if (i + 1 >= text.length) return null;
      if (text[i + 1] !== "\n") out += text[i + 1];
      i += 2;
    } else if (/\s/.test(c)) {
      return null;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `/bin/bash -lc "cmd"` → `cmd` (Codex wraps every command in a login shell). */
export function unwrapShell(command: string): string {
  const match = /^(?:\/usr)?(?:\/bin\/)?(?:ba|z)?sh\s+-l?c\s+(.*)$/s.exec(command.trim());
  if (!match) return command;
  const inner = match[1]!.trim();
  return shellUnquoteWord(inner) ?? inner;
}

/** A `turn.completed` event's tokens: the uncached input (cache reads are billed at a fraction) and the output. */
function turnUsage(event: Record<string, unknown>): { input: number; output: number } {
  const usage = asRecord(event.usage) ?? {};
  return {
    input: Math.max(0, asNumber(usage.input_tokens) - asNumber(usage.cached_input_tokens)),
    output: asNumber(usage.output_tokens),
  };
}

export const codex = definePreset({
  name: "codex",
  install: { manager: "npm", package: "@openai/codex", version: "0.169.0", command: "codex" },
  keyEnv: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  // `codex exec` (0.169) authenticates to OpenAI with CODEX_API_KEY only; OPENAI_API_KEY is read by
  // `codex login --with-api-key` and by custom providers whose `env_key` names it. Users hold OPENAI_API_KEY.
  keyAliases: { CODEX_API_KEY: "OPENAI_API_KEY" },
  apiHosts: ["api.openai.com"],
  // Tokens only: the worker prices them.
  selfPricing: false,
  // OpenAI's models (openai.com/api/pricing).
  prices: {
    "gpt-5": { input: 1.25, output: 10 },
    "gpt-5-codex": { input: 1.25, output: 10 },
    "gpt-5-mini": { input: 0.25, output: 2 },
    "gpt-5-nano": { input: 0.05, output: 0.4 },
    "gpt-4.1": { input: 2, output: 8 },
    "gpt-4.1-mini": { input: 0.4, output: 1.6 },
    "gpt-4o": { input: 2.5, output: 10 },
    "gpt-4o-mini": { input: 0.15, output: 0.6 },
    o3: { input: 2, output: 8 },
    "o4-mini": { input: 1.1, output: 4.4 },
  },

  buildInvocation(options: InvocationOptions): Invocation {
    const viaStdin = promptViaStdin(options.prompt);
    const args = ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"];
    if (options.model) args.push("-m", options.model);
    args.push(...(options.args ?? []));
    // Codex reads the prompt from stdin when it is given as "-"; otherwise stdin must be closed (/dev/null).
    args.push(viaStdin ? "-" : options.prompt);
    return {
      command: "codex",
      args,
      env: { CODEX_HOME: `${options.home}/.codex` },
      ...(viaStdin ? { stdin: options.prompt } : {}),
    };
  },

  /** Each `turn.completed` adds its turn's `usage`, as parseOutput counts it. */
  usageMeter(): UsageMeter {
    let input = 0;
    let output = 0;
    return (line) => {
      const event = jsonEvent(line, "turn.completed");
      if (event?.type !== "turn.completed") return null;
      const turn = turnUsage(event);
      input += turn.input;
      output += turn.output;
      return { input, output, costUsd: null, model: null };
    };
  },

  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput {
    const commands: string[] = [];
    const seenCommands = new Set<string>();
    let finalMessage = "";
    let input = 0;
    let output = 0;
    let failure = "";
    const errors: string[] = [];

    for (const event of jsonLines(stdout)) {
      const type = event.type;
      if (type === "item.completed" || type === "item.started") {
        const item = asRecord(event.item);
        if (!item) continue;
        if (item.type === "agent_message" && type === "item.completed") {
          const text = asString(item.text);
          if (text !== undefined) finalMessage = text;
        } else if (item.type === "command_execution") {
          const id = asString(item.id) ?? "";
          const command = asString(item.command);
          if (command && !seenCommands.has(id || command)) {
            seenCommands.add(id || command);
            commands.push(unwrapShell(command));
          }
        }
      } else if (type === "turn.completed") {
        const turn = turnUsage(event);
        input += turn.input;
        output += turn.output;
      } else if (type === "turn.failed") {
        failure = asString(asRecord(event.error)?.message) ?? "turn failed";
      } else if (type === "error") {
        const message = asString(event.message);
        if (message) errors.push(message);
      }
    }

    const isError = failure !== "" || (exitCode !== null && exitCode !== 0);
    let errorText = "";
    if (isError) {
      errorText =
        failure ||
        errors.at(-1) ||
        [
          lastLines(stderr, 10),
          lastLines(
            stdout
              .split("\n")
              .filter((l) => !l.trim().startsWith("{"))
              .join("\n"),
            10,
          ),
        ]
          .filter(Boolean)
          .join("\n");
      const err = lastLines(stderr, 5);
      if (failure && err) errorText += `\n${err}`;
    }
    return { finalMessage, isError, errorText, usage: { input, output }, costUsd: 0, commands };
  },
});
