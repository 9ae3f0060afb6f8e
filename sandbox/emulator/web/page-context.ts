/**
 * What every page reads: the sandbox's store (only read), the Actions stand-in's run details (logs and step
 * summaries live there, not in the GitHub-visible record), and whether the scenario is still running.
 */
import type { SandboxStore } from "../store.js";

/** The parts of a run that GitHub shows on its page but the store does not keep. */
export interface RunDetails {
  log: readonly string[];
  /** The step summaries (`GITHUB_STEP_SUMMARY`), Markdown. */
  summary: string;
  annotations: ReadonlyArray<{ level: "error" | "warning" | "notice"; message: string }>;
  steps: ReadonlyArray<{ name: string; status: string; conclusion: string | null }>;
  reason: string | null;
  /** The run's secrets and token: masked wherever the page shows run output. */
  secrets?: readonly string[];
}

export type RunDetailsSource = (runId: number) => RunDetails | undefined;

export interface PageContext {
  store: SandboxStore;
  runDetails: RunDetailsSource;
  live: boolean;
}

/** What a page handler answers: a status and a whole document, or a redirect. */
export type PageResult = { status: number; html: string } | { redirect: string };
