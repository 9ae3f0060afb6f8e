/**
 * A limit the classifier (classify.ts) does not recognise. classifyAgentOutput matches only the shapes real
 * tools print, so a provider's new wording of a 429 ends as `none`, and the failed run would count as the
 * agent failing: the job ends `failed` and the task is retried with no wait for the limit to lift. This file
 * is the safety net between the two: when a run FAILED (the process reported an error, no signal) and the end
 * of what it printed still looks like a limit, the worker waits with bounded exponential backoff
 * (`rateLimit.baseMs × rateLimit.factor^n`, capped by `rateLimit.maxWaitMs`, at most `rateLimit.retries` times)
 * and runs the agent again, before counting the run as a failure.
 *
 * Only the end of the output is read — the CLI's own error text and its last lines — because the agent's
 * transcript is full of ordinary text about 429s and rate limiters (classify.ts explains); and events that
 * carry the agent's own words or tool results are skipped. A false hint costs a few waits and agent runs,
 * bounded by `retries`; then the run counts as the failure it was.
 */
import { exponentialBackoff } from "../session/backoff.js";

/** Words of a limit, in any provider's phrasing. */
const LIMIT_WORDS =
  /\b429\b|too many requests|rate[ _-]?limit|throttl|quota|usage[ _-]?limit|resource[ _-]?exhausted|capacity|try again later/i;

/** How many lines at the end of the output are read. */
const TAIL_LINES = 20;

/** Stream events that carry the agent's own words or tool results, never an error of the CLI. */
const TRANSCRIPT_EVENTS = new Set(["assistant", "user", "item.started", "item.updated", "item.completed"]);

function isTranscriptEvent(line: string): boolean {
  if (!line.startsWith("{")) return false;
  try {
    const event = JSON.parse(line) as { type?: unknown; item?: { type?: unknown } };
    if (typeof event.type !== "string" || !TRANSCRIPT_EVENTS.has(event.type)) return false;
    return event.item?.type !== "error";
  } catch {
    return false;
  }
}

/**
 * The line at the end of a failed run's output that looks like a limit, or null. `errorText` is the CLI's error
 * as its preset read it; `rawOutput` is what the process printed.
 */
export function unrecognisedLimitHint(errorText: string, rawOutput: string): string | null {
  const tail = rawOutput
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(-TAIL_LINES);
  const candidates = [...errorText.split(/\r\n|\r|\n/), ...tail]
    .map((line) => line.trim())
    .filter((line) => line !== "" && !isTranscriptEvent(line));
  const hit = candidates.find((line) => LIMIT_WORDS.test(line));
  if (hit === undefined) return null;
  return hit.length > 300 ? `${hit.slice(0, 299)}…` : hit;
}

interface UnrecognisedLimitInput {
  /** Waits already made for such hints since the last real iteration. */
  attempt: number;
  /** `rateLimit.retries`. */
  retries: number;
  baseMs: number;
  factor: number;
  maxWaitMs: number;
}

type UnrecognisedLimitDecision =
  | { action: "wait"; ms: number; reason: string }
  | { action: "count_failure"; reason: string };

/** Back off while waits are left; then the run counts as the failure it may well be. */
export function decideUnrecognisedLimit(input: UnrecognisedLimitInput): UnrecognisedLimitDecision {
  if (input.attempt < input.retries) {
    return {
      action: "wait",
      ms: exponentialBackoff(input.baseMs, input.factor, input.attempt, input.maxWaitMs),
      reason: `looks like a limit the classifier does not know; backoff ${input.attempt + 1} of ${input.retries}`,
    };
  }
  return {
    action: "count_failure",
    reason: `still failing after ${input.retries} backoff${input.retries === 1 ? "" : "s"}: counted as a failure`,
  };
}
