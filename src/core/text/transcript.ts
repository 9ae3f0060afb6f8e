/**
 * The agent's transcript, one section per agent run: what it was asked and what it printed. Pure: the worker
 * masks every held secret in it (src/core/gates/secret-masking.ts) and writes the text
 * (src/worker/job/transcript.ts).
 */

/** One agent run's section of the transcript (Markdown; the texts fenced so nothing in them renders). */
export function transcriptSection(run: {
  iteration: number;
  agent: string;
  at: string;
  durationMs: number;
  exit: string;
  prompt: string;
  output: string;
}): string {
  const fence = (text: string) => {
    const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
    const ticks = "`".repeat(longest + 1);
    return `${ticks}text\n${text}${text.endsWith("\n") ? "" : "\n"}${ticks}`;
  };
  return [
    `## Iteration ${run.iteration}: ${run.agent}`,
    "",
    `${run.at} · ${Math.round(run.durationMs / 1000)} s · ${run.exit}`,
    "",
    "### Prompt",
    "",
    fence(run.prompt),
    "",
    "### Output",
    "",
    fence(run.output),
    "",
  ].join("\n");
}
