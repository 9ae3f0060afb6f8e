/**
 * The comment that hands a task to a person when its test gate keeps failing (document 003: "if still fail:
 * escalate to the human gate"): the agent claimed it was done, the quality commands (or the coverage threshold)
 * said otherwise, again and again. The failing output is the agent's code's output: every line of it is shown
 * as inert text — invisible characters and HTML comments removed, inside a fence it cannot close (a mention in a
 * code block pings nobody) — and cut to its end, at a size a comment holds.
 */
import { fenceBlock, sanitizeUntrustedText, truncateWithNote } from "../../core/text/sanitize.js";
import { cellText } from "./progress-comment.js";
import type { QualityCommandResult } from "../processes/quality.js";

/** Characters of one command's output shown; the comment stays far below GitHub's 65,536. */
const OUTPUT_CHARS = 6_000;
const SHOWN_COMMANDS = 5;

/**
 * The end of a command's output, inert: a failure is reported last, and the output is already a tail (with a
 * `[failed all N runs…]` line before it), so the end is what is kept — as the prompt keeps it.
 */
function outputBlock(output: string): string {
  const raw = output.length > OUTPUT_CHARS * 4 ? output.slice(-OUTPUT_CHARS * 4) : output;
  return fenceBlock(truncateWithNote(sanitizeUntrustedText(raw, OUTPUT_CHARS * 4), OUTPUT_CHARS, "tail"));
}

export function renderGateEscalationComment(
  failures: QualityCommandResult[],
  reason: string,
  labelName: string,
): string {
  const parts = [
    "### 🧪 The test gate keeps failing",
    "",
    `The agent said the task was done, but the quality gate failed each time (${cellText(reason, 300)}). ` +
      "Rather than failing the task, Autopilot hands it to you with the output of the last run:",
  ];
  for (const failure of failures.slice(0, SHOWN_COMMANDS)) {
    const how = failure.timedOut
      ? "stopped by its time limit"
      : failure.exitCode === null
        ? "failed"
        : `exit code ${failure.exitCode}`;
    const runs = failure.runs && failure.runs > 1 ? `, ${failure.runs} runs` : "";
    parts.push(
      "",
      `**\`${cellText(failure.command, 120)}\`** (${how}${runs})`,
      "",
      outputBlock(failure.output || "(no output)"),
    );
  }
  if (failures.length > SHOWN_COMMANDS)
    parts.push("", `…and ${failures.length - SHOWN_COMMANDS} more failing.`);
  parts.push(
    "",
    `The task is labeled \`${labelName}\`. Fix what the gate needs (a test, the threshold, a command in ` +
      "`.github/autopilot.yml`), or say in a comment what the agent should do — comments from people with write " +
      "access reach its next prompt — then label the issue ready again: the work resumes from its branch.",
    "",
    "<!-- autopilot:signal -->",
  );
  return parts.join("\n");
}
