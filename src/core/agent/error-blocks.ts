/**
 * Plain-text agent output cut into error blocks (classify.ts classifies each): a block starts at an anchored
 * error line (a known error prefix after an optional timestamp, log level or CLI glyph) or at pretty-printed JSON
 * whose first key is "error", and runs while its lines stay indented, bracketed or fenced, bounded in lines and
 * characters. Pure and linear.
 */

/** What may stand before an error at the start of a line: spaces, a timestamp, a log level, a CLI glyph. */
const LINE_PREFIX =
  "^[ \\t]*(?:\\[\\d[^\\]\\n]{0,38}\\][ \\t]*)?(?:\\d{4}-\\d\\d-\\d\\d[T ][\\d:.]+Z?[ \\t]+(?:ERROR|WARN|INFO)[ \\t]+(?:[\\w:]+:[ \\t]+)?)?(?:[⎿✕✖✗■⚠⚡●⏺│❌⛔]\\uFE0F?[ \\t]*)*";

const ANCHORS = [
  // Claude Code and Gemini CLI
  "\\[?API Error(?::|[ \\t]*\\(|[ \\t]+\\d{3}\\b)",
  "Failed to authenticate\\. API Error\\b",
  // SDK and LiteLLM exceptions, as printed (not as code: a message must follow the colon)
  "(?:Unexpected error:[ \\t]*)?(?:[A-Za-z_]\\w*\\.)*_?(?:RateLimitError|AuthenticationError|PermissionDeniedError|InternalServerError|ServiceUnavailableError|OverloadedError|APIStatusError|APIError|ApiError|BadRequestError|ResourceExhausted|TooManyRequests|Unauthenticated|PermissionDenied):[ \\t]*(?:\\d{3}\\b|Error code|\\w*Exception\\b|litellm\\.|[{[]|b['\"]|Quota|Resource|Rate)",
  // Codex text mode, Node SDKs
  "(?:Error|ERROR|error):[ \\t]+(?:\\d{3} \\{|exceeded retry limit|stream error|unexpected status|You(?:'|’)ve hit|Quota exceeded|Insufficient quota|[{[])",
  "stream error:|exceeded retry limit\\b|unexpected status \\d{3}\\b|Reconnecting\\.\\.\\. \\d",
  // The Codex SDK's wrappers of the same errors
  "Codex (?:stream error|turn failed|SDK error):",
  // OpenCode (the AI SDK's provider errors), Gemini Code Assist ("Cloud Code Assist API error (429):"), and
  // OpenAI-compatible clients ("OpenAI API error 402:", "OpenAI API Streaming Error: 402 …")
  "(?:Error:[ \\t]+)?(?:[A-Z][\\w-]* |Cloud Code Assist )?API error \\(\\d{3}\\):",
  "(?:[A-Z][\\w-]* ){0,2}API error \\d{3}: \\{",
  "OpenAI API Streaming Error: \\d{3}\\b",
  // The OpenAI Node SDK's message (`${status} ${message}`) for the limits and billing errors of OpenAI and the
  // APIs compatible with it (DeepSeek's "402 Insufficient Balance", OpenRouter's credits), alone or after "Error: "
  "(?:(?:Error|ERROR|error):[ \\t]+)?\\d{3} (?:Rate limit reached for|You exceeded your current quota|Insufficient (?:Balance|credits)|This request requires more credits)",
  // An HTTP status with the raw body
  'HTTP \\d{3}:? \\{\\s*\\\\?"(?:type|error)\\\\?"',
  // OpenCode's retry status ("Too Many Requests: quota exceeded [retrying in ~2 weeks attempt #1]")
  "Too Many Requests: [^\\n]{0,200}\\[retrying in\\b",
  "Attempt \\d+ failed with status \\d{3}\\b",
  '\\d{3}:? \\{\\s*\\\\?"(?:type|error)\\\\?"',
  // Raw error bodies (compact JSON, or a Python dict repr)
  "\\[?\\{\\s*\\\\?[\"'](?:type\\\\?[\"']\\s*:\\s*\\\\?[\"']error|error\\\\?[\"']\\s*:)",
  // The tools' own sentences
  "Claude (?:AI )?usage limit reached\\b",
  "You(?:'|’)ve hit your (?:[\\w-]+ )?limit\\b",
  "(?:[\\w-]+ )?(?:5-hour|Five-hour|Weekly|weekly|Daily|Session|Monthly) limit reached[ \\t]*[∙·•\\-–]",
  "Usage limit reached for\\b",
  // Claude Code's notice with no window named ("Limit reached · resets 11:30am (Asia/Calcutta)")
  "Limit reached[ \\t]*[∙·•\\-–][ \\t]*resets?\\b",
  // Claude's bare notice, with no reset time (the line ends, or a sentence does)
  "Usage limit reached(?=[ \\t]*(?:$|[.!·∙]))",
  // Amazon Bedrock throttling, as the AWS SDKs print it
  "An error occurred \\(ThrottlingException\\)",
  "Error: Request was throttled or rate limited\\b",
  "Invalid API key[ \\t]*[·.]",
  "Not logged in[ \\t]*·",
  "(?:Your )?[Cc]redit balance (?:is )?too low\\b",
  "OAuth token (?:has expired|revoked)",
  "The API provider (?:has rate limited you|is not able to authenticate you|'s servers are down or overloaded)",
  "Quota exceeded(?:\\.| for (?:quota )?metric)",
  "Insufficient quota\\b",
  "You have (?:exhausted your (?:capacity|daily quota)|reached your daily)",
  "You exceeded your current quota\\b",
  "Resource has been exhausted\\b",
  "Rate limit reached for\\b",
  "Request rejected \\(429\\)",
  "Please set an Auth method\\b",
  "When using Gemini API, you must specify\\b",
  "Your access token could not be refreshed\\b",
  "Failed to refresh token\\b|Token refresh failed\\b",
];

const ANCHOR = new RegExp(`${LINE_PREFIX}(?:${ANCHORS.join("|")})`);
const PRETTY_JSON_OPEN = /^[ \t]*\[?\{[ \t]*$/;
const PRETTY_JSON_ERROR_KEY = /^[ \t]*"error"[ \t]*:/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

const BLOCK_MAX_LINES = 80;
const BLOCK_MAX_CHARS = 8_000;

function bracketBalance(line: string): number {
  let depth = 0;
  for (const c of line) {
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return depth;
}

function indentOf(line: string): number {
  return /^[ \t]*/.exec(line)![0].length;
}

/** The anchored error blocks of plain text (see the file comment), fenced code skipped. */
export function errorBlocks(lines: readonly string[]): string[] {
  const blocks: string[] = [];
  let fence: string | null = null;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fenceMatch = FENCE.exec(line);
    if (fence !== null) {
      if (fenceMatch && fenceMatch[1]![0] === fence[0] && fenceMatch[1]!.length >= fence.length) fence = null;
      i++;
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1]!;
      i++;
      continue;
    }
    const anchored =
      ANCHOR.test(line) || (PRETTY_JSON_OPEN.test(line) && PRETTY_JSON_ERROR_KEY.test(lines[i + 1] ?? ""));
    if (!anchored) {
      i++;
      continue;
    }
    // The block: the anchor line, then lines while brackets are open or lines are indented deeper.
    let block = line;
    let depth = bracketBalance(line);
    const indent = indentOf(line);
    let j = i + 1;
    while (j < lines.length && j - i < BLOCK_MAX_LINES && block.length < BLOCK_MAX_CHARS) {
      const next = lines[j]!;
      const continues = depth > 0 || (next.trim() !== "" && indentOf(next) > indent);
      if (!continues) break;
      block += `\n${next}`;
      depth += bracketBalance(next);
      j++;
    }
    blocks.push(block);
    i = j;
  }
  return blocks;
}
