import { describe, expect, it } from "vitest";
import { decideUnrecognisedLimit, unrecognisedLimitHint } from "../../../src/core/agent/limit-hint.js";

describe("unrecognisedLimitHint", () => {
  it("finds a limit's words in the CLI's error text or the last lines of its output", () => {
    expect(unrecognisedLimitHint("provider said: 429, slow down", "")).toBe("provider said: 429, slow down");
    expect(unrecognisedLimitHint("", "step 1\nstep 2\nfatal: upstream quota hit for this key")).toBe(
      "fatal: upstream quota hit for this key",
    );
    expect(unrecognisedLimitHint("", "Too many requests from this client, try again later")).not.toBeNull();
    expect(unrecognisedLimitHint("", "error: throttled by the gateway")).not.toBeNull();
  });

  it("ignores the agent's transcript: its own words and tool results, however full of 429s", () => {
    const transcript = [
      JSON.stringify({
        type: "assistant",
        message: { content: [{ type: "text", text: "I added a rate limiter" }] },
      }),
      JSON.stringify({
        type: "user",
        message: { content: [{ type: "tool_result", content: "expected 429" }] },
      }),
      JSON.stringify({
        type: "item.completed",
        item: { type: "command_execution", output: "429 Too Many Requests" },
      }),
      "Segmentation fault",
    ].join("\n");
    expect(unrecognisedLimitHint("", transcript)).toBeNull();
  });

  it("reads only the end of the output: a 429 long before the failure is not it", () => {
    const early = [
      "test: answers 429 when over the limit ... ok",
      ...Array.from({ length: 30 }, (_, i) => `line ${i}`),
    ];
    expect(unrecognisedLimitHint("", [...early, "TypeError: x is undefined"].join("\n"))).toBeNull();
  });

  it("keeps Codex's error items, which are the CLI's own", () => {
    const line = JSON.stringify({ type: "item.completed", item: { type: "error", message: "quota hit" } });
    expect(unrecognisedLimitHint("", line)).toBe(line);
  });
});

describe("decideUnrecognisedLimit", () => {
  const base = { retries: 3, baseMs: 5_000, factor: 3, maxWaitMs: 30_000 };

  it("waits base × factor^n, capped by maxWaitMs, while waits are left", () => {
    expect(decideUnrecognisedLimit({ ...base, attempt: 0 })).toMatchObject({ action: "wait", ms: 5_000 });
    expect(decideUnrecognisedLimit({ ...base, attempt: 1 })).toMatchObject({ action: "wait", ms: 15_000 });
    expect(decideUnrecognisedLimit({ ...base, attempt: 2 })).toMatchObject({ action: "wait", ms: 30_000 });
  });

  it("then counts the run as a failure", () => {
    expect(decideUnrecognisedLimit({ ...base, attempt: 3 }).action).toBe("count_failure");
    expect(decideUnrecognisedLimit({ ...base, retries: 0, attempt: 0 }).action).toBe("count_failure");
  });
});
