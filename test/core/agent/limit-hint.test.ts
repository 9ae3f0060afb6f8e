import { describe, expect, it } from "vitest";
import { limitWait } from "../../../src/core/agent/iteration.js";
import { unrecognisedLimitHint } from "../../../src/core/agent/limit-hint.js";

const lines = (...events: unknown[]) =>
  events.map((event) => (typeof event === "string" ? event : JSON.stringify(event))).join("\n");

describe("unrecognisedLimitHint", () => {
  it("finds a limit's words at the end of what the CLI printed as its own", () => {
    expect(unrecognisedLimitHint("step 1\nstep 2\nfatal: upstream quota hit for this key")).toBe(
      "fatal: upstream quota hit for this key",
    );
    expect(unrecognisedLimitHint("Too many requests from this client, try again later")).not.toBeNull();
    expect(unrecognisedLimitHint("error: throttled by the gateway")).not.toBeNull();
  });

  // Each CLI's transcript: the agent's own words and tool results mention rate limits and 429s, and the run
  // then fails for another reason. None of that is a limit.
  const agentWords: Record<string, string> = {
    "claude-code": lines(
      { type: "assistant", message: { content: [{ type: "text", text: "I added a rate limiter (429)" }] } },
      {
        type: "user",
        message: { content: [{ type: "tool_result", content: "expected 429 Too Many Requests" }] },
      },
      {
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        result: "Implemented the rate limiter: over the quota it answers 429",
      },
    ),
    codex: lines(
      {
        type: "item.completed",
        item: { type: "agent_message", text: "Added rate limiting: 429 when throttled" },
      },
      {
        type: "item.completed",
        item: {
          type: "command_execution",
          command: "npm test",
          aggregated_output: "429 Too Many Requests ✓",
        },
      },
      { type: "turn.failed", error: { message: "stream disconnected before completion" } },
    ),
    gemini: lines(
      { type: "message", role: "assistant", content: "I added a rate limiter", delta: true },
      { type: "tool_result", tool_id: "t1", status: "success", output: "rate limit test: 429 ok" },
      {
        type: "result",
        status: "error",
        error: { type: "FatalToolExecutionError", message: "tool crashed" },
      },
    ),
    opencode: lines(
      { type: "text", part: { type: "text", text: "I added a rate limiter that answers 429" } },
      {
        type: "tool_use",
        part: { tool: "bash", state: { input: { command: "npm test" }, output: "quota exceeded test ✓" } },
      },
      { type: "error", error: { name: "UnknownError", data: { message: "boom" } } },
    ),
    aider: lines(
      "I added a rate limiter: a client over its quota gets 429 Too Many Requests.",
      "",
      "Tokens: 2.1k sent, 310 received. Cost: $0.01 message, $0.01 session.",
      "Applied edit to src/limiter.py",
      "Traceback (most recent call last):",
      "KeyError: 'x'",
    ),
  };
  for (const [preset, output] of Object.entries(agentWords)) {
    it(`${preset}: the agent's own words and tool results are not read, however full of 429s`, () => {
      expect(unrecognisedLimitHint(output)).toBeNull();
    });
  }

  it("reads the CLI's own error events and error lines, in any of these CLIs", () => {
    const claude = lines({
      type: "result",
      subtype: "success",
      is_error: true,
      errors: ["upstream quota hit"],
    });
    expect(unrecognisedLimitHint(claude)).toBe("upstream quota hit");
    const gemini = lines(
      { type: "message", role: "assistant", content: "Working" },
      { type: "result", status: "error", error: { type: "ApiError", message: "capacity exceeded, retry" } },
    );
    expect(unrecognisedLimitHint(gemini)).toContain("capacity exceeded");
    const codexItem = lines({ type: "item.completed", item: { type: "error", message: "quota hit" } });
    expect(unrecognisedLimitHint(codexItem)).toBe("quota hit");
    const aider = lines(
      "Here is the change.",
      "Tokens: 2.1k sent, 310 received. Cost: $0.01 message, $0.01 session.",
      "litellm.NewProviderError: upstream throttled this key",
    );
    expect(unrecognisedLimitHint(aider)).toBe("litellm.NewProviderError: upstream throttled this key");
    // stderr, after a transcript on stdout
    expect(unrecognisedLimitHint(`${agentWords.opencode}\nfatal: 429 from the gateway`)).toBe(
      "fatal: 429 from the gateway",
    );
  });

  it("reads only the end of the output: a 429 long before the failure is not it", () => {
    const early = [
      "test: answers 429 when over the limit ... ok",
      ...Array.from({ length: 30 }, (_, i) => `line ${i}`),
    ];
    expect(unrecognisedLimitHint([...early, "TypeError: x is undefined"].join("\n"))).toBeNull();
  });
});

describe("limitWait", () => {
  const base = { retries: 3, baseMs: 5_000, factor: 3, maxWaitMs: 30_000, now: 0 };

  it("waits base × factor^n, capped by maxWaitMs, while waits are left", () => {
    expect(limitWait({ ...base, attempt: 0 })).toMatchObject({ ms: 5_000 });
    expect(limitWait({ ...base, attempt: 1 })).toMatchObject({ ms: 15_000 });
    expect(limitWait({ ...base, attempt: 2 })).toMatchObject({ ms: 30_000 });
  });

  it("then none is left", () => {
    expect(limitWait({ ...base, attempt: 3 })).toBeNull();
    expect(limitWait({ ...base, retries: 0, attempt: 0 })).toBeNull();
  });
});
