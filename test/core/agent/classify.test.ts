import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentOutputKind, classifyAgentOutput } from "../../../src/core/agent/classify.js";

const samples = join(import.meta.dirname, "..", "..", "fixtures", "agent-cli");
const sample = (name: string) => readFileSync(join(samples, name), "utf8");

/** 2025-07-25 20:00 UTC: 13:00 in Los Angeles, 22:00 in Warsaw, 01:30 (Jul 26) in Calcutta. */
const NOW = new Date("2025-07-25T20:00:00Z");
const plus = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const line = (event: unknown) => JSON.stringify(event);

describe("classifyAgentOutput on what the real CLIs printed", () => {
  it.each<[string, AgentOutputKind]>([
    ["claude-429-retries2.stream.stdout", "rate_limit"],
    ["claude-429-retries2.text.stdout", "rate_limit"],
    ["claude-529-retries2.stream.stdout", "overloaded"],
    ["claude-529-retries2.text.stdout", "overloaded"],
    ["claude-401-retries2.stream.stdout", "auth"],
    ["claude-401-retries2.text.stdout", "auth"],
    ["claude-no-api-key.stdout", "auth"],
    ["claude-no-server.stream-json.stdout", "none"],
    ["claude-no-server.text.stdout", "none"],
    ["claude-max-turns.stdout", "none"],
    ["claude-success.stdout", "none"],
    ["codex-429.stdout", "rate_limit"],
    ["codex-success.stdout", "none"],
    ["gemini-success.stdout", "none"],
    ["gemini-429.stdout", "rate_limit"],
    // Google's "exceeded your current quota" is RESOURCE_EXHAUSTED: a rate limit unless it is per day.
    ["gemini-quota.stdout", "rate_limit"],
    ["gemini-daily.stdout", "usage_limit"],
    ["gemini-401.stdout", "auth"],
    ["opencode-success.stdout", "none"],
    ["opencode-429.stdout", "rate_limit"],
    ["opencode-quota.stdout", "quota"],
    ["opencode-401.stdout", "auth"],
  ])("%s is %s", (file, kind) => {
    expect(classifyAgentOutput(sample(file), NOW).kind).toBe(kind);
  });

  it.each<[string, AgentOutputKind]>([
    ["gemini-success", "none"],
    ["gemini-429", "rate_limit"],
    ["gemini-quota", "rate_limit"],
    ["gemini-daily", "usage_limit"],
    ["gemini-401", "auth"],
  ])("Gemini CLI's %s stdout and stderr together are %s", (name, kind) => {
    const both = `${sample(`${name}.stdout`)}\n${sample(`${name}.stderr`)}`;
    expect(classifyAgentOutput(both, NOW).kind).toBe(kind);
  });

  it("names the final error as evidence", () => {
    expect(classifyAgentOutput(sample("claude-401-retries2.stream.stdout"), NOW).evidence).toBe(
      "Invalid API key · Fix external API key",
    );
    expect(classifyAgentOutput(sample("codex-429.stdout"), NOW).evidence).toContain(
      "exceeded retry limit, last status: 429 Too Many Requests",
    );
  });

  it("reads stdout and stderr run together", () => {
    const both = `${sample("claude-success.stdout")}\n${sample("claude-529-retries2.text.stdout")}`;
    expect(classifyAgentOutput(both, NOW).kind).toBe("overloaded");
  });
});

// What the tools print according to their public issue trackers, and raw API error bodies.
const POSITIVES: [string, string, AgentOutputKind, string?][] = [
  // --- Claude Code
  [
    "Claude -p usage limit with epoch",
    "Claude AI usage limit reached|1753441200",
    "usage_limit",
    "2025-07-25T11:00:00.000Z",
  ],
  [
    "Claude stream-json result with the epoch",
    line({
      type: "result",
      subtype: "success",
      is_error: true,
      result: "Claude AI usage limit reached|1755806400",
      total_cost_usd: 0,
    }),
    "usage_limit",
    new Date(1755806400 * 1000).toISOString(),
  ],
  [
    "session limit, zone given",
    "You've hit your session limit · resets 3:30am (Asia/Calcutta)",
    "usage_limit",
    "2025-07-25T22:00:00.000Z",
  ],
  [
    "older wording",
    "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
    "usage_limit",
    "2025-07-26T15:00:00.000Z",
  ],
  [
    "5-hour limit, no zone (UTC)",
    "5-hour limit reached ∙ resets 2am",
    "usage_limit",
    "2025-07-26T02:00:00.000Z",
  ],
  [
    "weekly limit with upgrade hint",
    "  ⎿  Weekly limit reached · resets 10am (Asia/Seoul) · /upgrade to Max or turn on /extra-usage",
    "usage_limit",
    "2025-07-26T01:00:00.000Z",
  ],
  [
    "weekly limit with a date",
    "You've hit your weekly limit · resets Jul 31, 2am (UTC)",
    "usage_limit",
    "2025-07-31T02:00:00.000Z",
  ],
  [
    "weekly limit with 'at'",
    "You've hit your weekly limit · resets Sep 15 at 7pm",
    "usage_limit",
    "2025-09-15T19:00:00.000Z",
  ],
  [
    "weekly limit, date and zone",
    "You've hit your weekly limit · resets Jul 27 at 4:30am (Asia/Calcutta)",
    "usage_limit",
    "2025-07-26T23:00:00.000Z",
  ],
  [
    "plain limit, DST zone",
    "You've hit your limit · resets 11pm (America/Anchorage)",
    "usage_limit",
    "2025-07-26T07:00:00.000Z",
  ],
  [
    "limit that already passed today",
    "API Error: You've hit your session limit · resets 1:30pm",
    "usage_limit",
    "2025-07-26T13:30:00.000Z",
  ],
  [
    "teammate output with a glyph and a hint line",
    "  ⎿  You've hit your session limit · resets 5:20am (America/Denver)\n     /usage-credits to finish what you’re working on.",
    "usage_limit",
    "2025-07-26T11:20:00.000Z",
  ],
  [
    "curly apostrophe",
    "You’ve hit your limit for Claude messages. Limits will reset at 9:30 AM.",
    "usage_limit",
    "2025-07-26T09:30:00.000Z",
  ],
  [
    "429 body from an old Claude Code",
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."},"request_id":"req_011CSHCYzBstm5tDEsXB7mev"}',
    "rate_limit",
  ],
  [
    "server-side throttling",
    "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
    "rate_limit",
  ],
  [
    "529 while retrying",
    'API Error (529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":null}) · Retrying in 4 seconds… (attempt 4/10)',
    "overloaded",
  ],
  ["repeated 529", "  ⎿  API Error: Repeated 529 Overloaded errors", "overloaded"],
  [
    "529 body",
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded. https://docs.claude.com/en/api/errors"},"request_id":"req_011CZTEFvft13DajMTp9pp64"}',
    "overloaded",
  ],
  [
    "500 body",
    'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
    "overloaded",
  ],
  [
    "expired OAuth token",
    'Failed to authenticate. API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."},"request_id":"req_011CYn6NGKAUEBEW5LYfdv5M"}',
    "auth",
  ],
  [
    "expired OAuth token with /login hint",
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."}} · Please run /login',
    "auth",
  ],
  ["invalid key", "Invalid API key · Please run /login", "auth"],
  [
    "no credits (text)",
    "Credit balance too low · Add funds: https://console.anthropic.com/settings/billing",
    "quota",
  ],
  [
    "no credits (error log)",
    'Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}',
    "quota",
  ],
  [
    "rejected rate_limit_event then the synthetic message",
    [
      line({ type: "system", subtype: "init", session_id: "s" }),
      line({
        type: "rate_limit_event",
        rate_limit_info: { status: "rejected", resetsAt: 1753480800, rateLimitType: "five_hour" },
      }),
      line({
        type: "assistant",
        message: {
          model: "<synthetic>",
          content: [{ type: "text", text: "You've hit your session limit · resets 10pm (UTC)" }],
        },
        error: "rate_limit",
      }),
      line({
        type: "result",
        subtype: "success",
        is_error: true,
        api_error_status: 429,
        result: "You've hit your session limit · resets 10pm (UTC)",
      }),
    ].join("\n"),
    "usage_limit",
    "2025-07-25T22:00:00.000Z",
  ],
  [
    "429 that says usage limit",
    line({
      type: "result",
      is_error: true,
      api_error_status: 429,
      result: "API Error: Request rejected (429) · The usage limit has been reached",
    }),
    "usage_limit",
  ],
  [
    "result with only a status",
    line({ type: "result", is_error: true, api_error_status: "429", result: "x" }),
    "rate_limit",
  ],
  // --- Codex
  [
    "usage limit in turn.failed, absolute time",
    line({
      type: "turn.failed",
      error: {
        message:
          "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Apr 28th, 2026 10:03 PM.",
      },
    }),
    "usage_limit",
    "2026-04-28T22:03:00.000Z",
  ],
  [
    "usage limit in the TUI, relative time",
    "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 6 hours 37 minutes.",
    "usage_limit",
    plus(4 * DAY + 6 * HOUR + 37 * MIN),
  ],
  [
    "usage limit, about 90 minutes",
    "ERROR: You've hit your usage limit. Try again in ~90 min.",
    "usage_limit",
    plus(90 * MIN),
  ],
  [
    "usage limit for a workspace",
    "You've hit your usage limit. To get more access now, send a request to your admin or try again in 3 days 6 hours 57 minutes.",
    "usage_limit",
    plus(3 * DAY + 6 * HOUR + 57 * MIN),
  ],
  [
    "usage limit at a time of day",
    "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM.",
    "usage_limit",
    "2025-07-26T15:28:00.000Z",
  ],
  ["text mode 429", "ERROR: exceeded retry limit, last status: 429 Too Many Requests", "rate_limit"],
  [
    "text mode 401",
    "exceeded retry limit, last status: 401 Unauthorized, request id: 99438b5929d256ae-OSL",
    "auth",
  ],
  [
    "insufficient quota",
    "⚠ Insufficient quota: You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "quota",
  ],
  ["quota exceeded", "Quota exceeded. Check your plan and billing details.", "quota"],
  [
    "quota in a stream error",
    "✖ stream error: stream disconnected before completion: You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.; retrying 1/5 in 210ms…",
    "quota",
  ],
  [
    "unexpected 401",
    line({
      type: "turn.failed",
      error: {
        message: "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header",
      },
    }),
    "auth",
  ],
  [
    "refresh token reused",
    "■ Your access token could not be refreshed because your refresh token was already used. Please log out and sign in again.",
    "auth",
  ],
  [
    "usage_limit_reached body",
    '{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"free","resets_at":1775317531,"resets_in_seconds":602705}}',
    "usage_limit",
    new Date(1775317531 * 1000).toISOString(),
  ],
  // --- Gemini CLI
  [
    "429 as one line",
    '✕ [API Error: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n    \\"message\\": \\"Resource has been exhausted (e.g. check quota).\\",\\n    \\"status\\": \\"RESOURCE_EXHAUSTED\\"\\n  }\\n}\\n","code":429,"status":"Too Many Requests"}}]\n  Please wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method',
    "rate_limit",
  ],
  [
    "429 pretty-printed",
    [
      "✕ [API Error: [{",
      '    "error": {',
      '      "code": 429,',
      '      "message": "Resource has been exhausted (e.g. check quota).",',
      '      "errors": [',
      "        {",
      '          "message": "Resource has been exhausted (e.g. check quota).",',
      '          "domain": "global",',
      '          "reason": "rateLimitExceeded"',
      "        }",
      "      ],",
      '      "status": "RESOURCE_EXHAUSTED"',
      "    }",
      "  }",
      "  ]]",
    ].join("\n"),
    "rate_limit",
  ],
  [
    "free tier per-day quota (resets at midnight Pacific)",
    '✕ [API Error: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n    \\"message\\": \\"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\\",\\n    \\"status\\": \\"RESOURCE_EXHAUSTED\\",\\n    \\"details\\": [\\n      {\\n        \\"@type\\": \\"type.googleapis.com/google.rpc.QuotaFailure\\",\\n        \\"violations\\": [\\n          {\\n            \\"quotaMetric\\": \\"generativelanguage.googleapis.com/generate_content_free_tier_requests\\",\\n            \\"quotaId\\": \\"GenerateRequestsPerDayPerProjectPerModel-FreeTier\\"\\n          }\\n        ]\\n      }\\n    ]\\n  }\\n}\\n","code":429,"status":"Too Many Requests"}}]',
    "usage_limit",
    "2025-07-26T07:00:00.000Z",
  ],
  [
    "per-minute quota with a retry delay",
    'Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000, model: gemini-2.5-flash Please retry in 39.844676573s.","status":"RESOURCE_EXHAUSTED"}}',
    "rate_limit",
    plus(39_844.676573),
  ],
  ["daily quota", "✕ [API Error: You have exhausted your daily quota on this model.]", "usage_limit"],
  [
    "capacity",
    "You have exhausted your capacity on this model. Your quota will reset after 53s.",
    "rate_limit",
    plus(53_000),
  ],
  ["daily model quota", "⚡ You have reached your daily gemini-2.5-pro quota limit.", "usage_limit"],
  ["usage limit for a model", "Usage limit reached for gemini-3-flash-preview.", "usage_limit"],
  [
    "no auth configured",
    "Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA",
    "auth",
  ],
  [
    "503",
    '✕ [API Error: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]',
    "overloaded",
  ],
  // --- Aider (LiteLLM)
  [
    "Anthropic rate limit",
    'litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"Number of tokens has exceeded your per-minute rate limit"}}\nThe API provider has rate limited you. Try again later or check your quotas.\nRetrying in 0.2 seconds...',
    "rate_limit",
  ],
  [
    "Groq rate limit with a delay",
    'litellm.RateLimitError: RateLimitError: GroqException - b\'{"error":{"message":"Rate limit reached for model `gemma2-9b-it` in organization `org` service tier `on_demand` on tokens per minute (TPM): Limit 15000, Used 11972, Requested 4351. Please try again in 5.289s.","type":"tokens","code":"rate_limit_exceeded"}}\\n\'',
    "rate_limit",
    plus(5_289),
  ],
  [
    "bad Anthropic key",
    'Unexpected error: litellm.AuthenticationError: AnthropicException - b\'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}\'',
    "auth",
  ],
  [
    "no OpenRouter credentials",
    'litellm.AuthenticationError: AuthenticationError: OpenrouterException - {"error":{"message":"No auth credentials found","code":401}}\nThe API provider is not able to authenticate you. Check your API key.',
    "auth",
  ],
  [
    "bad Gemini key",
    'litellm.AuthenticationError: vertex_ai_betaException - b\'{\\n  "error": {\\n    "code": 400,\\n    "message": "API key not valid. Please pass a valid API key.",\\n    "status": "INVALID_ARGUMENT"\\n  }\\n}\\n\'\nThe API provider is not able to authenticate you. Check your API key.',
    "auth",
  ],
  [
    "overloaded",
    "litellm.InternalServerError: AnthropicException - Overloaded. Handle with `litellm.InternalServerError`.\nThe API provider's servers are down or overloaded.",
    "overloaded",
  ],
  [
    "OpenAI out of credits, reported as a rate limit",
    "litellm.RateLimitError: RateLimitError: OpenAIException - Error code: 429 - {'error': {'message': 'You exceeded your current quota, please check your plan and billing details.', 'type': 'insufficient_quota', 'param': None, 'code': 'insufficient_quota'}}",
    "quota",
  ],
  // --- Raw API errors and SDK exceptions
  [
    "Anthropic 429 body",
    '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
    "rate_limit",
  ],
  [
    "Anthropic 529 body",
    '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "overloaded",
  ],
  [
    "Anthropic 401 body",
    '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "auth",
  ],
  [
    "OpenAI insufficient_quota body",
    '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}',
    "quota",
  ],
  [
    "OpenAI rate limit body",
    '{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.5s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}',
    "rate_limit",
    plus(2_500),
  ],
  [
    "OpenAI rate limit in minutes",
    '{"error":{"message":"Rate limit reached for o1 on requests per day (RPD). Please try again in 6m0s.","code":"rate_limit_exceeded"}}',
    "rate_limit",
    plus(6 * MIN),
  ],
  [
    "OpenAI bad key body",
    '{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}',
    "auth",
  ],
  [
    "Google body, pretty-printed",
    [
      "{",
      '  "error": {',
      '    "code": 429,',
      "    \"message\": \"Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:1'.\",",
      '    "status": "RESOURCE_EXHAUSTED"',
      "  }",
      "}",
    ].join("\n"),
    "rate_limit",
  ],
  [
    "Python SDK rate limit",
    "anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error', 'message': 'Number of request tokens has exceeded your per-minute rate limit'}}",
    "rate_limit",
  ],
  [
    "Python SDK bad key",
    "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided: sk-abc', 'type': 'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}",
    "auth",
  ],
  [
    "Node SDK rate limit",
    'RateLimitError: 429 {"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}',
    "rate_limit",
  ],
  [
    "Cline-style status and body",
    '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
    "rate_limit",
  ],
  [
    "Gemini CLI --output-format json",
    JSON.stringify(
      {
        response: null,
        error: {
          type: "FatalAuthenticationError",
          message: "API key not valid. Please pass a valid API key.",
          code: 41,
        },
      },
      null,
      2,
    ),
    "auth",
  ],
  ["coloured terminal output", "\u001b[31mAPI Error: 529 Overloaded\u001b[0m", "overloaded"],
  [
    "timestamped log line",
    "[2025-07-25T19:59:00Z] ERROR: exceeded retry limit, last status: 503 Service Unavailable",
    "overloaded",
  ],
];

describe("classifyAgentOutput on the tools' documented errors", () => {
  it.each(POSITIVES)("%s", (_name, text, kind, resetAt) => {
    const result = classifyAgentOutput(text, NOW);
    expect(result.kind).toBe(kind);
    expect(result.resetAt?.toISOString()).toBe(resetAt);
  });
});
