/**
 * The scripted demo agent's contract. The agent itself is `demo-agent.mjs` beside this file: plain JavaScript,
 * so the worker can launch it from any workspace as a `custom` agent command without a build step:
 *
 *   node /abs/path/sandbox/scenario/agent/demo-agent.mjs --script /tmp/…/demo-script.json {prompt_file}
 *
 * The scenario runner writes the script (one entry per issue) outside the repository; the agent finds its
 * issue from the branch it runs on (`autopilot/issue-N`), then the prompt, and keeps a per-issue run counter
 * beside the script so "once" behaviours hold across jobs (each job starts from a fresh clone).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

export const DEMO_AGENT_PATH = join(dirname(fileURLToPath(import.meta.url)), "demo-agent.mjs");

export const DEMO_BEHAVIORS = [
  /** Edits `files` (and `append`) and signals COMPLETE. */
  "complete",
  /** Edits `files` like `complete`, then gives the objective marker with `objective` (`completion: objective`). */
  "objective",
  /** Writes `broken` and signals COMPLETE; the quality gate fails it. */
  "broken",
  /** First run writes `broken` and claims COMPLETE; the next run (with the failure in its prompt) fixes it. */
  "fail-gate-once",
  /** First run writes `broken` (passes the local gate, fails CI); runs that see a failure in the prompt fix it. */
  "ci-fix",
  /** Signals `BLOCKED: <reason>`. */
  "blocked",
  /** Asks `NEEDS_HUMAN: <question>` until the prompt contains `answerIncludes`, then completes. */
  "needs-human",
  /**
   * Works without a signal (a note per run, as `never-finish`) until the prompt contains `answerIncludes` — a
   * maintainer's comment written while it works — then writes `files` and completes.
   */
  "steered",
  /** Prints Claude Code's 429 text and exits 1. */
  "rate-limit",
  /** Prints a usage-limit message with a reset time `resetInSeconds` ahead and exits 1. */
  "usage-limit",
  /** Exits 1 with an error message. */
  "crash",
  /** Commits a note each run but never signals. */
  "never-finish",
  /** Changes nothing and never signals. */
  "idle",
  /** Never exits. */
  "hang",
  /** Touches gated paths (`gatedFiles`, default a migration) and completes; later runs revise them. */
  "gated",
  /**
   * Writes `files`, then reports usage (`spendPerStep`) every half second, as a CLI streams it per API call,
   * until the worker stops it at its budget; after 40 reports it completes.
   */
  "spend",
] as const;

export const DemoBehaviorSchema = z.enum(DEMO_BEHAVIORS);
export type DemoBehavior = z.infer<typeof DemoBehaviorSchema>;

/** Shorthands that expand to a sequence of behaviours, one per agent run (the last one repeats). */
export const DEMO_SHORTHANDS: Record<string, DemoBehavior[]> = {
  "rate-limit-once": ["rate-limit", "complete"],
  "usage-limit-once": ["usage-limit", "complete"],
  "crash-once": ["crash", "complete"],
};

const FilesSchema = z.record(z.string(), z.string().nullable());

export const DemoAgentEntrySchema = z
  .object({
    /** One behaviour, a shorthand, or a sequence (run i uses entry i; the last repeats). */
    behavior: z
      .union([z.string(), z.array(z.string()).min(1)])
      .default("complete")
      .transform((value, ctx) => {
        const list = Array.isArray(value) ? value : [value];
        const out: DemoBehavior[] = [];
        for (const name of list) {
          const expanded = DEMO_SHORTHANDS[name];
          if (expanded) out.push(...expanded);
          else if ((DEMO_BEHAVIORS as readonly string[]).includes(name)) out.push(name as DemoBehavior);
          else {
            ctx.addIssue({
              code: "custom",
              message: `unknown behavior "${name}"; expected one of ${[...DEMO_BEHAVIORS, ...Object.keys(DEMO_SHORTHANDS)].join(", ")}`,
            });
            return z.NEVER;
          }
        }
        return out;
      }),
    /** The issue's title: lets the agent find its entry from the prompt when the branch gives no number. */
    title: z.string().optional(),
    /** Files written by a completing run (path → content; null deletes). */
    files: FilesSchema.optional(),
    /** Files written (over `files`) by every run after the first: the revision a review asked for. */
    followUp: FilesSchema.optional(),
    /** Text appended to files by a completing run. */
    append: z.record(z.string(), z.string()).optional(),
    /** The broken variant for `broken`, `fail-gate-once` and `ci-fix`. */
    broken: FilesSchema.optional(),
    /** Gated files for `gated`. */
    gatedFiles: FilesSchema.optional(),
    /** Where a later run records a revision when its files change nothing. */
    revisionFile: z.string().optional(),
    reason: z.string().optional(),
    question: z.string().optional(),
    /** Text whose presence in the prompt means the human answered. */
    answerIncludes: z.string().optional(),
    /** Replaces the printed error for `rate-limit`, `usage-limit` and `crash` ({resetEpoch}, {resetIso}). */
    message: z.string().optional(),
    resetInSeconds: z.number().positive().optional(),
    /** The agent's final message before the signal. */
    summary: z.string().optional(),
    /** The statement of `objective`'s marker: how each requirement of the issue is met. */
    objective: z.string().min(1).optional(),
    /**
     * What a review run (`review`) answers: one verdict, or one per review run (the last repeats); the agent
     * prints it in a `<review>` block (src/core/agent/review-verdict.ts). Default: approve.
     */
    review: z
      .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())).min(1)])
      .optional(),
    /** The plan a planning run (the plan gate) proposes; a list: one per planning run, the last repeats. */
    plan: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    /**
     * The issues a splitting run's proposal (`/autopilot split`) will create, by title: the files each one's
     * completing run writes (the sub-issues are not seeded, so they have no entry of their own by number).
     */
    subIssues: z.record(z.string().min(1), z.strictObject({ files: FilesSchema })).optional(),
    /**
     * Per agent configuration (the `--agent NAME` it was started with): fields that replace the entry's for that
     * agent, such as best of N's candidates writing different files.
     */
    byAgent: z
      .record(
        z.string(),
        z.strictObject({
          files: FilesSchema.optional(),
          summary: z.string().optional(),
          broken: FilesSchema.optional(),
        }),
      )
      .optional(),
    /** Seconds every run takes before it acts, as a real agent thinks (lets a scenario act mid-iteration). */
    sleepSeconds: z.number().nonnegative().optional(),
    /** For `spend`: the usage of each report (`autopilot-usage`), default 20k in, 4k out, $0.12. */
    spendPerStep: z
      .strictObject({
        input: z.number().int().nonnegative(),
        output: z.number().int().nonnegative(),
        costUsd: z.number().nonnegative(),
      })
      .optional(),
  })
  .strict();
export type DemoAgentEntry = z.infer<typeof DemoAgentEntrySchema>;
export type DemoAgentEntryInput = z.input<typeof DemoAgentEntrySchema>;

export interface DemoAgentScript {
  /** Where per-issue run counters are kept. */
  stateDir: string;
  issues: Record<string, DemoAgentEntry>;
  default?: DemoAgentEntry;
  /** Entries of issues that are not seeded (a split's sub-issues), by a title the prompt holds. */
  byTitle?: Record<string, DemoAgentEntry>;
}

/** Writes the script the agent reads; returns its path. */
export function writeDemoScript(dir: string, issues: Record<number, DemoAgentEntry>): string {
  mkdirSync(dir, { recursive: true });
  // The worker runs the agent as an OS user of its own: it reads this script and keeps its run counts in state/.
  // The sandbox's concurrent jobs each take a user from a pool, so a task's next job may run as another user:
  // state/ is writable by all, without the sticky bit, so that user can replace the file (the agent writes it
  // through a rename).
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "state"), { recursive: true });
  chmodSync(join(dir, "state"), 0o777);
  const byTitle: Record<string, DemoAgentEntry> = {};
  for (const entry of Object.values(issues))
    for (const [title, sub] of Object.entries(entry.subIssues ?? {}))
      byTitle[title] = DemoAgentEntrySchema.parse({ behavior: "complete", title, files: sub.files });
  const script: DemoAgentScript = {
    stateDir: join(dir, "state"),
    issues: Object.fromEntries(Object.entries(issues)),
    ...(Object.keys(byTitle).length > 0 ? { byTitle } : {}),
  };
  const path = join(dir, "demo-script.json");
  writeFileSync(path, `${JSON.stringify(script, null, 2)}\n`);
  return path;
}

/** The `custom` agent command for `.github/autopilot.yml` (`{prompt_file}` is substituted by the worker). */
export function demoAgentCommand(scriptPath: string, nodePath = process.execPath): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return `${quote(nodePath)} ${quote(DEMO_AGENT_PATH)} --script ${quote(scriptPath)} {prompt_file}`;
}

export interface DemoAgentRunLog {
  at: string;
  /** The `--agent NAME` the run was started with (e.g. a fallback configuration), when given. */
  agent?: string;
  /** The prompt the run got (truncated at 40,000 characters). */
  prompt?: string;
  behavior?: string;
  signal?: string | null;
  error?: string;
  exitCode?: number;
  /** The run hung (its `hang` behavior): it never ends by itself. */
  hung?: boolean;
}

/** How many times the agent ran for an issue, and what each run did. */
export function readDemoAgentState(
  scriptPath: string,
  issue: number,
): { runs: number; log: DemoAgentRunLog[] } {
  const path = join(dirname(scriptPath), "state", `issue-${issue}.json`);
  if (!existsSync(path)) return { runs: 0, log: [] };
  try {
    return JSON.parse(readFileSync(path, "utf8")) as { runs: number; log: DemoAgentRunLog[] };
  } catch {
    return { runs: 0, log: [] };
  }
}
