/**
 * Which agent a worker runs and why it left its primary, read from what the worker already reports in its
 * progress comment (src/worker/job/progress-comment.ts): the table's `Agent` row (the agent in use when the
 * comment was last written) and its warnings, where a switch reads "<preset> is rate limited; switching to
 * <preset> (<why>)" and a return "<preset>'s limit has lifted; back to it from <preset> (recoverPrimary)"
 * (src/worker/job/agent-turn.ts). The worker-result marker does not carry them.
 *
 * Only Autopilot's own comment is read (the snapshot checks its author); what is read is shown as inline text,
 * bounded, and never decides anything but the dashboard's line and the `agent-switched` webhook event.
 */

export interface WorkerAgent {
  /** The agent in use as the worker last reported it: its preset, and its model in parentheses when set. */
  agent: string;
  /** Why the worker is not on its primary agent ("claude is rate limited: backoff 3 of 3"), or null. */
  fallback: string | null;
  /** The agent it fell back from, with `fallback`. */
  from: string | null;
}

const AGENT_ROW = /^\| Agent \| ([^|\n]{1,120}) \|$/m;
const SWITCHED =
  /^> ⚠️ (\S{1,60}) is (rate limited|at its usage limit|overloaded); switching to (\S{1,60}) \((.{0,200})\)$/;
const RETURNED = /^> ⚠️ \S{1,60}'s limit has lifted; back to it from \S{1,60} \(recoverPrimary\)$/;

/** A table cell's or warning's text as the worker escaped it (its `cellText`), back to plain text. */
function plain(text: string): string {
  return text
    .replace(/\\\|/g, "|")
    .replace(/@\u200b/g, "@")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** The worker's agent from its progress comment's body; null when the comment names none. */
export function readWorkerAgent(body: string): WorkerAgent | null {
  const agent = plain(AGENT_ROW.exec(body)?.[1]?.trim() ?? "");
  if (!agent || agent === "none") return null;
  let fallback: string | null = null;
  let from: string | null = null;
  for (const line of body.split("\n")) {
    const switched = SWITCHED.exec(line);
    if (switched) {
      from = switched[1]!;
      fallback = plain(`${from} is ${switched[2]}: ${switched[4]}`);
      // The agent in use is the one switched to (a later switch, or a return, replaces it).
      if (!agent.startsWith(switched[3]!)) fallback = null;
    } else if (RETURNED.test(line)) {
      fallback = null;
      from = null;
    }
  }
  return { agent, fallback, from: fallback ? from : null };
}
