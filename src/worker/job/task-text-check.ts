/**
 * The worker works only on the task text a person with write access approved: the controller passes the
 * digest it froze (`task-digest`), and a title or body that no longer matches it is refused before the agent
 * sees a word of it. A run without the input (started by hand) has nothing to compare and goes on.
 */
import { taskDigest } from "../../core/tasks/task-text.js";

/** Why the text is refused, or null when it is the approved one (or no digest was given). */
export function taskTextRefusal(
  issue: { number: number; title: string; body: string },
  expected: string | null | undefined,
): string | null {
  if (!expected) return null;
  const actual = taskDigest(issue.title, issue.body);
  if (actual === expected) return null;
  return `the text of #${issue.number} changed after it was approved (digest ${actual.slice(0, 12)}, approved ${expected.slice(0, 12)}); not starting: a person with write access labels the task ready again to approve the new text`;
}
