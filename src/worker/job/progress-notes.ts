/**
 * The progress notes on the task branch (PROGRESS_NOTES_PATH): what earlier iterations learned, for the next
 * one. They live in the agent's work tree and are read and written without following its links
 * (src/worker/checkout/tree-files.ts).
 */
import { PROGRESS_NOTES_PATH } from "../../core/agent/prompt.js";
import { readTreeFile, writeTreeFile } from "../checkout/tree-files.js";

/** Starts the notes when the branch has none. */
export async function ensureProgressNotes(tree: string, issue: number, title: string): Promise<void> {
  if ((await readTreeFile(tree, PROGRESS_NOTES_PATH).catch(() => "")) === null) {
    await writeTreeFile(
      tree,
      PROGRESS_NOTES_PATH,
      [
        `# Progress notes for #${issue}: ${title.replace(/[\r\n]+/g, " ")}`,
        "",
        "What earlier iterations learned, kept on the task branch. The agent adds what the next iteration needs",
        "to know (decisions, dead ends, what is left); Autopilot adds one line per iteration.",
        "",
        "## Iterations",
        "",
      ].join("\n"),
    );
  }
}

/** The notes for the prompt, their last 30,000 characters; empty (and warned about) when unreadable. */
export async function readProgressNotes(tree: string, warn: (message: string) => void): Promise<string> {
  try {
    const text = (await readTreeFile(tree, PROGRESS_NOTES_PATH)) ?? "";
    return text.length > 30_000 ? text.slice(-30_000) : text;
  } catch (error) {
    warn(`the progress notes were not read: ${error instanceof Error ? error.message : String(error)}`);
    return "";
  }
}

/** Adds Autopilot's one line about an iteration. */
export async function appendProgressNote(
  tree: string,
  note: { attempt: number; iteration: number; at: number; preset: string; signal: string; outcome: string },
  warn: (message: string) => void,
): Promise<void> {
  const when = new Date(note.at).toISOString();
  const line = `- attempt ${note.attempt}, iteration ${note.iteration} (${when}, ${note.preset}): signal ${note.signal
    .replace(/\s+/g, " ")
    .slice(0, 200)}; ${note.outcome.replace(/\s+/g, " ")}\n`;
  try {
    await writeTreeFile(tree, PROGRESS_NOTES_PATH, line, { append: true });
  } catch (error) {
    warn(`could not write the progress notes: ${error instanceof Error ? error.message : String(error)}`);
  }
}
