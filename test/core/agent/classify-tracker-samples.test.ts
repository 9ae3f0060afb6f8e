/**
 * classifyAgentOutput on messages users pasted into the agent CLIs' issue trackers and on providers' documented
 * errors, each with where it was found. Two families: usage limits whose reset is a wall-clock time with a
 * time-zone name, and the limits and billing errors of OpenAI-compatible APIs (insufficient_quota, 402s, 429
 * bodies). The samples are as posted (ids and URLs included); only trailing text of the post is left out.
 */
import { describe, expect, it } from "vitest";
import { type AgentOutputKind, classifyAgentOutput } from "../../../src/core/agent/classify.js";

/** 2026-06-13 15:00 UTC, a Saturday: 11:00 in New York, 08:00 in Los Angeles, 17:00 in Berlin, 00:00 (Jun 14) in Tokyo. */
const NOW = new Date("2026-06-13T15:00:00Z");
const DAY = 86_400_000;

/** [source, message, kind, reset time (ISO) or undefined]. */
type Sample = [string, string, AgentOutputKind, string | undefined];

const CLOCK_TIME_WITH_ZONE: Sample[] = [
  [
    "https://github.com/anthropics/claude-code/issues/23772",
    "You've hit your limit · resets 3pm (America/New_York)",
    "usage_limit",
    "2026-06-13T19:00:00.000Z",
  ],
  [
    // The zone is a POSIX-style Etc name: Etc/GMT+5 is five hours BEHIND UTC.
    "https://github.com/anthropics/claude-code/issues/2087",
    "Claude usage limit reached. Your limit will reset at 1pm (Etc/GMT+5).",
    "usage_limit",
    "2026-06-13T18:00:00.000Z",
  ],
  [
    "https://github.com/anthropics/claude-code/issues/74079",
    "You've hit your session limit · resets 12:50am (America/Los_Angeles)",
    "usage_limit",
    "2026-06-14T07:50:00.000Z",
  ],
  [
    // Already past midnight in Tokyo: 8:30pm is later the same (Tokyo) day.
    "https://github.com/anthropics/claude-code/issues/77082",
    "You've hit your session limit · resets 8:30pm (Asia/Tokyo)",
    "usage_limit",
    "2026-06-14T11:30:00.000Z",
  ],
  [
    "https://github.com/anthropics/claude-code/issues/79136",
    "You've hit your session limit · resets 10:30pm (Europe/Berlin)\n/login to switch to an API usage-billed account.",
    "usage_limit",
    "2026-06-13T20:30:00.000Z",
  ],
  [
    "https://github.com/anthropics/claude-code/issues/85572",
    "You've hit your session limit · resets 3pm (America/Bogota)",
    "usage_limit",
    "2026-06-13T20:00:00.000Z",
  ],
  [
    // 21:00 in Dhaka now: 1:30am is tomorrow there.
    "https://github.com/anthropics/claude-code/issues/54698",
    "You've hit your limit · resets 1:30am (Asia/Dhaka)",
    "usage_limit",
    "2026-06-13T19:30:00.000Z",
  ],
  [
    // Codex names a date and a clock time without a zone: read in UTC (the runners' zone).
    "https://github.com/openai/codex/issues/26668",
    "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Jul 5th, 2026 8:19 PM.",
    "usage_limit",
    "2026-07-05T20:19:00.000Z",
  ],
];

/**
 * Claude Code's notice that names no window ("Limit reached", not "5-hour limit reached" or "You've hit your
 * limit"), as it is printed today and as other tools that wrap Claude Code match it; on NOW (Saturday), a weekday
 * means its next occurrence.
 */
const NO_WINDOW_NAMED: Sample[] = [
  [
    "Claude Code, as reported in this project's issue on limits",
    "Limit reached · resets 11:30am (Asia/Calcutta)",
    "usage_limit",
    "2026-06-14T06:00:00.000Z",
  ],
  [
    "Claude Code, a date and 'at' (as wrappers of Claude Code document it)",
    "⎿  Limit reached · resets Dec 17 at 6am (Europe/Oslo)\n     /upgrade to increase your usage limit.",
    "usage_limit",
    "2026-12-17T05:00:00.000Z",
  ],
  [
    "Claude Code, a weekday",
    "Limit reached • resets Wednesday 6:50pm",
    "usage_limit",
    "2026-06-17T18:50:00.000Z",
  ],
  [
    "Claude Code, today's weekday with the time past: a week on",
    "Limit reached · resets Sat 9am (Europe/Berlin)",
    "usage_limit",
    "2026-06-20T07:00:00.000Z",
  ],
  ["Claude Code, a duration", "Limit reached · resets in 1d 2h", "usage_limit", "2026-06-14T17:00:00.000Z"],
];

const OPENAI_COMPATIBLE: Sample[] = [
  [
    // OpenAI's documented billing codes under insufficient_quota (Microsoft Dev Proxy's page on them:
    // https://learn.microsoft.com/microsoft-cloud/dev/dev-proxy/concepts/openai-insufficient-quota).
    "https://dev.to/sublynow/your-openai-api-429-is-not-always-a-rate-limit-reading-insufficientquota-by-errorcode-1mbl",
    '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"project_spend_limit_exceeded"}}',
    "quota",
    undefined,
  ],
  [
    // The OpenAI Node SDK's message, `${status} ${message}`, for a tokens-per-minute limit.
    "https://github.com/BuilderIO/micro-agent/issues/86",
    "429 Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms.",
    "rate_limit",
    "2026-06-13T15:00:00.644Z",
  ],
  [
    // DeepSeek's 402 through an OpenAI-compatible client.
    "https://github.com/continuedev/continue/issues/9942",
    "402 Insufficient Balance",
    "quota",
    undefined,
  ],
  [
    // OpenRouter's 402 through the OpenAI Python SDK.
    "https://github.com/open-assistant-org/open-assistant/issues/80",
    "APIStatusError: Error code: 402 - {'error': {'message': 'Insufficient credits. Add more using https://openrouter.ai/settings/credits', 'code': 402, 'metadata': {'limit_source': 'openrouter_credits', 'remedy_hint': 'Add credits at https://openrouter.ai/settings/credits, or lower max_tokens / prompt size to fit your remaining balance.'}}}",
    "quota",
    undefined,
  ],
  [
    // A Claude Code fork on an OpenAI-compatible provider (OpenRouter).
    "https://github.com/Gitlawb/openclaude/issues/43",
    '  ⎿  API Error: OpenAI API error 402: {"error":{"message":"Insufficient credits. This account never purchased credits. Make sure your key is on the correct account or org, and if so, purchase more at \n     https://openrouter.ai/settings/credits","code":402}}',
    "quota",
    undefined,
  ],
  [
    "https://github.com/Gitlawb/openclaude/issues/1528",
    'API Error: 402 {"error":{"message":"Insufficient credits — top up your balance at https://gitlawb.com/opengateway/credits","type":"insufficient_quota","code":"insufficient_credits"}}',
    "quota",
    undefined,
  ],
  [
    // Qwen Code (a Gemini CLI fork) on OpenRouter.
    "https://github.com/QwenLM/qwen-code/issues/73",
    "✖ OpenAI API Streaming Error: 402 This request requires more credits, or fewer max_tokens. You requested up to 225702 tokens, but can only afford 92985. To increase, visit https://openrouter.ai/settings/credits and add more credits",
    "quota",
    undefined,
  ],
  [
    // OpenCode Go (an OpenAI-compatible gateway): the status, then the raw body.
    "https://github.com/anomalyco/opencode/issues/34898",
    'HTTP 429 {"error":{"message":"Error from provider (Console Go): Provider rate limit exceeded","type":"rate_limit_error","param":null,"code":"provider_rate_limit_exceeded"}}',
    "rate_limit",
    undefined,
  ],
  [
    // OpenCode's retry status on GitHub Copilot's quota: it lifts at the end of its window.
    "https://github.com/anomalyco/opencode/issues/17682",
    "Too Many Requests: quota exceeded [retrying in ~2 weeks attempt #1]",
    "usage_limit",
    new Date(NOW.getTime() + 14 * DAY).toISOString(),
  ],
  [
    // Gemini CLI on Gemini Code Assist: a per-user allowance (an administrator can allow overages).
    "https://github.com/google-gemini/gemini-cli/issues/27761",
    "Error: Cloud Code Assist API error (429): Individual quota reached. Contact your administrator to enable overages",
    "usage_limit",
    undefined,
  ],
];

describe("classifyAgentOutput on reset times given as a clock time with a time-zone name", () => {
  it.each(CLOCK_TIME_WITH_ZONE)("%s", (_source, text, kind, resetAt) => {
    const found = classifyAgentOutput(text, NOW);
    expect(found.kind).toBe(kind);
    expect(found.resetAt?.toISOString()).toBe(resetAt);
  });
});

describe("classifyAgentOutput on Claude Code's limit notice that names no window", () => {
  it.each(NO_WINDOW_NAMED)("%s", (_source, text, kind, resetAt) => {
    const result = classifyAgentOutput(text, NOW);
    expect(result.kind).toBe(kind);
    expect(result.resetAt?.toISOString()).toBe(resetAt);
  });
});

describe("classifyAgentOutput on the limits and billing errors of OpenAI-compatible APIs", () => {
  it.each(OPENAI_COMPATIBLE)("%s", (_source, text, kind, resetAt) => {
    const found = classifyAgentOutput(text, NOW);
    expect(found.kind).toBe(kind);
    expect(found.resetAt?.toISOString()).toBe(resetAt);
  });

  it.each([
    ["prose about the status", "The OpenAI API error 402 means the account has no credits left."],
    ["prose naming the error with its status", "The OpenAI API error (429): what it means and how to fix it"],
    ["a changelog line", "- handle 402 Insufficient Balance from DeepSeek"],
    ["a test name", "  ✓ returns HTTP 429 when the limiter trips"],
    ["a status without a body", "HTTP 429 is returned when over the limit"],
    ["a bullet quoting OpenCode", "- Too Many Requests: quota exceeded [retrying in 2s attempt #1]"],
  ])("ordinary text is not a limit: %s", (_name, text) => {
    expect(classifyAgentOutput(text, NOW).kind).toBe("none");
  });
});
