/**
 * The gemini and opencode presets on what the real CLIs printed (test/fixtures/agent-cli/), so the parsing is
 * checked on every run even where the real-CLI tests are slow: final message, commands, tokens, model, errors.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gemini } from "../../src/core/presets/gemini.js";
import { opencode } from "../../src/core/presets/opencode.js";

const sample = (name: string) =>
  readFileSync(join(import.meta.dirname, "..", "fixtures", "agent-cli", name), "utf8");

describe("the gemini preset on Gemini CLI 0.61's output", () => {
  it("a completed run: the last assistant message, its shell command, the result's tokens and the model", () => {
    const output = gemini.parseOutput(sample("gemini-success.stdout"), sample("gemini-success.stderr"), 0);
    expect(output).toMatchObject({
      finalMessage: "Done.\n\n<promise>COMPLETE</promise>",
      isError: false,
      errorText: "",
      commands: ["echo checked"],
      usage: { input: 900, output: 150 },
      costUsd: 0,
      model: "gemini-2.5-flash",
    });
  });

  it("a failed run (exit 173): the result's error message is the error text", () => {
    const output = gemini.parseOutput(sample("gemini-daily.stdout"), sample("gemini-daily.stderr"), 173);
    expect(output.isError).toBe(true);
    expect(output.errorText).toContain("You have exhausted your daily quota on this model.");
    expect(output.turnLimit).toBeUndefined();
  });

  it("exit 53 is its own turn limit: not a failure", () => {
    const output = gemini.parseOutput(sample("gemini-success.stdout"), "", 53);
    expect(output.turnLimit).toBe(true);
  });
});

describe("the opencode preset on OpenCode 1.18's output", () => {
  it("a completed run: the text after the last tool use, its bash commands, the steps' tokens", () => {
    const output = opencode.parseOutput(sample("opencode-success.stdout"), "", 0);
    expect(output.finalMessage).toBe("Done.\n\n<promise>COMPLETE</promise>");
    expect(output.isError).toBe(false);
    expect(output.commands).toHaveLength(2);
    expect(output.commands[1]).toBe("echo checked");
    // Three steps of 400 prompt and 60 completion tokens; the custom provider has no price: cost 0.
    expect(output.usage).toEqual({ input: 1200, output: 180 });
    expect(output.costUsd).toBe(0);
  });

  it("an API error after its retries: the error's name, message and HTTP status", () => {
    const output = opencode.parseOutput(sample("opencode-quota.stdout"), "", 1);
    expect(output.isError).toBe(true);
    expect(output.errorText).toBe(
      "APIError: You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors. (HTTP 429)",
    );
  });
});
