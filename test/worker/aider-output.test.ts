/**
 * Aider is a Python program (not on the npm registry the tests install from), so its preset's parser is tested
 * on output that Aider printed for people who published it in its issue tracker — each case names its source.
 */
import { describe, expect, it } from "vitest";
import { classifyAgentOutput } from "../../src/core/agent/classify.js";
import { aider, parseAiderUsage } from "../../src/core/presets/aider.js";

/** https://github.com/Aider-AI/aider/issues/2274 (Aider v0.62.1, prompt caching on). */
const CACHE_WRITE = "Tokens: 216k sent, 108k cache write, 1.4k received. Cost: $0.75 message, $0.79 session.";

/**
 * https://github.com/Aider-AI/aider/issues/2491: a report wrapped at the terminal's width, then Anthropic's rate
 * limit as LiteLLM raises it and Aider's own sentence about it.
 */
const WRAPPED_THEN_RATE_LIMITED = `Tokens: 114k sent, 92 received. Cost: $0.34 message, $0.67
session.

litellm.RateLimitError: AnthropicException -
b'{"type":"error","error":{"type":"rate_limit_error","message":"
This request would exceed your organization\\xe2\\x80\\x99s rate
limit of 20,000 input tokens per minute. For details, refer to:
https://docs.anthropic.com/en/api/rate-limits; see the response
headers for current usage. Please reduce the prompt length or
the maximum tokens requested, or try again later. You may also
contact sales at https://www.anthropic.com/contact-sales to
discuss your options for a rate limit increase."}}'
The API provider has rate limited you. Try again later or check
your quotas.
Retrying in 0.2 seconds...`;

describe("the aider preset on Aider's published output", () => {
  it("reads tokens and the session cost with a cache-write count among them", () => {
    expect(parseAiderUsage(CACHE_WRITE)).toEqual({ input: 216_000, output: 1_400, costUsd: 0.79 });
  });

  it("reads a report wrapped at the terminal's width (the session cost on the next line)", () => {
    expect(parseAiderUsage(WRAPPED_THEN_RATE_LIMITED)).toEqual({ input: 114_000, output: 92, costUsd: 0.67 });
  });

  it("a rate-limited run: its last words are the error, classified as a rate limit", () => {
    const output = aider.parseOutput(WRAPPED_THEN_RATE_LIMITED, "", 1);
    expect(output.isError).toBe(true);
    expect(output.costUsd).toBe(0.67);
    expect(output.errorText).toContain("rate limited you");
    expect(classifyAgentOutput(`${WRAPPED_THEN_RATE_LIMITED}\n`).kind).toBe("rate_limit");
  });
});
