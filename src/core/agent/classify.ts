/**
 * Classifies what an agent CLI printed when a run failed: rate limit, usage limit (with the time it
 * resets), overloaded service, exhausted quota or credits, failed authentication — or none of those.
 *
 * The hard part is not firing on ordinary text. Agents print their whole work: test output that asserts
 * a 429, diffs that add a `RateLimitError` class, commit messages about rate limiters, tool results that
 * quote error fixtures. So nothing here matches a bare "429" or "rate limit". Every rule is anchored on
 * the shape a real tool prints:
 *
 * - **Structured events** (one JSON object per line). Claude Code stream-json: `system/api_retry`
 *   (`error_status`, `error`), `rate_limit_event` with `status: "rejected"`, synthetic `assistant`
 *   messages that carry an `error` field, and the `result` event when `is_error` is true (its
 *   `api_error_status`, and error lines of its `result` text anchored as in plain text below, since that
 *   text can be the agent's own last words). Codex `exec --json`: `turn.failed`, `error` events and error
 *   items. Gemini CLI's `--output-format json` document.
 *   Raw API error bodies (`{"type":"error","error":{…}}`, `{"error":{…}}`). Every other event — the
 *   agent's own text, tool calls, tool results — is ignored, whatever it contains. When the stream ends
 *   in success (a Claude `result` with `is_error: false`, a Codex `turn.completed` after the last
 *   `turn.failed`), the retries before it were recovered and count for nothing.
 * - **Plain text** (text-mode output, stderr, Aider, Gemini CLI): only an error block that starts a line
 *   counts — `API Error…`, `[API Error: …` (Gemini), `Error: 429 {…` (SDK), `ERROR: exceeded retry
 *   limit…` (Codex), `litellm.RateLimitError: …Exception` (Aider), `openai.RateLimitError: Error code:…`,
 *   `Attempt 2 failed with status 429` (Gemini), `Cloud Code Assist API error (429):` (Gemini Code Assist),
 *   the OpenAI SDKs' `429 Rate limit reached for…` / `402 Insufficient Balance` (OpenAI-compatible APIs, with or
 *   without `Error: `), `OpenAI API error 402: {…` and `OpenAI API Streaming Error: 402` (clients of those APIs),
 *   `HTTP 429 {…`, OpenCode's `Too Many Requests: … [retrying in …`, a raw JSON error body, or one of the tools'
 *   own sentences (`Invalid API key · …`, `Not logged in · Please run /login`, `Claude AI usage limit reached|…`,
 *   `You've hit your session limit · resets …`, `The API provider has rate limited you.`, …). Fenced code
 *   blocks are skipped, and a line that starts with a diff marker, a quote or a list bullet is not a start.
 *   The block (the line, plus following lines while brackets are open or lines are indented) is then
 *   classified by the error vocabulary of the APIs (`rate_limit_error`, `insufficient_quota`,
 *   `RESOURCE_EXHAUSTED`, `overloaded_error`, `authentication_error`, status codes, …).
 *
 * **Precedence** when several kinds are found: auth > quota > usage_limit > rate_limit > overloaded.
 * Auth and quota come first because no waiting fixes them — a person must fix the key or add credits —
 * and they are often reported alongside the retries that preceded them (401 after a few 429s). Quota
 * beats usage_limit: a reset time is no use when the credits are gone. Usage limit beats rate limit
 * because the same HTTP 429 / `rate_limit_error` carries both; the more specific message (a plan window
 * that resets in hours) must win, or the worker would sit on a runner retrying every few seconds. Rate
 * limit beats overloaded: both are transient, but a rate limit is about this account (the fallback agent
 * helps), overload about the service.
 *
 * **Reset time** (`resetAt`): the epoch in `Claude AI usage limit reached|1753441200`, `resetsAt` /
 * `resets_at` / `resets_in_seconds` / `retryDelay` in JSON; relative to `now`: "try again in 2h 13m",
 * "Please try again in 20s", "retry in 39.8s", "reset after 53s", "try again in 4 days 6 hours 37 minutes", "[retrying in ~2 weeks";
 * wall clock, as the next occurrence after `now`: "resets 3:30am (Asia/Calcutta)", "reset at 5pm
 * (Europe/Warsaw)", "resets Jul 31, 2am (UTC)", "try again at Apr 28th, 2026 10:03 PM". A wall-clock time
 * without a zone is read in `options.timeZone` (default UTC: what GitHub-hosted runners use). A time up to
 * an hour in the past is kept as is (the limit has just lifted, or the message rounded down) rather than
 * moved a day ahead. Gemini's per-day quota resets at midnight Pacific time, as Google documents. When
 * several reset times are found for the winning kind, the latest is returned. Without `now` (core code
 * never reads the clock) only absolute times are returned.
 */
import { errorBlocks } from "./error-blocks.js";
import { epochToDate, GOOGLE, parseResetTime } from "./reset-time.js";

export type AgentOutputKind = "rate_limit" | "usage_limit" | "overloaded" | "quota" | "auth" | "none";

interface AgentOutputClass {
  kind: AgentOutputKind;
  /** When the limit lifts, if the output says. */
  resetAt?: Date;
  /** The line or event that decided the kind (at most 300 characters), for logs and messages. */
  evidence?: string;
}

interface ClassifyOptions {
  /** IANA zone for wall-clock reset times printed without one (default "UTC"). */
  timeZone?: string;
}

type Kind = Exclude<AgentOutputKind, "none">;

/** Strongest first; see the file comment for why. */
const AGENT_OUTPUT_PRECEDENCE: readonly Kind[] = ["auth", "quota", "usage_limit", "rate_limit", "overloaded"];

interface Finding {
  kind: Kind;
  resetAt?: Date;
  evidence: string;
}

interface Context {
  now: Date | undefined;
  timeZone: string;
}

// ---------------------------------------------------------------------------------------------------------
// Error vocabulary: applied only to text already known to be an error (a structured error field, or an
// anchored error block), so these may be looser than the anchors.

/** A JSON key/value pair, also when the JSON is nested in a string and its quotes are escaped. */
function jsonPair(key: string, value: string): RegExp {
  return new RegExp(`\\\\*"${key}\\\\*"\\s*:\\s*\\\\*"${value}\\\\*"`);
}

interface Rule {
  kind: Kind;
  re: RegExp;
  /** The rule does not apply when this also matches the block. */
  unless?: RegExp;
  /** The rule applies only when this also matches the block. */
  when?: RegExp;
}

const RULES: readonly Rule[] = [
  // auth
  { kind: "auth", re: jsonPair("type", "(?:authentication_error|permission_error)") },
  { kind: "auth", re: /\bauthentication_(?:error|failed)\b/ },
  { kind: "auth", re: /\bInvalid API key\b/i },
  { kind: "auth", re: /\binvalid x-api-key\b/i },
  { kind: "auth", re: /\bIncorrect API key provided\b/ },
  { kind: "auth", re: /\bAPI key not valid\b|\bAPI_KEY_INVALID\b/ },
  { kind: "auth", re: jsonPair("code", "invalid_api_key") },
  { kind: "auth", re: jsonPair("status", "(?:UNAUTHENTICATED|PERMISSION_DENIED)") },
  { kind: "auth", re: /\bNot logged in\s*·|Please run \/login\b/ },
  { kind: "auth", re: /\bOAuth token (?:has expired|revoked|is invalid)/i },
  {
    kind: "auth",
    re: /\bYour access token could not be refreshed\b|\bFailed to refresh token\b|\bToken refresh failed\b/,
  },
  { kind: "auth", re: /\bPlease set an Auth method\b|\bmust specify the GEMINI_API_KEY\b/ },
  {
    kind: "auth",
    re: /(?:Authentication|PermissionDenied)Error\b|\bThe API provider is not able to authenticate you\b/,
  },
  {
    kind: "auth",
    re: /\blast status: 40[13]\b|\b401 Unauthorized\b|\bAPI Error:?\s*\(?40[13]\b|\bError: 40[13] \{/,
  },
  // quota: credits or billing, a person has to act
  {
    kind: "quota",
    re: /\binsufficient_quota\b|\bbilling_error\b|\bbilling_not_active\b|\bbilling_hard_limit_reached\b/,
  },
  { kind: "quota", re: /\bcredit balance (?:is )?too low\b/i },
  { kind: "quota", re: /\bexceeded your current quota\b/i, unless: GOOGLE },
  { kind: "quota", re: /\bQuota exceeded\. Check your plan and billing\b|\bInsufficient quota\b/i },
  // OpenAI's billing codes under `insufficient_quota`; DeepSeek's and OpenRouter's 402s (no credit left)
  {
    kind: "quota",
    re: /\b(?:credit_balance_exhausted|organization_spend_limit_exceeded|project_spend_limit_exceeded|organization_usage_limit_exceeded|insufficient_credits)\b/,
  },
  { kind: "quota", re: /\bInsufficient (?:Balance|credits)\b|\brequires more credits\b/i },
  { kind: "quota", re: /\bError code: 402\b|\berror 402\b|^\W*402 [{A-Z]|\bError: 402 /im },
  // usage limit: a plan window, lifts at a known time
  { kind: "usage_limit", re: /\bClaude (?:AI )?usage limit reached\b/i },
  { kind: "usage_limit", re: /\busage limit (?:has been )?reached\b/i },
  { kind: "usage_limit", re: /\bYou(?:'|’)ve hit your (?:[\w-]+ )?limit\b/i },
  { kind: "usage_limit", re: /\b(?:5-hour|five-hour|weekly|daily|session|monthly)\s+limit reached\b/i },
  // Claude Code's current notice names no window: "Limit reached · resets 11:30am (Asia/Calcutta)"
  { kind: "usage_limit", re: /\blimit reached[ \t]*[∙·•\-–][ \t]*resets?\b/i },
  { kind: "usage_limit", re: /\busage_limit_(?:reached|exceeded)\b/ },
  // Gemini Code Assist's per-user allowance (an administrator can allow overages)
  { kind: "usage_limit", re: /\bIndividual quota reached\b/ },
  // GitHub Copilot through OpenCode: a quota that lifts at the end of its window ("retrying in ~2 weeks")
  { kind: "usage_limit", re: /\bquota exceeded\b/i, when: /\bretrying in\b/i },
  { kind: "usage_limit", re: /\bexhausted your daily quota\b|\breached your daily\b.{0,60}\bquota\b/i },
  { kind: "usage_limit", re: /PerDay|\bper day\b/i, when: /RESOURCE_EXHAUSTED|Quota exceeded for/i },
  // rate limit: back off for seconds or minutes
  {
    kind: "rate_limit",
    re: /\brate_limit_(?:error|exceeded)\b|\bRATE_LIMIT_EXCEEDED\b|\brateLimitExceeded\b/,
  },
  { kind: "rate_limit", re: /\bRate limit reached for\b|\brate[ -]limit(?:ed|ing)?\b/i },
  { kind: "rate_limit", re: /\blast status: 429\b|\bRequest rejected \(429\)|\bToo Many Requests\b/i },
  { kind: "rate_limit", re: /(?:error|status|code)\W{0,4}429\b|\bAPI Error:?\s*\(?429\b|^\W*429 \{/im },
  {
    kind: "rate_limit",
    re: /\bRESOURCE_EXHAUSTED\b|\bResource (?:has been )?exhausted\b|\bQuota exceeded for (?:quota )?metric\b/i,
  },
  {
    kind: "rate_limit",
    re: /\bRateLimitError\b|\btemporarily limiting requests\b|\bexhausted your capacity on this model\b/i,
  },
  // Google answers a per-minute limit with the words OpenAI uses for credits (RESOURCE_EXHAUSTED either way)
  { kind: "rate_limit", re: /\bexceeded your current quota\b/i, when: GOOGLE },
  // Amazon Bedrock (and Claude Code on Bedrock): throttling is a rate limit
  {
    kind: "rate_limit",
    re: /\bThrottlingException\b|\bToo many (?:tokens|requests), please wait\b|\bRequest was throttled\b/i,
  },
  // overloaded: the service, transient
  { kind: "overloaded", re: /\boverloaded(?:_error)?\b/i },
  {
    kind: "overloaded",
    re: /\b529\b|\blast status: 50[0234]\b|\bAPI Error:?\s*\(?50[0234]\b|\bService Unavailable\b/i,
  },
  { kind: "overloaded", re: /\b(?:InternalServerError|ServiceUnavailableError)\b|\bservers are down\b/ },
  { kind: "overloaded", re: jsonPair("status", "UNAVAILABLE") },
];

/** Claude Code's `error` labels (api_retry events, synthetic assistant messages) and HTTP statuses. */
function kindOfLabel(label: unknown): Kind | null {
  switch (label) {
    case "rate_limit":
    case "rate_limit_error":
      return "rate_limit";
    case "overloaded":
    case "overloaded_error":
      return "overloaded";
    case "authentication_failed":
    case "authentication_error":
    case "permission_error":
      return "auth";
    case "billing_error":
      return "quota";
    default:
      return null;
  }
}

function kindOfStatus(status: unknown): Kind | null {
  const code = typeof status === "string" ? Number(status) : status;
  if (code === 429) return "rate_limit";
  if (code === 401 || code === 403) return "auth";
  if (code === 402) return "quota";
  if (code === 500 || code === 502 || code === 503 || code === 504 || code === 529) return "overloaded";
  return null;
}

function strongest<T extends { kind: Kind }>(items: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const item of items) {
    // On a tie the later item wins: the last word of a run (its final error) is the best evidence.
    if (!best || AGENT_OUTPUT_PRECEDENCE.indexOf(item.kind) <= AGENT_OUTPUT_PRECEDENCE.indexOf(best.kind))
      best = item;
  }
  return best;
}

function evidenceOf(text: string): string {
  const line = text.trim().replace(/\s+/g, " ");
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** Classifies text known to be an error message; `extra` are kinds already known from structured fields. */
function classifyError(text: string, ctx: Context, extra: readonly (Kind | null)[] = []): Finding | null {
  const kinds: Kind[] = extra.filter((kind): kind is Kind => kind !== null);
  for (const rule of RULES) {
    if (rule.re.test(text) && !(rule.unless?.test(text) ?? false) && (rule.when?.test(text) ?? true)) {
      kinds.push(rule.kind);
    }
  }
  const best = strongest(kinds.map((kind) => ({ kind })));
  if (!best) return null;
  const finding: Finding = { kind: best.kind, evidence: evidenceOf(text) };
  if (best.kind === "usage_limit" || best.kind === "rate_limit") {
    const resetAt = parseResetTime(text, ctx.now, ctx.timeZone);
    if (resetAt) finding.resetAt = resetAt;
  }
  return finding;
}

// ---------------------------------------------------------------------------------------------------------
// Structured events.

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}

interface StreamState {
  /** Findings that a later success makes moot, per tool. */
  claude: Finding[];
  codex: Finding[];
  other: Finding[];
  claudeSucceeded: boolean;
  codexSucceeded: boolean;
  /**
   * What the CLI printed as its own, in order: the text of the events read as errors, and the lines that are
   * not events. Never the agent's own words, tool calls or tool results (cliOwnLines).
   */
  cli: string[];
}

function handleEvent(event: Json, raw: string, ctx: Context, state: StreamState): void {
  const add = (bucket: Finding[], finding: Finding | null) => {
    if (finding) bucket.push(finding);
  };
  /** An error the event reports: kept as the CLI's own text, and classified. */
  const errorText = (text: string, extra: readonly (Kind | null)[] = []): Finding | null => {
    state.cli.push(text);
    return classifyError(text, ctx, extra);
  };
  const type = event.type;
  if (type === "system" && event.subtype === "api_retry") {
    const text = `api_retry: ${event.error_status} ${textOf(event.error)}`;
    state.cli.push(text);
    const kind = kindOfStatus(event.error_status) ?? kindOfLabel(event.error);
    if (kind) add(state.claude, { kind, evidence: evidenceOf(text) });
    return;
  }
  if (type === "rate_limit_event") {
    const info = isObject(event.rate_limit_info) ? event.rate_limit_info : {};
    if (info.status === "rejected") {
      state.cli.push(raw);
      const finding: Finding = { kind: "usage_limit", evidence: evidenceOf(raw) };
      const resetAt = epochToDate(info.resetsAt);
      if (resetAt) finding.resetAt = resetAt;
      add(state.claude, finding);
    }
    return;
  }
  if (type === "assistant") {
    if (event.error === undefined) return; // the agent's own words
    const message = isObject(event.message) ? event.message : {};
    const content = Array.isArray(message.content) ? message.content : [];
    const text = content.map((block) => (isObject(block) ? textOf(block.text) : "")).join("\n");
    add(state.claude, errorText(text, [kindOfLabel(event.error)]));
    return;
  }
  if (type === "result") {
    const failed =
      event.is_error === true ||
      event.status === "error" ||
      (typeof event.subtype === "string" && event.subtype.startsWith("error")) ||
      event.error !== undefined;
    state.claudeSucceeded = !failed;
    if (!failed) return;
    // The result text may be the agent's own last words: only anchored error lines count in it. An
    // `error` object is an error by definition.
    const errors = Array.isArray(event.errors) ? event.errors.map(textOf) : [textOf(event.errors)];
    const text = [textOf(event.result), ...errors].filter(Boolean).join("\n");
    const status = kindOfStatus(event.api_error_status);
    if (status)
      add(state.claude, {
        kind: status,
        evidence: evidenceOf(text || `api_error_status ${event.api_error_status}`),
      });
    if (event.api_error_status != null) state.cli.push(`api_error_status ${event.api_error_status}`);
    state.cli.push(...errors.filter(Boolean));
    if (event.error !== undefined) add(state.claude, errorText(textOf(event.error)));
    // Of the result text (which may be the agent's own last words), only anchored error blocks are the CLI's.
    state.cli.push(...errorBlocks(textOf(event.result).split(/\r\n|\r|\n/)));
    state.claude.push(...classifyBlocks(errorBlocks(text.split(/\r\n|\r|\n/)), ctx));
    return;
  }
  if (type === "turn.completed") {
    state.codexSucceeded = true;
    return;
  }
  if (type === "turn.failed") {
    state.codexSucceeded = false;
    add(state.codex, errorText(textOf(isObject(event.error) ? event.error.message : event.error)));
    return;
  }
  if (
    (type === "item.completed" || type === "item.started") &&
    isObject(event.item) &&
    event.item.type === "error"
  ) {
    add(state.codex, errorText(textOf(event.item.message)));
    return;
  }
  if (type === "error" || (type === undefined && isObject(event.error))) {
    // Codex `{"type":"error","message":…}`, Anthropic `{"type":"error","error":{…}}`, OpenAI/Google
    // `{"error":{…}}` (an object: a log line's `"error":"…"` string is not an API error body).
    // The CLI's own text is the message or the error object: a Gemini document's `response` beside it is not.
    state.cli.push(typeof event.message === "string" ? event.message : textOf(event.error));
    add(
      type === "error" && typeof event.message === "string" ? state.codex : state.other,
      classifyError(raw, ctx),
    );
  }
}

function classifyBlocks(blocks: readonly string[], ctx: Context): Finding[] {
  return blocks.map((block) => classifyError(block, ctx)).filter((finding) => finding !== null);
}

// ---------------------------------------------------------------------------------------------------------
// The entry point.

const ANSI = /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001B]*(?:\u0007|\u001B\\)|[@-Z\\-_])/g;

/** What one pass over an output found: the events' findings and the plain lines (null: one JSON document). */
function readOutput(text: string, ctx: Context): { state: StreamState; plain: string[] | null } {
  const state: StreamState = {
    claude: [],
    codex: [],
    other: [],
    claudeSucceeded: false,
    codexSucceeded: false,
    cli: [],
  };
  const clean = text.replace(ANSI, "");
  // One pretty-printed JSON document (Gemini CLI's --output-format json): an event of its own.
  const whole = clean.trim();
  if (whole.startsWith("{") && whole.endsWith("}") && whole.includes("\n")) {
    const document = parseJson(whole);
    if (isObject(document)) {
      handleEvent(document, whole, ctx, state);
      return { state, plain: null };
    }
  }
  const plain: string[] = [];
  for (const line of clean.split(/\r\n|\r|\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith("{") && trimmed.endsWith("}")) {
      const event = parseJson(trimmed);
      if (isObject(event)) {
        handleEvent(event, trimmed, ctx, state);
        continue;
      }
    }
    plain.push(line);
    state.cli.push(line);
  }
  return { state, plain };
}

/** Classifies an agent CLI's output (stdout, stderr or both); see the file comment. */
export function classifyAgentOutput(
  text: string,
  now?: Date,
  options: ClassifyOptions = {},
): AgentOutputClass {
  const ctx: Context = { now, timeZone: options.timeZone ?? "UTC" };
  const { state, plain } = readOutput(text, ctx);
  if (plain === null) return decide([...state.claude, ...state.codex, ...state.other]);
  return decide([
    ...(state.claudeSucceeded ? [] : state.claude),
    ...(state.codexSucceeded ? [] : state.codex),
    ...state.other,
    ...classifyBlocks(errorBlocks(plain), ctx),
  ]);
}

/**
 * What a CLI printed as its own, line by line and in order: the lines that are not JSON events, and the error
 * text of the events this file reads as errors (above). The agent's own words, tool calls and tool results —
 * every other event, and the text of a `result` event but its anchored error lines — are left out. For readers
 * of a failed run's output that must not take the agent's transcript for the CLI's error (limit-hint.ts).
 */
export function cliOwnLines(text: string): string[] {
  const { state } = readOutput(text, { now: undefined, timeZone: "UTC" });
  const lines = state.cli.flatMap((part) => part.split(/\r\n|\r|\n/));
  // Aider prints plain text: the model's reply, then its `Tokens: … sent, … received.` report (wrapped at the
  // terminal's width, `session.` alone on the next line). What comes before the last report is the conversation.
  const report = lines.findLastIndex((line) => AIDER_REPORT.test(line));
  if (report < 0) return lines;
  const wrapped = /^\s*session\.\s*$/.test(lines[report + 1] ?? "") ? 1 : 0;
  return lines.slice(report + 1 + wrapped);
}

const AIDER_REPORT = /^\s*Tokens:\s.*\bsent\b.*\breceived\b/;

/**
 * A usage limit that names no reset time (Claude's bare "Usage limit reached") still lifts at some point: the
 * configured default wait stands in for it, and the evidence says so (it is shown to people as the reason).
 */
export function withDefaultReset(
  found: AgentOutputClass,
  now: Date,
  defaultWaitMs: number,
): AgentOutputClass {
  if (found.kind !== "usage_limit" || found.resetAt) return found;
  const minutes = Math.round(defaultWaitMs / 60_000);
  const note = `no reset time given: assumed in ${minutes} min (rateLimit.usageLimitWaitMs)`;
  return {
    ...found,
    resetAt: new Date(now.getTime() + defaultWaitMs),
    evidence: found.evidence ? `${found.evidence} — ${note}` : note,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The strongest finding's kind and evidence, with the latest reset time among findings of that kind. */
function decide(findings: readonly Finding[]): AgentOutputClass {
  const winner = strongest(findings);
  if (!winner) return { kind: "none" };
  const resets = findings
    .filter((finding) => finding.kind === winner.kind && finding.resetAt !== undefined)
    .map((finding) => finding.resetAt!.getTime());
  const result: AgentOutputClass = { kind: winner.kind, evidence: winner.evidence };
  if (resets.length > 0) result.resetAt = new Date(Math.max(...resets));
  return result;
}
