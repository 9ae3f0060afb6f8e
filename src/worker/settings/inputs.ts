/**
 * The action's inputs (action.yml), validated with zod: one schema per input with its default and meaning.
 * A bad input fails the job with `Invalid input \`name\`: …`.
 */
import { z } from "zod";
import { TASK_DIGEST_PATTERN } from "../../core/tasks/task-text.js";

const positiveInt = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `expected ${what} (a positive whole number)`)
    .transform(Number)
    .pipe(z.number().int().positive(`expected ${what} (a positive whole number)`));

export const WorkerInputSchema = z.object({
  /** Number of the task issue. */
  issue: positiveInt("an issue number"),
  /** 1-based attempt number; retries raise it. */
  attempt: z
    .string()
    .trim()
    .transform((value) => (value === "" ? "1" : value))
    .pipe(positiveInt("an attempt number")),
  /** Opaque id chosen by the controller; a manual run gets one made from the run id. */
  dispatchId: z.string().trim().max(200),
  /** Number of the tracking issue whose session status is read between iterations; empty: none. */
  trackingIssue: z
    .string()
    .trim()
    .transform((value) => (value === "" || value === "0" ? null : value))
    .pipe(positiveInt("an issue number").nullable()),
  /** Token for the GitHub API and git push (an App installation token, so pushes start CI). */
  githubToken: z.string().trim().min(1, "a token is required (see docs/WORKER.md)"),
  /** Digest of the approved task text (src/core/tasks/task-text.ts); empty: not checked (a run started by hand). */
  taskDigest: z
    .string()
    .trim()
    .transform((value) => (value === "" ? null : value))
    .pipe(z.string().regex(TASK_DIGEST_PATTERN, "expected 64 lowercase hex digits (a SHA-256)").nullable()),
  /**
   * Digest of the configuration the controller decided with (src/core/config/last-good-config.ts); the worker
   * runs under no other (src/worker/settings/worker-config.ts). Empty: a run started by hand.
   */
  configDigest: z
    .string()
    .trim()
    .transform((value) => (value === "" ? null : value))
    .pipe(z.string().regex(TASK_DIGEST_PATTERN, "expected 64 lowercase hex digits (a SHA-256)").nullable()),
  /** JSON overrides of .github/autopilot.yml. */
  config: z.string().default(""),
  /** Commit author. */
  gitUserName: z.string().trim().default(""),
  gitUserEmail: z.string().trim().default(""),
});

export type WorkerInput = z.output<typeof WorkerInputSchema>;

/** action.yml input name for each key. */
export const INPUT_NAMES: Record<keyof z.input<typeof WorkerInputSchema>, string> = {
  issue: "issue",
  attempt: "attempt",
  dispatchId: "dispatch-id",
  trackingIssue: "tracking-issue",
  taskDigest: "task-digest",
  configDigest: "config-digest",
  githubToken: "github-token",
  config: "config",
  gitUserName: "git-user-name",
  gitUserEmail: "git-user-email",
};

export class InputError extends Error {
  override readonly name = "InputError";
}

/** Reads and validates every input; `read` is core.getInput (or a fake). */
export function parseInputs(read: (name: string) => string): WorkerInput {
  const raw = Object.fromEntries(
    Object.entries(INPUT_NAMES).map(([key, name]) => [key, read(name) ?? ""]),
  ) as Record<keyof typeof INPUT_NAMES, string>;
  const parsed = WorkerInputSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "") as keyof typeof INPUT_NAMES;
    const name = INPUT_NAMES[key] ?? key;
    const value = key === "githubToken" ? "(hidden)" : JSON.stringify(raw[key] ?? "");
    return `Invalid input \`${name}\`: ${issue.message} (got ${value})`;
  });
  throw new InputError(problems.join("\n"), { cause: parsed.error });
}
