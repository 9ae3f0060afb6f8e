import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { classifyAgentOutput } from "../../src/core/agent/classify.js";
import { parseSignal } from "../../src/core/agent/signals.js";
import { parseAiderUsage } from "../../src/core/presets/aider.js";
import { unwrapShell } from "../../src/core/presets/codex.js";
import { ALL_MODEL_KEYS, getPreset } from "../../src/core/presets/index.js";
import { finalMessageFromText, MAX_PROMPT_ARG_BYTES } from "../../src/core/presets/preset-helpers.js";

// Output captured from the real Claude Code and Codex CLIs run offline (test/fixtures/agent-cli/README.md), in
// the repository so the suite does not depend on a directory beside it.
const samples = join(import.meta.dirname, "..", "fixtures", "agent-cli");
const sample = (name: string) => readFileSync(join(samples, name), "utf8");

const claude = getPreset("claude-code");
const codex = getPreset("codex");

const invocationOptions = {
  prompt: "Do the task.",
  promptFile: "/tmp/scratch/prompt-1.md",
  workdir: "/work/repo",
  home: "/tmp/scratch/home",
};

describe("the claude-code preset", () => {
  it("runs claude -p with stream-json, verbose output, permissions bypassed and the model", () => {
    const invocation = claude.buildInvocation({
      ...invocationOptions,
      model: "claude-opus-4-8",
      args: ["--max-turns", "40"],
    });
    expect(invocation.command).toBe("claude");
    expect(invocation.args.slice(0, 2)).toEqual(["-p", "Do the task."]);
    expect(invocation.args).toEqual(
      expect.arrayContaining([
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
      ]),
    );
    expect(invocation.args.join(" ")).toContain("--model claude-opus-4-8");
    expect(invocation.args.slice(-2)).toEqual(["--max-turns", "40"]);
    expect(invocation.env.IS_SANDBOX).toBe("1");
    expect(invocation.stdin).toBeUndefined();
  });

  it("sends a prompt too long for one argument through stdin", () => {
    const prompt = "x".repeat(MAX_PROMPT_ARG_BYTES + 1);
    const invocation = claude.buildInvocation({ ...invocationOptions, prompt });
    expect(invocation.args).not.toContain(prompt);
    expect(invocation.stdin).toBe(prompt);
  });

  it("reads the final message, usage, cost and the COMPLETE signal of a successful run", () => {
    const output = claude.parseOutput(sample("claude-success.stdout"), "", 0);
    expect(output.finalMessage).toBe("Done. <promise>COMPLETE</promise>");
    expect(output.isError).toBe(false);
    expect(output.usage).toEqual({ input: 200, output: 40 });
    expect(output.costUsd).toBe(0.002);
    expect(parseSignal(output.finalMessage)).toEqual({ kind: "complete" });
  });

  it("reports a 429 run as an error that the classifier reads as a rate limit", () => {
    const stdout = sample("claude-429-retries2.stream.stdout");
    const output = claude.parseOutput(stdout, "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("429");
    expect(classifyAgentOutput(stdout, new Date("2026-11-22T00:00:00Z")).kind).toBe("rate_limit");
  });

  it("reports a 401 run as an authentication failure", () => {
    const stdout = sample("claude-401-retries2.stream.stdout");
    const output = claude.parseOutput(stdout, "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("Invalid API key");
    expect(classifyAgentOutput(stdout).kind).toBe("auth");
  });

  it("reports a missing key as an authentication failure", () => {
    const stdout = sample("claude-no-api-key.stdout");
    expect(claude.parseOutput(stdout, "", 1).isError).toBe(true);
    expect(classifyAgentOutput(stdout).kind).toBe("auth");
  });

  it("reports a 529 as overloaded", () => {
    const stdout = sample("claude-529-retries2.stream.stdout");
    expect(claude.parseOutput(stdout, "", 1).isError).toBe(true);
    expect(classifyAgentOutput(stdout).kind).toBe("overloaded");
  });

  it("marks a run that stopped at its turn limit, keeping its usage", () => {
    const output = claude.parseOutput(sample("claude-max-turns.stdout"), "", 1);
    expect(output.turnLimit).toBe(true);
    expect(output.finalMessage).toBe("I will create the file.");
    expect(output.usage).toEqual({ input: 100, output: 20 });
  });

  it("reads a run with no result event (killed) from what it printed last", () => {
    const lines = sample("claude-success.stdout").trim().split("\n").slice(0, -1).join("\n");
    const output = claude.parseOutput(lines, "", null);
    expect(output.finalMessage).toBe("Done. <promise>COMPLETE</promise>");
    expect(output.isError).toBe(true);
  });

  it("collects the Bash commands the agent ran", () => {
    const event = {
      type: "assistant",
      message: { content: [{ type: "tool_use", name: "Bash", input: { command: "git push --force" } }] },
    };
    const output = claude.parseOutput(`${JSON.stringify(event)}\n${sample("claude-success.stdout")}`, "", 0);
    expect(output.commands).toEqual(["git push --force"]);
  });
});

describe("the codex preset", () => {
  it("runs codex exec --json with the model and the prompt last", () => {
    const invocation = codex.buildInvocation({ ...invocationOptions, model: "gpt-5-codex" });
    expect(invocation.command).toBe("codex");
    expect(invocation.args.slice(0, 2)).toEqual(["exec", "--json"]);
    expect(invocation.args.join(" ")).toContain("-m gpt-5-codex");
    expect(invocation.args.at(-1)).toBe("Do the task.");
    expect(invocation.env.CODEX_HOME).toBe("/tmp/scratch/home/.codex");
  });

  it("reads the last agent message, the usage of turn.completed and the commands of a successful run", () => {
    const output = codex.parseOutput(sample("codex-success.stdout"), "", 0);
    expect(output.finalMessage).toBe("Done. <promise>COMPLETE</promise>");
    expect(output.isError).toBe(false);
    expect(output.usage).toEqual({ input: 200, output: 40 });
    expect(output.commands).toEqual(['printf "hello from fake model\\n" > hello.txt']);
  });

  it("reports turn.failed with its message, which the classifier reads as a rate limit", () => {
    const stdout = sample("codex-429.stdout");
    const output = codex.parseOutput(stdout, "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("exceeded retry limit, last status: 429");
    expect(output.finalMessage).toBe("");
    expect(classifyAgentOutput(stdout).kind).toBe("rate_limit");
  });

  it("unwraps the login shell Codex puts around commands", () => {
    expect(unwrapShell(`/bin/bash -lc "rm -rf build"`)).toBe("rm -rf build");
    expect(unwrapShell(`bash -lc 'echo '\\''hi'\\'''`)).toBe("echo 'hi'");
    expect(unwrapShell("ls -la")).toBe("ls -la");
  });
});

describe("the aider preset", () => {
  const aider = getPreset("aider");

  it("passes the prompt file, answers yes, leaves commits to Autopilot and keeps history out of the repo", () => {
    const invocation = aider.buildInvocation({ ...invocationOptions, model: "sonnet" });
    expect(invocation.args).toEqual(
      expect.arrayContaining([
        "--message-file",
        "/tmp/scratch/prompt-1.md",
        "--yes-always",
        "--no-auto-commits",
      ]),
    );
    expect(invocation.args.join(" ")).toContain("--chat-history-file /tmp/scratch/home/");
    expect(invocation.args.join(" ")).toContain("--model sonnet");
  });

  it("sums its token lines and takes the session cost", () => {
    const stdout = [
      "Tokens: 12k sent, 1.2k received. Cost: $0.04 message, $0.04 session.",
      "Applied edit to src/app.ts",
      "Tokens: 3,456 sent, 100 received. Cost: $0.01 message, $0.05 session.",
    ].join("\n");
    expect(parseAiderUsage(stdout)).toEqual({ input: 15_456, output: 1_300, costUsd: 0.05 });
  });

  it("takes the last paragraph as the final message", () => {
    const output = aider.parseOutput("Editing files.\n\nAll done.\n<promise>COMPLETE</promise>\n", "", 0);
    expect(parseSignal(output.finalMessage)).toEqual({ kind: "complete" });
  });
});

describe("the opencode preset", () => {
  const opencode = getPreset("opencode");
  const events = [
    { type: "step_start", part: { type: "step-start" } },
    { type: "text", part: { type: "text", text: "Let me look." } },
    { type: "tool_use", part: { tool: "bash", state: { input: { command: "npm test" } } } },
    { type: "step_finish", part: { tokens: { input: 50, output: 10, reasoning: 5 }, cost: 0.01 } },
    { type: "text", part: { type: "text", text: "Fixed. <promise>COMPLETE</promise>" } },
    { type: "step_finish", part: { tokens: { input: 70, output: 20, reasoning: 0 }, cost: 0.02 } },
  ];

  it("runs opencode run --format json", () => {
    const invocation = opencode.buildInvocation({ ...invocationOptions, model: "anthropic/claude-sonnet-4" });
    expect(invocation.args.slice(0, 3)).toEqual(["run", "--format", "json"]);
    expect(invocation.args.at(-1)).toBe("Do the task.");
  });

  it("reads the text after the last tool use, step usage and bash commands", () => {
    const output = opencode.parseOutput(events.map((e) => JSON.stringify(e)).join("\n"), "", 0);
    expect(output.finalMessage).toBe("Fixed. <promise>COMPLETE</promise>");
    expect(output.usage).toEqual({ input: 120, output: 35 });
    expect(output.costUsd).toBeCloseTo(0.03);
    expect(output.commands).toEqual(["npm test"]);
  });

  it("reports an error event", () => {
    const error = { type: "error", error: { name: "APIError", data: { message: "429 Too Many Requests" } } };
    const output = opencode.parseOutput(JSON.stringify(error), "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("429 Too Many Requests");
  });
});

describe("the gemini preset", () => {
  const gemini = getPreset("gemini");

  it("runs gemini -p with stream-json, yolo approval and the checkout trusted", () => {
    const invocation = gemini.buildInvocation({ ...invocationOptions, model: "gemini-2.5-pro" });
    expect(invocation.args).toEqual([
      "-p",
      "Do the task.",
      ...[
        "--output-format",
        "stream-json",
        "--approval-mode",
        "yolo",
        "--skip-trust",
        "-m",
        "gemini-2.5-pro",
      ],
    ]);
  });

  it("joins assistant deltas of the last turn and reads shell commands and result stats", () => {
    const lines = [
      { type: "init", session_id: "s", model: "gemini-2.5-pro" },
      { type: "message", role: "user", content: "<promise>COMPLETE</promise> is how to finish" },
      { type: "message", role: "assistant", content: "Running tests", delta: true },
      {
        type: "tool_use",
        tool_name: "run_shell_command",
        tool_id: "t1",
        parameters: { command: "npm test" },
      },
      { type: "tool_result", tool_id: "t1", status: "success", output: "ok" },
      { type: "message", role: "assistant", content: "Done. ", delta: true },
      { type: "message", role: "assistant", content: "<promise>COMPLETE</promise>", delta: true },
      {
        type: "result",
        status: "success",
        stats: { input_tokens: 300, output_tokens: 30, total_tokens: 330 },
      },
    ];
    const output = gemini.parseOutput(lines.map((l) => JSON.stringify(l)).join("\n"), "", 0);
    expect(output.finalMessage).toBe("Done. <promise>COMPLETE</promise>");
    expect(output.commands).toEqual(["npm test"]);
    expect(output.usage).toEqual({ input: 300, output: 30 });
    expect(output.isError).toBe(false);
  });

  it("reports a failed result", () => {
    const result = { type: "result", status: "error", error: { type: "API", message: "[API Error: quota]" } };
    const output = gemini.parseOutput(JSON.stringify(result), "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("quota");
  });
});

describe("the custom preset", () => {
  const custom = getPreset("custom");

  it("substitutes the quoted prompt file into the shell command", () => {
    const invocation = custom.buildInvocation({
      ...invocationOptions,
      promptFile: "/tmp/it's here/prompt.md",
      command: "my-agent --input {prompt_file}",
    });
    expect(invocation.command).toBe("/bin/sh");
    expect(invocation.args).toEqual(["-c", `my-agent --input '/tmp/it'\\''s here/prompt.md'`]);
  });

  it("refuses to run without a command", () => {
    expect(() => custom.buildInvocation(invocationOptions)).toThrow(/needs a `command`/);
  });

  it("takes the last paragraph, or a promise line printed before a closing remark", () => {
    expect(finalMessageFromText("working\n\nall done <promise>COMPLETE</promise>\n")).toBe(
      "all done <promise>COMPLETE</promise>",
    );
    expect(finalMessageFromText("<promise>BLOCKED: no access</promise>\n\nbye\n")).toBe(
      "<promise>BLOCKED: no access</promise>",
    );
    expect(finalMessageFromText("just text\n\nmore text")).toBe("more text");
  });

  it("reads its usage and command lines", () => {
    const stdout = [
      'autopilot-usage: {"input":10,"output":5,"costUsd":0.5}',
      "autopilot-command: rm -rf dist",
      "done <promise>COMPLETE</promise>",
    ].join("\n");
    const output = custom.parseOutput(stdout, "", 0);
    expect(output.usage).toEqual({ input: 10, output: 5 });
    expect(output.costUsd).toBe(0.5);
    expect(output.commands).toEqual(["rm -rf dist"]);
    expect(output.finalMessage).toBe("done <promise>COMPLETE</promise>");
  });
});

describe("model keys", () => {
  it("go only to their own preset", () => {
    expect(getPreset("claude-code").keyEnv).toContain("ANTHROPIC_API_KEY");
    expect(getPreset("claude-code").keyEnv).not.toContain("OPENAI_API_KEY");
    expect(getPreset("codex").keyEnv).toContain("OPENAI_API_KEY");
    expect(getPreset("codex").keyEnv).not.toContain("ANTHROPIC_API_KEY");
    expect(getPreset("gemini").keyEnv).toEqual(["GEMINI_API_KEY", "GOOGLE_API_KEY"]);
    expect(getPreset("custom").keyEnv).toEqual([]);
    expect(ALL_MODEL_KEYS).toEqual(
      expect.arrayContaining(["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]),
    );
  });
});
