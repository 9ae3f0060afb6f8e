/**
 * The agent's transcript, one section per agent run: what it was asked and what it printed, with the value of
 * every secret the worker holds replaced by `***` (plain, and in the base64 and URL-encoded forms a CLI might
 * echo) before anything is kept. Pure: the worker writes the text (src/worker/job/transcript.ts).
 */

/** Values shorter than this are not masked: too likely to occur by chance (the push guard skips them too). */
const MIN_SECRET_LENGTH = 8;

/** `text` with each value, and its base64, base64url and URL-encoded forms, replaced by `***`. */
export function maskSecrets(text: string, values: readonly string[]): string {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    const bytes = Buffer.from(value, "utf8");
    for (const form of [
      value,
      bytes.toString("base64"),
      bytes.toString("base64").replace(/=+$/, ""),
      bytes.toString("base64url"),
      encodeURIComponent(value),
    ])
      if (form.length >= MIN_SECRET_LENGTH) forms.add(form);
  }
  // Longest first: a value that contains another is masked whole.
  let masked = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) masked = masked.split(form).join("***");
  return masked;
}

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
