/**
 * `.github/autopilot.yml`: the zod schema of the whole file (every key optional, with a default and a
 * description), the types it gives, and the configuration with every default applied. The JSON Schema for
 * editors and docs/CONFIGURATION.md are generated from it by `scripts/gen-schema.ts`.
 */
import { z } from "zod";
import { MAX_ITERATIONS } from "../tasks/iteration-limit.js";
import { AlertsSchema } from "./alerts-schema.js";
import { EXPECTED } from "./config-constants.js";
import {
  type AgentObjectSchema,
  AgentsSchema,
  BudgetsSchema,
  HumanGateSchema,
  LabelsSchema,
  MergeSchema,
  CleanupSchema,
  DefinitionOfReadySchema,
  PlanGateSchema,
  BestOfSchema,
  EpicsSchema,
  WorkspacesSchema,
  nonBlank,
  PricesSchema,
  RateLimitSchema,
  ScoringSchema,
  SessionSchema,
} from "./config-section-schemas.js";
import { checkConfig } from "./cross-field-checks.js";
import { isPlainObject } from "./key-paths.js";
import { NetworkSchema } from "./network-schema.js";
import { QualitySchema } from "./quality-schema.js";
import { ReviewSchema } from "./review-schema.js";

/** A git branch-name prefix: no whitespace, control characters, `..`, `//`, `@{`, or any of ~^:?*[\ . */
const BRANCH_PREFIX = /^(?![/.-])(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[^\s~^:?*[\\\x00-\x1f\x7f]+$/;
const WORKFLOW_FILE = /^[A-Za-z0-9_][A-Za-z0-9._-]*\.ya?ml$/;

export const ConfigSchema = z
  .strictObject({
    labels: LabelsSchema,
    mode: z
      .enum(["auto", "semi-auto"])
      .default("auto")
      .describe(
        "`auto`: a running session dispatches the best-scored ready tasks into free slots by itself. " +
          "`semi-auto`: it starts no worker on its own (nor for a task back in the queue after a pause, a crash or " +
          "an answer); the dashboard names the task it would pick next and why, and a person with write access " +
          "starts a task with `/autopilot run #N`.",
      ),
    session: SessionSchema,
    maxParallel: z.int().min(1).max(20).default(2).describe("Most tasks worked on at the same time."),
    maxIterations: z
      .int()
      .min(1)
      .max(MAX_ITERATIONS)
      .default(50)
      .describe("Most agent iterations for one task before it ends with `timeout`."),
    timeoutMinutes: z
      .int()
      .min(1)
      .max(4320)
      .default(30)
      .describe(
        "Wall clock of one worker job, in minutes, before the task ends with `timeout`. GitHub-hosted runners " +
          "stop any job after 360.",
      ),
    iterationTimeoutMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(20)
      .describe(
        "Longest single agent run, in minutes; its whole process tree is killed after it. One iteration's " +
          "quality step (every command and re-run together) gets the same time.",
      ),
    stuckThreshold: z
      .int()
      .min(1)
      .max(100)
      .default(5)
      .describe("Iterations in a row without a new commit before a stuck warning."),
    stuckStopThreshold: z
      .int()
      .min(2)
      .max(200)
      .default(10)
      .describe(
        "Iterations in a row without a new commit before the task stops as `stuck` (> stuckThreshold).",
      ),
    maxIgnoredCompletionCycles: z
      .int()
      .min(1)
      .max(20)
      .default(5)
      .describe(
        "Most completion claims contradicted by failing quality commands before the test gate escalates: the " +
          "task goes to a person (`needs-human`) with the failing output. Before that, the failures go back to " +
          "the agent while what fails shrinks from one claim to the next (failing tests as the common runners " +
          "name them, or the failing commands); a claim meeting the same failures, or more, escalates at once. " +
          "1 escalates on the first such claim.",
      ),
    completion: z
      .enum(["promise", "objective"])
      .default("promise")
      .describe(
        "What ends a task as done. `promise`: the agent's `<promise>COMPLETE</promise>` and the quality " +
          "commands passing (none configured or detected: the PR's checks are the only gate). `objective`: " +
          "the agent's objective marker `<promise>OBJECTIVE_MET: …</promise>`, which names each requirement " +
          "of the issue and how the work meets it, and the quality commands passing; a plain COMPLETE (or the " +
          "marker with a blank statement) does " +
          "not end the task, and with no quality commands the task stops as blocked.",
      ),
    iterationDelayMs: z
      .int()
      .min(0)
      .max(3_600_000)
      .default(0)
      .describe(
        "Pause between one iteration and the next, in milliseconds (after the commit and push, before the " +
          "next agent run): spaces out an agent's API calls. Waits for rate limits come on top.",
      ),
    errorStrategy: z
      .enum(["retry", "skip", "abort"])
      .default("retry")
      .describe(
        "What a failed task leads to: `retry` it (up to maxRetries, with backoff), `skip` to the next task, " +
          "or `abort` the session.",
      ),
    maxRetries: z
      .int()
      .min(0)
      .max(20)
      .default(2)
      .describe("Retries of a failed task (errorStrategy `retry`)."),
    retryBaseMs: z
      .int()
      .min(0)
      .max(86_400_000)
      .default(60_000)
      .describe(
        "Re-dispatch delay of a retry is retryBaseMs × 2^attempt milliseconds, capped by retryMaxMs.",
      ),
    retryMaxMs: z
      .int()
      .min(0)
      .max(604_800_000)
      .default(3_600_000)
      .describe("Longest retry delay, in milliseconds (at least retryBaseMs)."),
    consecutiveErrorThreshold: z
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe("Failed tasks in a row that pause the session."),
    agents: AgentsSchema,
    recoverPrimary: z
      .boolean()
      .default(true)
      .describe(
        "After a rate or usage limit moved the job to a fallback agent, go back to the primary once its limit has lifted " +
          "(the reset time it printed, or rateLimit.maxWaitMs after the switch when it printed none), at the " +
          "next iteration of the same job. false keeps the fallback for the rest of the job.",
      ),
    rateLimit: RateLimitSchema,
    qualityCommands: z
      .union([z.literal("auto"), z.array(nonBlank("a shell command (not blank)")).min(1)])
      .default("auto")
      .meta({
        description:
          "Shell commands that must pass before a task counts as done (run in order, in the repository root), " +
          "or `auto` to detect them from the repository (package.json scripts, Makefile, …).",
        [EXPECTED]: '"auto" or a non-empty list of shell commands',
      }),
    quality: QualitySchema,
    workspaces: WorkspacesSchema,
    setup: z
      .array(nonBlank("a shell command (not blank)"))
      .default([])
      .meta({
        description:
          "Shell commands that prepare the work tree before the first iteration (`npm ci`, `pip install -r " +
          "requirements.txt`): run in order, in the repository root, inside the worker's sandbox as the agent's " +
          "user like the quality commands, never beside the job's secrets; the first that fails ends the job. " +
          "Only `.github/autopilot.yml` on the default branch can set it.",
        [EXPECTED]: "a list of shell commands",
      }),
    setupTimeoutMinutes: z
      .int()
      .min(1)
      .max(240)
      .default(20)
      .describe("Longest time the `setup` commands may take together, in minutes; then the job ends."),
    humanGate: HumanGateSchema,
    definitionOfReady: DefinitionOfReadySchema,
    planGate: PlanGateSchema,
    bestOf: BestOfSchema,
    review: ReviewSchema,
    merge: MergeSchema,
    cleanup: CleanupSchema,
    epics: EpicsSchema,
    budgets: BudgetsSchema,
    prices: PricesSchema,
    scoring: ScoringSchema,
    branchPrefix: z
      .string()
      .max(100)
      .regex(BRANCH_PREFIX)
      .default("autopilot/")
      .meta({
        description: "Task branches are named `<branchPrefix>issue-N`.",
        [EXPECTED]:
          "a git branch-name prefix such as `autopilot/`: no spaces, `..`, `//`, `@{` or any of `~^:?*[\\`, " +
          "not starting with `/`, `.` or `-`",
      }),
    workerWorkflow: z
      .string()
      .regex(WORKFLOW_FILE)
      .default("autopilot-worker.yml")
      .meta({
        description: "File name, in `.github/workflows/`, of the workflow that runs the worker.",
        [EXPECTED]: "a workflow file name such as `autopilot-worker.yml`",
      }),
    commits: z
      .enum(["unsigned", "signed"])
      .default("unsigned")
      .describe(
        "How the worker publishes the task branch's commits: `unsigned` (the default) pushes them with git; " +
          "`signed` creates them through GitHub's Git Database API as the App, so GitHub signs them and shows them " +
          "Verified, which a branch that requires signed commits accepts (docs/WORKER.md).",
      ),
    dryRun: z
      .boolean()
      .default(false)
      .describe(
        "Decide and report, but change nothing on GitHub (no labels, comments, dispatches or merges).",
      ),
    isolation: z
      .enum(["namespace", "uid", "none"])
      .default("namespace")
      .describe(
        "How the agent is kept away from the worker and the runner: `namespace` (the default) runs the agent, " +
          "the agent-side git and the quality commands in a bubblewrap sandbox (their own PID, mount and network " +
          "namespaces, the host read-only, the worker's files hidden) as a separate unprivileged OS user; `uid` " +
          "uses the separate user only (weaker: no namespace, the agent sees the host's processes and files its " +
          "user may read, and has the host's network); `none` runs them as the worker's own user, which can then " +
          "read the token. The worker refuses to start when the chosen wall is impossible (no bubblewrap or no " +
          "namespaces for `namespace`; no root and no password-less sudo for either). Only " +
          "`.github/autopilot.yml` on the default branch can set it.",
      ),
    network: NetworkSchema,
    alerts: AlertsSchema,
  })
  .superRefine(checkConfig, { when: (payload) => isPlainObject(payload.value) })
  .meta({
    title: "Autopilot configuration (.github/autopilot.yml)",
    description:
      "Configuration of Autopilot. Every key is optional; a missing file means all defaults. Reference: " +
      "docs/CONFIGURATION.md.",
  });

/** The configuration with every default applied. */
export type AutopilotConfig = z.output<typeof ConfigSchema>;
export type AgentConfig = z.output<typeof AgentObjectSchema>;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** All defaults (deeply frozen: copy before changing). */
export const DEFAULT_CONFIG: AutopilotConfig = deepFreeze(ConfigSchema.parse({}));

/**
 * Every agent the configuration may run: the primary, its fallbacks, best of N's candidates and the reviewer (the network
 * allow-list and the USD budget's reach cover them all).
 */
/** An agent as people read it: its preset, with its model when one is set (`codex (gpt-5-codex)`). */
export function agentLabel(agent: Pick<AgentConfig, "preset" | "model">): string {
  return agent.model ? `${agent.preset} (${agent.model})` : agent.preset;
}

export function everyAgent(config: Pick<AutopilotConfig, "agents" | "bestOf" | "review">): AgentConfig[] {
  const reviewer = config.review.agent ? [config.review.agent] : [];
  return [config.agents.primary, ...config.agents.fallbacks, ...config.bestOf.candidates, ...reviewer];
}
