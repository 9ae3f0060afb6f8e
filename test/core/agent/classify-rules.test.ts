/** classifyAgentOutput beyond recognising each error: ordinary text is not a limit, which kind wins, reset times. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type AgentOutputKind,
  classifyAgentOutput,
  withDefaultReset,
} from "../../../src/core/agent/classify.js";

const samples = join(import.meta.dirname, "..", "..", "fixtures", "agent-cli");
const sample = (name: string) => readFileSync(join(samples, name), "utf8");

/** 2025-07-25 20:00 UTC: 13:00 in Los Angeles, 22:00 in Warsaw, 01:30 (Jul 26) in Calcutta. */
const NOW = new Date("2025-07-25T20:00:00Z");
const plus = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;

const line = (event: unknown) => JSON.stringify(event);

// Ordinary text that merely mentions 429, limits, quotas or the errors' names.
const NEGATIVES: [string, string][] = [
  ["a test asserting 429", "expect(res.status).toBe(429);"],
  [
    "a failing test's output",
    [
      " FAIL  test/api.test.ts > rate limits after 100 requests",
      "AssertionError: expected 200 to be 429 // Object.is equality",
      "",
      "- Expected",
      "+ Received",
      "",
      "- 429",
      "+ 200",
      "",
      " ❯ test/api.test.ts:12:24",
      "     11|   expect(res.status).toBe(429);",
    ].join("\n"),
  ],
  ["a commit that adds a rate limiter", "feat: add a rate limiter for the public API"],
  ["closing an issue", "Closes #429"],
  ["a line number", "fix: off-by-one on line 429 of parser.ts"],
  [
    "a diff adding a RateLimitError class",
    [
      "diff --git a/src/errors.ts b/src/errors.ts",
      "--- a/src/errors.ts",
      "+++ b/src/errors.ts",
      "@@ -1,0 +1,4 @@",
      "+export class RateLimitError extends Error {",
      "+  readonly status = 429;",
      '+  constructor(message = "Too Many Requests") { super(message); }',
      "+}",
    ].join("\n"),
  ],
  [
    "a string constant in a test",
    'it("answers 429 Too Many Requests", () => { expect(res.text).toBe("Too Many Requests"); });',
  ],
  ["prose about retries", "We now retry on 429 and 529 (overloaded) responses from the API."],
  [
    "prose naming error types",
    "I added handling for `rate_limit_error`, `overloaded_error` and `insufficient_quota` responses.",
  ],
  ["prose starting with API Error", "API Error handling for 429 responses is implemented."],
  ["a status line in prose", "HTTP 429 Too Many Requests is returned when the limiter trips."],
  ["an app's own log", "WARN rate limit exceeded for client 1.2.3.4, usage limit reached for tenant 7"],
  ["a usage-limit sentence in prose", "The usage limit has been reached once the counter hits 100."],
  ["a module error", "Error: Cannot find module 'rate-limiter'"],
  ["an error that only mentions 429", "Error: 429 Too Many Requests"],
  ["Python code", "try:\n    call()\nexcept openai.RateLimitError:\n    raise RateLimitError('429')"],
  ["a TypeScript diagnostic", "src/x.ts(3,5): error TS2304: Cannot find name 'RateLimitError'."],
  [
    "a quoted error in a fenced block",
    [
      "The API sometimes answers like this:",
      "```",
      'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
      "```",
      "Handled now.",
    ].join("\n"),
  ],
  [
    "diff lines of a fixture",
    '-API Error: Request rejected (429) · slow down\n+API Error: 529 Overloaded. try again\n+{"type":"error","error":{"type":"overloaded_error"}}',
  ],
  ["a quote", "> API Error: 529 Overloaded"],
  ["a bullet", "- You've hit your session limit · resets 3pm (this is the message we detect)"],
  ["an app's JSON log line", '{"level":"error","error":"rate_limit_error","status":429}'],
  ["an unrelated JSON event", '{"type":"progress","message":"exceeded retry limit, last status: 429"}'],
  ["no server", "API Error: Unable to connect to API (ConnectionRefused)"],
  [
    "a failed run whose last words discuss limits",
    line({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      result: "I was adding a rate limiter (it returns 429 and rate_limit_error) when the tool failed.",
    }),
  ],
  [
    "a pretty-printed JSON file",
    JSON.stringify({ name: "app", scripts: { test: "vitest" }, status: 429 }, null, 2),
  ],
  [
    "the agent's own messages and tool results in stream-json",
    [
      line({ type: "system", subtype: "init" }),
      line({
        type: "assistant",
        message: {
          content: [{ type: "text", text: "API Error: 429 rate_limit_error — I will handle this." }],
        },
      }),
      line({
        type: "assistant",
        message: {
          content: [
            {
              type: "tool_use",
              name: "Write",
              input: {
                file_path: "fixture.json",
                content: '{"type":"error","error":{"type":"rate_limit_error"}}',
              },
            },
          ],
        },
      }),
      line({
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              content: "API Error: 529 Overloaded\nYou've hit your session limit · resets 3pm",
            },
          ],
        },
      }),
      line({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "Done. <promise>COMPLETE</promise>",
      }),
    ].join("\n"),
  ],
  [
    "retries that recovered (Claude)",
    [
      line({ type: "system", subtype: "api_retry", attempt: 1, error_status: 429, error: "rate_limit" }),
      line({ type: "system", subtype: "api_retry", attempt: 2, error_status: 529, error: "overloaded" }),
      line({ type: "result", subtype: "success", is_error: false, result: "All done." }),
    ].join("\n"),
  ],
  [
    "retries that recovered (Codex), and the agent talking about limits",
    [
      line({ type: "turn.started" }),
      line({
        type: "error",
        message:
          "Reconnecting... 1/5 (stream error: exceeded retry limit, last status: 429 Too Many Requests)",
      }),
      line({
        type: "item.completed",
        item: { type: "agent_message", text: "You've hit your usage limit is what Codex prints." },
      }),
      line({
        type: "item.completed",
        item: {
          type: "command_execution",
          command: "npm test",
          aggregated_output: "exceeded retry limit, last status: 429",
          exit_code: 1,
        },
      }),
      line({ type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } }),
    ].join("\n"),
  ],
  ["empty output", ""],
];

describe("classifyAgentOutput ignores ordinary text", () => {
  it.each(NEGATIVES)("%s", (_name, text) => {
    expect(classifyAgentOutput(text, NOW)).toEqual({ kind: "none" });
  });
});

describe("classifyAgentOutput precedence: auth > quota > usage_limit > rate_limit > overloaded", () => {
  const retry = (status: number, error: string) =>
    line({ type: "system", subtype: "api_retry", error_status: status, error });
  it.each<[string, string, AgentOutputKind]>([
    [
      "429 retries, then a 401: auth",
      [
        retry(429, "rate_limit"),
        retry(429, "rate_limit"),
        line({
          type: "result",
          is_error: true,
          api_error_status: 401,
          result: "Invalid API key · Fix external API key",
        }),
      ].join("\n"),
      "auth",
    ],
    [
      "a rate limit that is really out of credits: quota",
      "litellm.RateLimitError: OpenAIException - insufficient_quota (429)",
      "quota",
    ],
    [
      "a 429 that is a usage limit: usage_limit",
      "API Error: 429 You've hit your session limit · resets 3pm",
      "usage_limit",
    ],
    [
      "529 retries, then a 429: rate_limit",
      [
        retry(529, "overloaded"),
        line({ type: "result", is_error: true, api_error_status: 429, result: "x" }),
      ].join("\n"),
      "rate_limit",
    ],
    [
      "bad key and no credits: auth",
      "Invalid API key · Please run /login\nCredit balance too low · Add funds",
      "auth",
    ],
    [
      "no credits and a usage limit: quota",
      "Credit balance too low · Add funds\nClaude AI usage limit reached|1753441200",
      "quota",
    ],
  ])("%s", (_name, text, kind) => {
    expect(classifyAgentOutput(text, NOW).kind).toBe(kind);
  });
});

describe("classifyAgentOutput reset times", () => {
  it.each<[string, string]>([
    ["Claude usage limit reached. Your limit will reset at 5pm.", "2025-07-26T17:00:00.000Z"],
    ["ERROR: You've hit your usage limit. Try again in 2h 13m.", plus(2 * HOUR + 13 * MIN)],
    ["API Error: Request rejected (429) · Rate limited. Please try again in 20s", plus(20_000)],
  ])("reads %j", (text, resetAt) => {
    expect(classifyAgentOutput(text, NOW).resetAt?.toISOString()).toBe(resetAt);
  });

  it("returns the latest reset among the winning kind's findings", () => {
    const text =
      "You've hit your session limit · resets 10pm (UTC)\nYou've hit your weekly limit · resets Jul 31, 2am (UTC)";
    expect(classifyAgentOutput(text, NOW).resetAt?.toISOString()).toBe("2025-07-31T02:00:00.000Z");
  });

  it("keeps a time up to an hour ago instead of moving it a day ahead", () => {
    const now = new Date("2025-07-25T10:05:00Z");
    expect(classifyAgentOutput("5-hour limit reached ∙ resets 10am", now).resetAt?.toISOString()).toBe(
      "2025-07-25T10:00:00.000Z",
    );
    expect(classifyAgentOutput("5-hour limit reached ∙ resets 9am", now).resetAt?.toISOString()).toBe(
      "2025-07-26T09:00:00.000Z",
    );
  });

  it("follows daylight-saving changes in the zone", () => {
    const now = new Date("2025-03-09T05:00:00Z"); // midnight in New York, the night clocks go forward
    expect(
      classifyAgentOutput(
        "You've hit your session limit · resets 3am (America/New_York)",
        now,
      ).resetAt?.toISOString(),
    ).toBe("2025-03-09T07:00:00.000Z");
  });

  it("moves a date that has passed this year to next year", () => {
    const now = new Date("2025-12-30T12:00:00Z");
    expect(
      classifyAgentOutput(
        "You've hit your weekly limit · resets Jan 2 at 9am (UTC)",
        now,
      ).resetAt?.toISOString(),
    ).toBe("2026-01-02T09:00:00.000Z");
  });

  it("reads zone-less wall-clock times in the given zone", () => {
    expect(
      classifyAgentOutput("You've hit your usage limit. Try again at 3:28 PM.", NOW, {
        timeZone: "Europe/Berlin",
      }).resetAt?.toISOString(),
    ).toBe("2025-07-26T13:28:00.000Z");
  });

  it("gives no reset time for an unknown zone, and none for relative times without a clock", () => {
    expect(
      classifyAgentOutput("You've hit your session limit · resets 3pm (Mars/Olympus)", NOW),
    ).toMatchObject({ kind: "usage_limit" });
    expect(
      classifyAgentOutput("You've hit your session limit · resets 3pm (Mars/Olympus)", NOW).resetAt,
    ).toBeUndefined();
    expect(
      classifyAgentOutput("ERROR: You've hit your usage limit. Try again in ~90 min.").resetAt,
    ).toBeUndefined();
    expect(classifyAgentOutput("Claude AI usage limit reached|1753441200").resetAt?.toISOString()).toBe(
      "2025-07-25T11:00:00.000Z",
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// Public texts, each with its source (test/fixtures/agent-cli/public-errors.json).

interface PublicCase {
  name: string;
  source: string;
  text: string;
  kind: AgentOutputKind;
  resetAt?: string;
}

const publicErrors = JSON.parse(sample("public-errors.json")) as { now: string; cases: PublicCase[] };

describe("classifyAgentOutput on texts from the CLIs' issue trackers and the providers' documentation", () => {
  const now = new Date(publicErrors.now);

  it("every case names its source", () => {
    for (const c of publicErrors.cases) expect(c.source, c.name).toMatch(/^https:\/\/\S+$/);
    // Every kind is covered, look-alikes included.
    const kinds = new Set(publicErrors.cases.map((c) => c.kind));
    for (const kind of ["auth", "quota", "usage_limit", "rate_limit", "overloaded", "none"])
      expect(kinds).toContain(kind);
  });

  it.each(publicErrors.cases.map((c) => [`${c.name} (${c.source})`, c] as const))("%s", (_title, c) => {
    const found = classifyAgentOutput(c.text, now);
    expect(found.kind).toBe(c.kind);
    if (c.resetAt) expect(found.resetAt?.toISOString()).toBe(c.resetAt);
  });
});

describe("a usage limit without a reset time", () => {
  const bare = "Usage limit reached";

  it("gets the configured default wait, and its evidence says the time was assumed", () => {
    const found = withDefaultReset(classifyAgentOutput(bare, NOW), NOW, 90 * MIN);
    expect(found.kind).toBe("usage_limit");
    expect(found.resetAt?.toISOString()).toBe(plus(90 * MIN));
    expect(found.evidence).toContain("no reset time given: assumed in 90 min (rateLimit.usageLimitWaitMs)");
  });

  it("keeps an announced reset, and leaves other kinds alone", () => {
    const announced = classifyAgentOutput("Claude AI usage limit reached|1753441200", NOW);
    expect(withDefaultReset(announced, NOW, 90 * MIN)).toEqual(announced);
    const rate = classifyAgentOutput("API Error: Rate limit reached", NOW);
    expect(withDefaultReset(rate, NOW, 90 * MIN)).toEqual(rate);
  });
});
