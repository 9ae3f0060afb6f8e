/**
 * The agent's completion signals: `<promise>COMPLETE</promise>`, `<promise>BLOCKED: reason</promise>`,
 * `<promise>NEEDS_HUMAN: question</promise>`, and the objective marker
 * `<promise>OBJECTIVE_MET: how each requirement is met</promise>` (`completion: objective`,
 * src/core/agent/completion-mode.ts: a completion claim that states how the work meets the issue).
 *
 * parseSignal reads the agent's OWN final message only — the worker passes the `result` of Claude's
 * stream-json result event or Codex's last `agent_message`, never the transcript — so the task text the
 * agent was given cannot signal by being in the conversation. Inside that message a signal counts only
 * in plain prose: quoted in a fenced code block, a blockquote, inline code or an HTML comment, it is the
 * agent citing the protocol or the task, not signalling. The last real signal wins (an agent that wrote
 * "BLOCKED" and then solved the problem ends with COMPLETE). The tag is matched case-insensitively and
 * with any whitespace (`< Promise >complete</ promise>`); the keyword must be one of the three
 * (`NEEDS HUMAN` and `NEEDS-HUMAN` are accepted too, as is `OBJECTIVE MET`); anything else — an unclosed tag, an unknown keyword
 * such as DONE — is not a signal.
 */
import { splitMarkdownCode, stripHtmlComments } from "../text/sanitize.js";

export type Signal =
  /** `objective`: the objective marker's statement (absent for a plain COMPLETE). */
  | { kind: "complete"; objective?: string }
  | { kind: "blocked"; reason: string }
  | { kind: "needs_human"; question: string }
  | { kind: "none" };

/** Longest reason or question kept (the worker posts it on the issue). */
const SIGNAL_TEXT_MAX = 2_000;

const SIGNAL =
  /<\s*promise\s*>\s*(COMPLETE|OBJECTIVE[\s_-]?MET|BLOCKED|NEEDS[\s_-]?HUMAN)(?![A-Za-z_])[ \t]*(?:[:\-–—][ \t]*)?((?:(?!<\s*\/?\s*promise\s*>)[\s\S])*?)\s*<\s*\/\s*promise\s*>/gi;

/**
 * The agent's final message with every quoted region blanked out: fenced code blocks, inline code,
 * blockquote lines (`>` after at most three spaces) and HTML comments.
 */
function unquotedProse(message: string): string {
  const withoutComments = stripHtmlComments(message.replace(/\r\n?/g, "\n"));
  return splitMarkdownCode(withoutComments)
    .map((piece) => (piece.code ? "\n" : piece.text.replace(/^ {0,3}>.*$/gm, "")))
    .join("");
}

/** The signal in the agent's final message (see the file comment for what counts). */
export function parseSignal(finalMessage: string): Signal {
  let last: RegExpExecArray | null = null;
  for (const match of unquotedProse(finalMessage).matchAll(SIGNAL)) last = match;
  if (last === null) return { kind: "none" };
  const keyword = last[1]!.toUpperCase();
  const text = last[2]!.trim().slice(0, SIGNAL_TEXT_MAX);
  if (keyword === "COMPLETE") return { kind: "complete" };
  if (keyword.startsWith("OBJECTIVE")) return { kind: "complete", objective: text };
  if (keyword === "BLOCKED") return { kind: "blocked", reason: text };
  return { kind: "needs_human", question: text };
}

/** How the agent claims the task is done, by completion mode (`completion` in .github/autopilot.yml). */
const COMPLETION_BULLETS = {
  promise: [
    "- `<promise>COMPLETE</promise>` — the whole task is done and committed, with tests, and the project's",
    "  checks pass when you run them. Autopilot then runs the quality commands itself: if any fails, you get",
    "  its output in the next iteration; if all pass, a pull request is opened for review.",
  ],
  objective: [
    "- `<promise>OBJECTIVE_MET: <statement></promise>` — the objective marker: the whole task is done and",
    "  committed, with tests, and the project's checks pass when you run them. In the statement, name each",
    "  requirement of the issue and how your work meets it (file, function or test). Autopilot then runs the",
    "  quality commands itself: the task is done only when they all pass; if any fails, you get its output",
    "  in the next iteration. A plain `COMPLETE` does not count in this repository: use the objective marker.",
  ],
} as const;

/**
 * What the agent is told about signals, at the end of every prompt, for the repository's completion mode. The
 * tags are shown as inline code so that an agent echoing this text back does not signal by accident.
 */
export function signalProtocolText(completion: "promise" | "objective" = "promise"): string {
  const done = completion === "objective" ? "OBJECTIVE_MET" : "COMPLETE";
  return [
    "## How to end this iteration: the signal protocol",
    "",
    "Autopilot reads only your final message. When one of these applies, end that message with exactly one",
    "of the following tags, on a line of its own, as plain text (not inside a code block, inline code or a",
    "quote — those are ignored):",
    "",
    ...COMPLETION_BULLETS[completion],
    "- `<promise>BLOCKED: <reason></promise>` — you cannot go on because of something outside your control",
    "  (missing access or credentials, an unmerged dependency, a broken environment). The reason is posted on",
    "  the issue and the task stops until a person unblocks it.",
    "- `<promise>NEEDS_HUMAN: <question></promise>` — you need a decision or information only a maintainer",
    "  can give. The question is posted on the issue; the task resumes with the answer.",
    "",
    "If work remains and none of these applies, end without a tag: the next iteration continues from your",
    `commits and your notes. Do not claim ${done} to end early — the quality commands decide.`,
  ].join("\n");
}
