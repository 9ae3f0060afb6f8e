/** `review` in `.github/autopilot.yml` (src/core/config/review-schema.ts and its cross-field check). */
import { describe, expect, it } from "vitest";
import { everyAgent, parseConfig } from "../../src/core/config/index.js";

describe("review", () => {
  it("is off by default and takes an agent like agents.primary", () => {
    const none = parseConfig("");
    expect(none.ok && none.config.review).toEqual({ agent: null, required: false, maxRounds: 2 });
    const set = parseConfig(
      "review:\n  agent: { preset: codex, model: gpt-5-codex }\n  required: true\n  maxRounds: 3\n",
    );
    if (!set.ok) throw new Error(set.error.message);
    expect(set.config.review).toMatchObject({
      agent: { preset: "codex", model: "gpt-5-codex" },
      required: true,
      maxRounds: 3,
    });
    // The reviewer is one of the agents the network allow-list and the USD budget's check cover.
    expect(everyAgent(set.config).map((a) => a.preset)).toContain("codex");
  });

  it("refuses a required review with no reviewer, and rounds out of bounds", () => {
    const required = parseConfig("review: { required: true }\n");
    expect(required.ok).toBe(false);
    if (!required.ok)
      expect(required.error.message).toMatch(
        /`review\.required`[\s\S]*a reviewing agent under review\.agent/,
      );
    expect(parseConfig("review: { agent: { preset: codex }, maxRounds: 0 }\n").ok).toBe(false);
    expect(parseConfig("review: { agent: { preset: codex }, maxRounds: 11 }\n").ok).toBe(false);
  });

  it("warns when the reviewer is the author's twin", () => {
    const twin = parseConfig("review: { agent: { preset: claude-code } }\n");
    expect(twin.ok && twin.warnings.join("\n")).toMatch(
      /review\.agent is the same preset and model as agents\.primary/,
    );
  });

  it("counts the reviewer against a USD budget: one whose spend cannot be priced is refused", () => {
    const result = parseConfig("budgets: { task: { usd: 5 } }\nreview: { agent: { preset: codex } }\n");
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.error.message).toMatch(
        /`budgets\.task\.usd`[\s\S]*a known price for codex \(no model set\)/,
      );
  });
});
