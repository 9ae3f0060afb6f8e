/**
 * The presets' usage meters (src/core/presets/*.ts `usageMeter`): a run's usage as its output streams, line by
 * line, which the worker weighs against what is left of the budget to stop a run mid-way.
 */
import { describe, expect, it } from "vitest";
import { getPreset } from "../../../src/core/presets/index.js";

/** Feeds lines to a fresh meter of the preset; the readings after each line that changed the usage. */
function meter(preset: "claude-code" | "codex" | "opencode" | "aider" | "custom", lines: string[]) {
  const read = getPreset(preset).usageMeter!();
  return lines.map((line) => read(line)).filter((r) => r !== null);
}

describe("usage meters", () => {
  it("Claude Code: each API call once, though its usage repeats on every content block, then the result's totals", () => {
    const assistant = (id: string, input: number, output: number) =>
      JSON.stringify({
        type: "assistant",
        message: {
          id,
          model: "claude-sonnet-4-5-20250929",
          content: [{ type: "text", text: "x" }],
          usage: { input_tokens: input, cache_creation_input_tokens: 100, output_tokens: output },
        },
      });
    const readings = meter("claude-code", [
      assistant("msg_1", 1000, 50),
      assistant("msg_1", 1000, 50),
      '{"type":"user","message":{"content":[]}}',
      assistant("msg_2", 2000, 80),
      JSON.stringify({
        type: "result",
        usage: { input_tokens: 3000, cache_creation_input_tokens: 200, output_tokens: 130 },
        total_cost_usd: 0.0123,
      }),
    ]);
    expect(readings.map((r) => [r.input, r.output, r.costUsd])).toEqual([
      [1100, 50, null],
      [1100, 50, null],
      [3200, 130, null],
      [3200, 130, 0.0123],
    ]);
    expect(readings[0]!.model).toBe("claude-sonnet-4-5-20250929");
  });

  it("Codex: each completed turn adds its uncached input and its output", () => {
    const turn = (input: number, cached: number, output: number) =>
      JSON.stringify({
        type: "turn.completed",
        usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output },
      });
    const readings = meter("codex", [
      turn(5000, 1000, 300),
      '{"type":"item.completed"}',
      turn(6000, 4000, 200),
    ]);
    expect(readings.map((r) => [r.input, r.output, r.costUsd])).toEqual([
      [4000, 300, null],
      [6000, 500, null],
    ]);
  });

  it("OpenCode: each finished step adds its tokens and cost; a model it does not price leaves the cost to the worker", () => {
    const step = (cost: number) =>
      JSON.stringify({
        type: "step_finish",
        part: { tokens: { input: 1000, output: 100, reasoning: 50 }, cost },
      });
    expect(meter("opencode", [step(0.01), step(0.02)]).map((r) => [r.input, r.output, r.costUsd])).toEqual([
      [1000, 150, 0.01],
      [2000, 300, 0.03],
    ]);
    expect(meter("opencode", [step(0)])[0]!.costUsd).toBeNull();
  });

  it("Aider: its report after each message, wrapped or not, with the session's cost", () => {
    const readings = meter("aider", [
      "Applied edit to src/a.py",
      "Tokens: 2.1k sent, 150 received. Cost: $0.01 message, $0.01 session.",
      "Tokens: 3.0k sent, 200 received. Cost: $0.02 message, $0.03",
      "session.",
    ]);
    expect(readings.map((r) => [r.input, r.output, r.costUsd])).toEqual([
      [2100, 150, 0.01],
      // Wrapped: the new session total comes with its `session.` line; until then the last one stands.
      [5100, 350, 0.01],
      [5100, 350, 0.03],
    ]);
  });

  it("a custom command: each `autopilot-usage` line adds what it reports", () => {
    const line = 'autopilot-usage: {"input":100,"output":10,"costUsd":0.12}';
    expect(
      meter("custom", ["working", line, "more", line]).map((r) => [r.input, r.output, r.costUsd]),
    ).toEqual([
      [100, 10, 0.12],
      [200, 20, 0.24],
    ]);
  });

  it("Claude Code is given what is left of the budget as its own cap; without one, no cap", () => {
    const base = { prompt: "p", promptFile: "/tmp/p", workdir: "/w", home: "/h" };
    const capped = getPreset("claude-code").buildInvocation({ ...base, maxCostUsd: 0.375 }).args;
    expect(capped.slice(capped.indexOf("--max-budget-usd"), capped.indexOf("--max-budget-usd") + 2)).toEqual([
      "--max-budget-usd",
      "0.3750",
    ]);
    expect(getPreset("claude-code").buildInvocation(base).args).not.toContain("--max-budget-usd");
  });

  it("Gemini CLI reports its usage only at the end: no meter, the budget is checked after its run", () => {
    expect(getPreset("gemini").usageMeter).toBeUndefined();
  });
});
