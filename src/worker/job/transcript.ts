/**
 * The job's transcript of the agent (src/core/text/transcript.ts renders it, src/core/gates/secret-masking.ts masks it): each run's prompt and
 * output appended to a file in the worker's private directory, outside the agent's reach, which the worker
 * workflow keeps as the artifact `autopilot-transcript-<issue>-<attempt>` (the action's `transcript-file`
 * output) and the progress comment links to. Nothing is appended before the secret values are masked.
 */
import { appendFile, writeFile } from "node:fs/promises";
import { maskSecrets } from "../../core/gates/secret-masking.js";
import { transcriptSection } from "../../core/text/transcript.js";
import type { AgentRunResult } from "./agent-iteration.js";

export interface Transcript {
  /** The file the artifact is made of. */
  readonly file: string;
  /** The artifact's name, for the progress comment. */
  readonly artifact: string;
  append(text: string): Promise<void>;
}

/** A transcript file, started empty, whose every write is masked with the secret values first. */
export async function createTranscript(options: {
  file: string;
  artifact: string;
  secretValues: readonly string[];
}): Promise<Transcript> {
  await writeFile(options.file, `# Agent transcript: ${options.artifact}\n\n`, { mode: 0o600 });
  return {
    file: options.file,
    artifact: options.artifact,
    append: (text) => appendFile(options.file, maskSecrets(text, options.secretValues)),
  };
}

/** Appends one agent run; a write that fails only warns (the transcript is a record, not the work). */
export async function recordAgentRun(
  // What it needs of the job's context, named here: worker-deps.ts holds the Transcript type, and the
  // context holds the deps.
  ctx: { deps: { transcript?: Transcript }; now(): number; warn(message: string): void },
  run: { iteration: number; agent: string; prompt: string; result: AgentRunResult },
): Promise<void> {
  const transcript = ctx.deps.transcript;
  if (!transcript) return;
  const { result } = run;
  const exit = result.spawnError
    ? `not started: ${result.spawnError}`
    : result.timedOut
      ? "timed out"
      : `exit ${result.exitCode ?? result.signal ?? "unknown"}`;
  const section = transcriptSection({
    iteration: run.iteration,
    agent: run.agent,
    at: new Date(ctx.now()).toISOString(),
    durationMs: result.durationMs,
    exit,
    prompt: run.prompt,
    output: result.rawOutput,
  });
  await transcript.append(section).catch((error: unknown) => {
    ctx.warn(`the transcript could not be written: ${(error as Error).message}`);
  });
}
