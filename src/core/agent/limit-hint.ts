/**
 * A limit the classifier (classify.ts) does not recognise. classifyAgentOutput matches only the shapes real
 * tools print, so a provider's new wording of a 429 ends as `none`, and the failed run would count as the
 * agent failing: the job ends `failed` and the task is retried with no wait for the limit to lift. This file
 * is the safety net between the two: when a run FAILED (the process reported an error, no signal) and the end
 * of what the CLI printed as its own still looks like a limit, the worker waits as for a rate limit
 * (limitWait in iteration.ts: the same backoff and the same `rateLimit.retries` waits, counted together with the
 * classified limits' waits) and runs the agent again, before counting the run as a failure.
 *
 * Only the CLI's own output is read, and only its end: the error text of the events classify.ts reads as errors,
 * and the lines that are not events (stderr, a text-mode CLI's messages) — cliOwnLines. The agent's transcript
 * is full of ordinary text about 429s and rate limiters (classify.ts explains): its messages, tool calls and
 * tool results, in any CLI's events, are never read. A false hint costs a few waits and agent runs, bounded by
 * `retries`; then the run counts as the failure it was.
 */
import { cliOwnLines } from "./classify.js";

/** Words of a limit, in any provider's phrasing. */
const LIMIT_WORDS =
  /\b429\b|too many requests|rate[ _-]?limit|throttl|quota|usage[ _-]?limit|resource[ _-]?exhausted|capacity|try again later/i;

/** How many lines at the end of the CLI's own output are read. */
const TAIL_LINES = 20;

/** The line at the end of a failed run's output (stdout and stderr) that looks like a limit, or null. */
export function unrecognisedLimitHint(rawOutput: string): string | null {
  const hit = cliOwnLines(rawOutput)
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(-TAIL_LINES)
    .find((line) => LIMIT_WORDS.test(line));
  if (hit === undefined) return null;
  return hit.length > 300 ? `${hit.slice(0, 299)}…` : hit;
}
