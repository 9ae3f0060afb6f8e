/**
 * `.github/autopilot.yml`: the zod schema (every key optional, with a default and a description), parsing
 * with one error that lists every problem, workflow-input overrides, and the text that explains a bad file.
 *
 * Pure: the caller reads the file and passes its text (null when it does not exist). The JSON Schema for
 * editors and docs/CONFIGURATION.md are generated from this module by `scripts/gen-schema.ts`.
 */
import { markdownTable } from "markdown-table";
import { isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { compileGatePattern } from "./gate-pattern.js";

export const CONFIG_PATH = ".github/autopilot.yml";

/**
 * Agent presets. Each but `custom` names an agent CLI whose command line Autopilot knows; `custom` runs
 * `command` instead.
 */
export const AGENT_PRESETS = ["claude-code", "codex", "aider", "opencode", "gemini", "custom"] as const;
export type AgentPreset = (typeof AGENT_PRESETS)[number];

/** The placeholder a custom agent command must contain; it is replaced by the path of the prompt file. */
export const PROMPT_FILE_PLACEHOLDER = "{prompt_file}";

/**
 * Variable names the agent's env allow-list may not contain: the job's GitHub token is never passed to the
 * agent (docs/ARCHITECTURE.md, "Worker ↔ controller").
 */
export const FORBIDDEN_AGENT_ENV = [
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
] as const;

/** GitHub-hosted runners end a job after this many minutes. */
const HOSTED_RUNNER_JOB_LIMIT_MINUTES = 360;

/**
 * Meta key carrying how an error message phrases what a key expects, when the phrase generated from the
 * JSON Schema (type, bounds) would be unclear. Used internally; stripped from the published JSON Schema.
 */
const EXPECTED = "x-expected";

// ---------------------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------------------

const nonBlank = (expected: string) =>
  z
    .string()
    .regex(/\S/)
    .meta({ [EXPECTED]: expected });

const LABEL_EXPECTED = "a label name: not blank, at most 50 characters";
const label = (defaultName: string, meaning: string) =>
  z
    .string()
    .max(50)
    .regex(/\S/)
    .default(defaultName)
    .meta({ description: meaning, [EXPECTED]: LABEL_EXPECTED });

const LabelsSchema = z
  .strictObject({
    ready: label("autopilot:ready", "An open issue with this label is a task Autopilot may pick up."),
    inProgress: label("autopilot:in-progress", "A worker is running on the task."),
    review: label(
      "autopilot:review",
      "The task's pull request is open and waits for its checks, reviews and the human gate.",
    ),
    blocked: label("autopilot:blocked", "The task cannot go on without something outside Autopilot."),
    needsHuman: label(
      "autopilot:needs-human",
      "The agent asked a question, or the human gate needs a person's approval.",
    ),
    timeout: label("autopilot:timeout", "The task ran out of iterations or wall-clock time."),
    failed: label("autopilot:failed", "The task failed (after its retries)."),
    critical: label("critical", "Priority tag: adds `scoring.critical` to the task's score."),
    quickWin: label("quick-win", "Priority tag: adds `scoring.quickWin` to the task's score."),
    exclude: label("autopilot:exclude", "Autopilot never picks an issue with this label, even a ready one."),
  })
  .prefault({})
  .describe(
    "Label names. Labels carry each task's state on GitHub; a task has exactly one state label at a time. " +
      "Names must be distinct (GitHub compares them case-insensitively).",
  );

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const AgentObjectSchema = z
  .strictObject({
    preset: z
      .enum(AGENT_PRESETS)
      .default("claude-code")
      .describe("Which agent CLI runs: a preset Autopilot knows, or `custom` to run `command`."),
    model: nonBlank("a model name (not blank)")
      .nullable()
      .default(null)
      .describe("Model passed to the agent CLI; null uses the CLI's own default."),
    args: z.array(z.string()).default([]).describe("Extra command-line arguments for the agent CLI."),
    env: z
      .array(
        z
          .string()
          .regex(ENV_NAME)
          .meta({
            [EXPECTED]: "an environment variable name (letters, digits and _, not starting with a digit)",
          }),
      )
      .default([])
      .describe(
        "Allow-list of environment variable names passed to the agent (e.g. `ANTHROPIC_API_KEY`); every " +
          "other variable is withheld. The GitHub token can never be listed.",
      ),
    command: nonBlank(`a shell command containing ${PROMPT_FILE_PLACEHOLDER}`)
      .nullable()
      .default(null)
      .describe(
        `Shell command of a \`custom\` agent (required then, ignored otherwise). It must contain ` +
          `\`${PROMPT_FILE_PLACEHOLDER}\`, which is replaced by the path of a file holding the prompt; a tool ` +
          `that reads the prompt on stdin is written \`my-agent < ${PROMPT_FILE_PLACEHOLDER}\`.`,
      ),
  })
  .superRefine(checkAgent, { when: (payload) => isPlainObject(payload.value) });

const AGENTS_EXPECTED =
  "a list (at most 5) of agents, each a mapping with the same keys as `agents.primary`: preset, model, args, env, command";

const AgentsSchema = z
  .strictObject({
    primary: AgentObjectSchema.prefault({}).describe("The agent that works on every task."),
    fallbacks: z
      .array(AgentObjectSchema)
      .max(5)
      .default([])
      .meta({
        description:
          "Agents tried in order when the one before them keeps hitting rate limits; same keys as `primary`.",
        [EXPECTED]: AGENTS_EXPECTED,
      }),
  })
  .prefault({})
  .describe("The coding agents: a primary and ordered fallbacks.");

const RateLimitSchema = z
  .strictObject({
    retries: z
      .int()
      .min(0)
      .max(20)
      .default(3)
      .describe("Retries of an agent run after a rate limit, before switching to the next fallback agent."),
    baseMs: z
      .int()
      .min(0)
      .max(3_600_000)
      .default(5000)
      .describe("First wait after a rate limit, in milliseconds."),
    factor: z
      .number()
      .min(1)
      .max(10)
      .default(3)
      .describe("Each further wait is the previous one times this factor."),
    maxWaitMs: z
      .int()
      .min(0)
      .max(86_400_000)
      .default(300_000)
      .describe("Longest single wait, in milliseconds (at least `baseMs`)."),
    usageLimitWaitMs: z
      .int()
      .min(60_000)
      .max(7 * 86_400_000)
      .default(3_600_000)
      .describe(
        "When an agent reports a usage limit (a plan's window) without saying when it resets: how long to assume, " +
          "in milliseconds. The task resumes after it; the reason shown says it was assumed.",
      ),
  })
  .prefault({})
  .describe(
    "Backoff when an agent reports a rate limit: waits of baseMs × factor^retry, capped at maxWaitMs.",
  );

const HumanGateSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        "Check each task's diff, touched paths and agent commands against the gate rules. When false, only " +
          "the built-in never-auto-approve rules still fire: they cannot be turned off.",
      ),
    patterns: z
      .array(
        nonBlank("a regular expression in RE2 syntax (not blank)").superRefine((source, ctx) => {
          // Compiled with a linear-time engine: agent-written text can never make a pattern backtrack.
          const compiled = compileGatePattern(source);
          if (!compiled.ok) {
            ctx.addIssue({
              code: "custom",
              message: `pattern not accepted: ${compiled.reason}`,
              input: source,
              params: {
                expected: `a regular expression the linear-time (RE2) engine accepts: ${compiled.reason}; write ${compiled.instead}`,
              },
            });
          }
        }),
      )
      .default([])
      .describe(
        "Extra regular expressions (RE2 syntax: no lookarounds or backreferences; no slashes) matched " +
          "case-insensitively against the diff and the commands the agent ran, in linear time; a match needs " +
          "a person's approval before merging. Added to the built-in rules.",
      ),
    paths: z
      .array(nonBlank("a glob pattern such as `infra/**` (not blank)"))
      .default([])
      .describe("Extra glob patterns (e.g. `infra/**`) of touched paths that need a person's approval."),
  })
  .prefault({})
  .describe("The human gate: changes that need a person's approval before their pull request merges.");

const MergeSchema = z
  .strictObject({
    auto: z
      .boolean()
      .default(true)
      .describe("Merge a task's pull request once every gate passes; false leaves the merge to a person."),
    method: z.enum(["merge", "squash", "rebase"]).default("squash").describe("How pull requests are merged."),
    requiredChecks: z
      .array(nonBlank("a check name (not blank)"))
      .default([])
      .describe("Names of the checks that must pass before merging; empty means every check on the PR."),
    deleteBranch: z.boolean().default(true).describe("Delete the task branch after merging."),
    checksTimeoutMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(20)
      .describe("How long to wait for the pull request's checks to finish."),
    maxFeedbackRounds: z
      .int()
      .min(0)
      .max(20)
      .default(3)
      .describe(
        "How many times failing checks, requested changes or merge conflicts send a task back to a worker.",
      ),
  })
  .prefault({})
  .describe("Merging a task's pull request.");

const tokenBudget = (scope: string) =>
  z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe(`Most tokens (input + output) ${scope}; null means no limit.`);
const usdBudget = (scope: string) =>
  z
    .number()
    .positive()
    .nullable()
    .default(null)
    .describe(`Most US dollars of agent cost ${scope}; null means no limit.`);

const BudgetsSchema = z
  .strictObject({
    task: z
      .strictObject({ tokens: tokenBudget("one task may use"), usd: usdBudget("one task may use") })
      .prefault({})
      .describe("Budget of one task; a task that exceeds it ends with `budget_exceeded`."),
    session: z
      .strictObject({
        tokens: tokenBudget("a whole session may use"),
        usd: usdBudget("a whole session may use"),
      })
      .prefault({})
      .describe("Budget of a whole session."),
  })
  .prefault({})
  .describe("Token and cost budgets.");

const PRICES_EXPECTED = "a list (at most 100) of { model, input, output }: US dollars per million tokens";

const PricesSchema = z
  .array(
    z.strictObject({
      model: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .describe("A model name, as given to the agent or as its CLI reports it."),
      input: z.number().min(0).max(10_000).describe("US dollars per million input tokens."),
      output: z.number().min(0).max(10_000).describe("US dollars per million output tokens."),
    }),
  )
  .max(100)
  .default([])
  .meta({
    description:
      "Prices of models in US dollars per million tokens, `{ model, input, output }` each: they price the tokens of " +
      "agents whose CLI reports no cost (Codex, Gemini CLI; OpenCode for a model it does not know), over the " +
      "built-in table of list prices (docs/WORKER.md). A model neither knows cannot be held to a USD budget.",
    [EXPECTED]: PRICES_EXPECTED,
  });

const weight = (defaultValue: number, meaning: string) =>
  z.number().min(0).max(1000).default(defaultValue).describe(meaning);

const ScoringSchema = z
  .strictObject({
    unblocks: weight(10, "Points per open issue that finishing this task unblocks."),
    critical: weight(50, "Points for the `critical` label."),
    quickWin: weight(30, "Points for the `quick-win` label."),
    nearCompleteParent: weight(20, "Points when more than half of the parent issue's sub-issues are done."),
    retryPenalty: weight(15, "Points taken off per earlier attempt at the task."),
  })
  .prefault({})
  .describe("Weights of the task score; the highest score is picked next, ties go to the oldest issue.");

/** A git branch-name prefix: no whitespace, control characters, `..`, `//`, `@{`, or any of ~^:?*[\ . */
const BRANCH_PREFIX = /^(?![/.-])(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[^\s~^:?*[\\\x00-\x1f\x7f]+$/;
const WORKFLOW_FILE = /^[A-Za-z0-9_][A-Za-z0-9._-]*\.ya?ml$/;

export const ConfigSchema = z
  .strictObject({
    labels: LabelsSchema,
    maxParallel: z.int().min(1).max(20).default(2).describe("Most tasks worked on at the same time."),
    maxIterations: z
      .int()
      .min(1)
      .max(500)
      .default(25)
      .describe("Most agent iterations for one task before it ends with `timeout`."),
    timeoutMinutes: z
      .int()
      .min(1)
      .max(4320)
      .default(60)
      .describe(
        "Wall clock of one worker job, in minutes, before the task ends with `timeout`. GitHub-hosted runners " +
          "stop any job after 360.",
      ),
    iterationTimeoutMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(20)
      .describe("Longest single agent run, in minutes; its whole process tree is killed after it."),
    stuckThreshold: z
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe("Iterations in a row without a new commit before a stuck warning."),
    stuckStopThreshold: z
      .int()
      .min(2)
      .max(200)
      .default(6)
      .describe(
        "Iterations in a row without a new commit before the task stops as `stuck` (> stuckThreshold).",
      ),
    maxIgnoredCompletionCycles: z
      .int()
      .min(1)
      .max(20)
      .default(2)
      .describe(
        "COMPLETE claims contradicted by failing quality gates that are tolerated before the task stops " +
          "with `contradiction`.",
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
    humanGate: HumanGateSchema,
    merge: MergeSchema,
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
    dryRun: z
      .boolean()
      .default(false)
      .describe(
        "Decide and report, but change nothing on GitHub (no labels, comments, dispatches or merges).",
      ),
    isolation: z
      .enum(["user", "none"])
      .default("user")
      .describe(
        "How the agent is kept away from the worker's token: `user` runs the agent and the quality commands as " +
          "a separate unprivileged OS user (the worker refuses to start where that is impossible: no root and " +
          "no password-less sudo); `none` runs them as the worker's own user, which can then read the token. " +
          "Only `.github/autopilot.yml` on the default branch can set it.",
      ),
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
/** What a user may write (every key optional). */
export type AutopilotConfigInput = z.input<typeof ConfigSchema>;
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

// ---------------------------------------------------------------------------------------------------------
// Cross-field checks (run even when other keys are invalid, so one error lists every problem)
// ---------------------------------------------------------------------------------------------------------

type Path = (string | number)[];
type Ctx = z.core.$RefinementCtx<unknown>;

/** True when some earlier issue is at `path` or inside it: then its value is not trusted for comparisons. */
function hasIssueAt(ctx: Ctx, path: Path): boolean {
  return ctx.issues.some((issue) => path.every((segment, i) => issue.path?.[i] === segment));
}

function crossIssue(ctx: Ctx, path: Path, input: unknown, message: string, expected: string): void {
  // zod drops `input` from finished issues; `params.value` keeps the value for "found … , the default".
  ctx.addIssue({ code: "custom", path, input, message, params: { expected, value: input } });
}

function checkAgent(agent: unknown, ctx: Ctx): void {
  if (!isPlainObject(agent)) return;
  const { preset, command, env } = agent;
  if (preset === "custom" && !hasIssueAt(ctx, ["preset"]) && !hasIssueAt(ctx, ["command"])) {
    if (typeof command !== "string" || !command.includes(PROMPT_FILE_PLACEHOLDER)) {
      crossIssue(
        ctx,
        ["command"],
        command,
        `preset \`custom\` needs a command containing ${PROMPT_FILE_PLACEHOLDER}`,
        `a shell command containing ${PROMPT_FILE_PLACEHOLDER} (required by preset "custom")`,
      );
    }
  }
  if (Array.isArray(env)) {
    env.forEach((name, i) => {
      if (
        typeof name === "string" &&
        (FORBIDDEN_AGENT_ENV as readonly string[]).includes(name.toUpperCase())
      ) {
        crossIssue(
          ctx,
          ["env", i],
          name,
          `${name} may not be passed to the agent`,
          `a variable name other than ${FORBIDDEN_AGENT_ENV.join(", ")} (the GitHub token is never passed to the agent)`,
        );
      }
    });
  }
}

function checkConfig(config: unknown, ctx: Ctx): void {
  if (!isPlainObject(config)) return;
  /** The value at `path` when it is a number with no issue of its own. */
  const num = (path: Path): number | null => {
    const value = getAt(config, path);
    return typeof value === "number" && !hasIssueAt(ctx, path) ? value : null;
  };
  const ordered = (low: Path, high: Path, strict: boolean) => {
    const lo = num(low);
    const hi = num(high);
    if (lo === null || hi === null || (strict ? hi > lo : hi >= lo)) return;
    const lowName = formatPath(low);
    crossIssue(
      ctx,
      high,
      hi,
      `${formatPath(high)} must be ${strict ? "greater than" : "at least"} ${lowName}`,
      `an integer ${strict ? "greater than" : "≥"} ${lowName} (${lo})`,
    );
  };
  ordered(["stuckThreshold"], ["stuckStopThreshold"], true);
  ordered(["retryBaseMs"], ["retryMaxMs"], false);
  ordered(["rateLimit", "baseMs"], ["rateLimit", "maxWaitMs"], false);

  const labels = config.labels;
  if (isPlainObject(labels)) {
    const seen = new Map<string, string>();
    for (const [key, name] of Object.entries(labels)) {
      if (typeof name !== "string" || hasIssueAt(ctx, ["labels", key])) continue;
      const normalized = name.trim().toLowerCase();
      const first = seen.get(normalized);
      if (first === undefined) {
        seen.set(normalized, key);
        continue;
      }
      crossIssue(
        ctx,
        ["labels", key],
        name,
        `labels.${key} is the same label as labels.${first}`,
        `a label name different from labels.${first} (names are compared case-insensitively)`,
      );
    }
  }
}

/** The reason a regex source does not compile, or null. Compiled without flags, as the gate matcher does. */
/** Non-fatal remarks about a valid configuration. */
export function configWarnings(config: AutopilotConfig): string[] {
  const warnings: string[] = [];
  if (config.timeoutMinutes > HOSTED_RUNNER_JOB_LIMIT_MINUTES) {
    warnings.push(
      `timeoutMinutes is ${config.timeoutMinutes}, but GitHub-hosted runners stop a job after ` +
        `${HOSTED_RUNNER_JOB_LIMIT_MINUTES} minutes; only self-hosted runners allow more.`,
    );
  }
  if (config.iterationTimeoutMinutes > config.timeoutMinutes) {
    warnings.push(
      `iterationTimeoutMinutes (${config.iterationTimeoutMinutes}) is longer than timeoutMinutes ` +
        `(${config.timeoutMinutes}): the job's wall clock will end a long iteration first.`,
    );
  }
  const agents: [string, AgentConfig][] = [
    ["agents.primary", config.agents.primary],
    ...config.agents.fallbacks.map((agent, i): [string, AgentConfig] => [`agents.fallbacks[${i}]`, agent]),
  ];
  for (const [path, agent] of agents) {
    if (agent.preset !== "custom" && agent.command !== null) {
      warnings.push(
        `${path}.command is ignored: it is used only with preset "custom" (preset is "${agent.preset}").`,
      );
    }
  }
  for (const unit of ["tokens", "usd"] as const) {
    const task = config.budgets.task[unit];
    const session = config.budgets.session[unit];
    if (task !== null && session !== null && task > session) {
      warnings.push(`budgets.task.${unit} (${task}) is larger than budgets.session.${unit} (${session}).`);
    }
  }
  return warnings;
}

// ---------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------

export interface ConfigProblem {
  /** Key path such as `merge.method` or `agents.fallbacks[0].preset`; "" for the file as a whole. */
  path: string;
  /** What was found: the value and its type, truncated. */
  found: string;
  /** What is expected, e.g. `one of "merge", "squash", "rebase"` or `an integer from 1 to 20`. */
  expected: string;
  /** One line for people: path (and line), found, expected. */
  message: string;
  /** 1-based line in the file, when known. */
  line?: number;
  /** 1-based column in the file, when known. */
  column?: number;
}

/** A bad configuration: every problem at once. `cause` keeps the ZodError (or the YAML error). */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: ConfigProblem[];
  /** Where the configuration came from, e.g. `.github/autopilot.yml`. */
  readonly source: string;

  constructor(source: string, problems: ConfigProblem[], options?: { cause?: unknown }) {
    super(
      [`Invalid config in ${source}:`, ...problems.map((problem) => `- ${problem.message}`)].join("\n"),
      options,
    );
    this.source = source;
    this.problems = problems;
  }
}

export type ConfigResult =
  | { ok: true; config: AutopilotConfig; warnings: string[] }
  | { ok: false; error: ConfigError };

const FOUND_MAX = 40;

function truncate(text: string, max = FOUND_MAX): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Array.isArray(value) ? "[…]" : "{…}";
  }
}

/** `"sqash" (string)`, `0 (number)`, `[1,2] (list)`, `null`, `nothing`. */
function describeFound(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return value === "" ? '"" (empty string)' : `${truncate(JSON.stringify(value))} (string)`;
    case "number":
    case "bigint":
      return `${String(value)} (number)`;
    case "boolean":
      return `${value} (boolean)`;
  }
  if (Array.isArray(value)) return `${truncate(safeJson(value))} (list)`;
  if (isPlainObject(value)) return `${truncate(safeJson(value))} (mapping)`;
  return Object.prototype.toString.call(value).slice(8, -1);
}

/** `merge.method`, `agents.fallbacks[0].preset`, `labels["odd key"]`. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

function problemMessage(path: string, where: Location | undefined, found: string, expected: string): string {
  return `${path ? `\`${path}\`` : "(top level)"}${where ? ` (line ${where.line})` : ""}: found ${found}; expected ${expected}`;
}

// ---- JSON Schema walking: what a key expects, in words ---------------------------------------------------

type JsonNode = { [key: string]: unknown };

function asNode(value: unknown): JsonNode | undefined {
  return isPlainObject(value) ? value : undefined;
}

function schemaAt(root: JsonNode, path: readonly PropertyKey[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const segment of path) {
    node = node ? stepInto(node, segment) : undefined;
  }
  return node;
}

function stepInto(node: JsonNode, segment: PropertyKey): JsonNode | undefined {
  if (Array.isArray(node.anyOf)) {
    for (const alternative of node.anyOf) {
      const alt = asNode(alternative);
      const inner = alt ? stepInto(alt, segment) : undefined;
      if (inner) return inner;
    }
    return undefined;
  }
  if (typeof segment === "number") return asNode(node.items);
  const properties = asNode(node.properties);
  return properties && Object.hasOwn(properties, String(segment))
    ? asNode(properties[String(segment)])
    : undefined;
}

function bounds(noun: string, node: JsonNode): string {
  const min =
    typeof node.minimum === "number" && node.minimum > Number.MIN_SAFE_INTEGER ? node.minimum : undefined;
  const exclusiveMin = typeof node.exclusiveMinimum === "number" ? node.exclusiveMinimum : undefined;
  // zod writes ±MAX_SAFE_INTEGER as the bounds of an int without its own: not worth saying.
  const max =
    typeof node.maximum === "number" && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
  if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(`≥ ${min}`);
  if (exclusiveMin !== undefined) parts.push(`> ${exclusiveMin}`);
  if (max !== undefined) parts.push(`≤ ${max}`);
  return parts.length ? `${noun} ${parts.join(" and ")}` : noun;
}

/** What a JSON Schema node accepts, in words: `an integer from 1 to 20`, `one of "a", "b"`, … */
function describeSchemaNode(node: JsonNode): string {
  if (typeof node[EXPECTED] === "string") return node[EXPECTED];
  if (Array.isArray(node.anyOf)) {
    const alternatives = node.anyOf.map((alt) => describeSchemaNode(asNode(alt) ?? {}));
    return [...new Set(alternatives)].join(" or ");
  }
  if (Array.isArray(node.enum)) {
    const values = node.enum.map((value) => JSON.stringify(value));
    return values.length === 1 ? values[0]! : `one of ${values.join(", ")}`;
  }
  if ("const" in node) return JSON.stringify(node.const);
  switch (node.type) {
    case "null":
      return "null";
    case "boolean":
      return "true or false";
    case "integer":
      return bounds("an integer", node);
    case "number":
      return bounds("a number", node);
    case "string": {
      const max = typeof node.maxLength === "number" ? ` of at most ${node.maxLength} characters` : "";
      if (typeof node.pattern === "string") return `a string matching /${node.pattern}/${max}`;
      return typeof node.minLength === "number" && node.minLength > 0
        ? `a non-empty string${max}`
        : `a string${max}`;
    }
    case "array": {
      const size: string[] = [];
      if (typeof node.minItems === "number" && node.minItems > 0) size.push(`at least ${node.minItems}`);
      if (typeof node.maxItems === "number") size.push(`at most ${node.maxItems}`);
      const items = asNode(node.items);
      const each = items ? `; each ${describeSchemaNode(items)}` : "";
      return `a list${size.length ? ` (${size.join(", ")} items)` : ""}${each}`;
    }
    case "object": {
      const keys = Object.keys(asNode(node.properties) ?? {});
      return keys.length ? `a mapping with the keys ${keys.join(", ")}` : "a mapping";
    }
    default:
      return "a valid value";
  }
}

// ---- unknown keys: "did you mean …?" ----------------------------------------------------------------------

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

function isClose(unknownKey: string, known: string): number | null {
  const a = normalizeKey(unknownKey);
  const b = normalizeKey(known);
  if (a === b) return 0;
  const limit = b.length <= 4 ? 1 : b.length <= 8 ? 2 : 3;
  const distance = editDistance(a, b);
  if (distance <= limit) return distance;
  if (a.length >= 4 && b.startsWith(a)) return limit + 1; // `timeout` → `timeoutMinutes`
  return null;
}

/** Every key path in the schema (not inside lists), e.g. ["merge", "method"]. */
function allKeyPaths(node: JsonNode, prefix: string[] = []): string[][] {
  const properties = asNode(node.properties);
  if (!properties) return [];
  return Object.entries(properties).flatMap(([key, child]) => [
    [...prefix, key],
    ...allKeyPaths(asNode(child) ?? {}, [...prefix, key]),
  ]);
}

/** The known key a typo most likely meant: a sibling first, else the same name elsewhere in the file. */
function suggestKey(parentPath: readonly PropertyKey[], unknownKey: string): string | null {
  const root = internalJsonSchema();
  const siblings = Object.keys(asNode(schemaAt(root, parentPath)?.properties) ?? {});
  let best: { key: string; distance: number } | null = null;
  for (const key of siblings) {
    const distance = isClose(unknownKey, key);
    if (distance !== null && (best === null || distance < best.distance)) best = { key, distance };
  }
  if (best) return formatPath([...parentPath, best.key]);
  if (parentPath.some((segment) => typeof segment === "number")) return null;
  const parent = parentPath.map(String).join(".");
  for (const path of allKeyPaths(root)) {
    if (path.slice(0, -1).join(".") === parent) continue;
    if (isClose(unknownKey, path[path.length - 1]!) === 0) return formatPath(path);
  }
  return null;
}

// ---- issues → problems ---------------------------------------------------------------------------------

interface Location {
  line: number;
  column: number;
}
/** Finds where a key path is in the source text (for a key: the key itself; else its value). */
type Locate = (path: readonly PropertyKey[], atKey: boolean) => Location | undefined;

function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") {
      if (segment >= current.length) return false;
      current = current[segment];
    } else if (isPlainObject(current) && Object.hasOwn(current, String(segment))) {
      current = current[String(segment)];
    } else return false;
  }
  return true;
}

function getAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isPlainObject(current) && Object.hasOwn(current, String(segment)))
      current = current[String(segment)];
    else return undefined;
  }
  return current;
}

function withLocation(problem: Omit<ConfigProblem, "message">, where: Location | undefined): ConfigProblem {
  const message = problemMessage(problem.path, where, problem.found, problem.expected);
  return where ? { ...problem, message, line: where.line, column: where.column } : { ...problem, message };
}

function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  locate: Locate,
): ConfigProblem[] {
  const root = internalJsonSchema();
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  const add = (problem: ConfigProblem) => {
    const key = `${problem.path}\u0000${problem.expected}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push(problem);
  };

  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const keyPath = [...issue.path, key];
        const suggestion = suggestKey(issue.path, key);
        const known = Object.keys(asNode(schemaAt(root, issue.path)?.properties) ?? {});
        const expected = suggestion
          ? `a known key: did you mean \`${suggestion}\`?`
          : known.length <= 10
            ? `one of the keys ${known.join(", ")}`
            : "a key listed in docs/CONFIGURATION.md";
        const path = formatPath(keyPath);
        const where = locate(keyPath, true);
        const found = `unknown key ${JSON.stringify(truncate(key))}`;
        const message = `${path ? `\`${path}\`` : "(top level)"}${where ? ` (line ${where.line})` : ""}: unknown key${
          suggestion ? `, did you mean \`${suggestion}\`?` : ` (expected ${expected})`
        }`;
        add(
          where
            ? { path, found, expected, message, line: where.line, column: where.column }
            : { path, found, expected, message },
        );
      }
      continue;
    }
    const path = formatPath(issue.path);
    const params = issue.code === "custom" ? asNode(issue.params) : undefined;
    let found: string;
    if (hasPath(input, issue.path)) found = describeFound(getAt(input, issue.path));
    else if (params && "value" in params && params.value !== undefined) {
      found = `${describeFound(params.value)}, the default`;
    } else found = "nothing";

    let expected: string;
    if (params && typeof params.expected === "string") expected = params.expected;
    else {
      const node = schemaAt(root, issue.path);
      expected = node ? describeSchemaNode(node) : issue.message;
    }
    add(withLocation({ path, found, expected }, locate(issue.path, false)));
  }
  // File order when lines are known (stable: problems without a line keep their place after those with one).
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort(
      (a, b) =>
        (a.problem.line ?? Number.MAX_SAFE_INTEGER) - (b.problem.line ?? Number.MAX_SAFE_INTEGER) ||
        (a.problem.column ?? 0) - (b.problem.column ?? 0) ||
        a.index - b.index,
    )
    .map(({ problem }) => problem);
}

// ---------------------------------------------------------------------------------------------------------
// Parsing, overrides
// ---------------------------------------------------------------------------------------------------------

const noLocation: Locate = () => undefined;

function validate(input: unknown, source: string, locate: Locate): ConfigResult {
  const result = ConfigSchema.safeParse(input);
  if (result.success) return { ok: true, config: result.data, warnings: configWarnings(result.data) };
  const problems = problemsFromIssues(result.error.issues, input, locate);
  return { ok: false, error: new ConfigError(source, problems, { cause: result.error }) };
}

function defaults(warnings: string[] = []): ConfigResult {
  return { ok: true, config: ConfigSchema.parse({}), warnings };
}

/**
 * Parses and validates the text of `.github/autopilot.yml`. `null` (no file), empty text or a document with
 * only comments means all defaults. Never throws.
 */
export function parseConfig(text: string | null, path: string = CONFIG_PATH): ConfigResult {
  if (text === null || text.trim() === "") return defaults();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number): Location => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const sourceLines = text.split(/\r?\n/);

  if (doc.errors.length > 0) {
    const problems = doc.errors.map((error): ConfigProblem => {
      const where = position(error.pos[0]);
      const lineText = sourceLines[where.line - 1]?.trim() ?? "";
      const found = lineText
        ? `line ${where.line}: ${JSON.stringify(truncate(lineText))}`
        : `line ${where.line}`;
      const expected = `valid YAML (${error.message})`;
      const message = `YAML syntax error at line ${where.line}, column ${where.column}: ${error.message}`;
      return { path: "", found, expected, message, line: where.line, column: where.column };
    });
    return { ok: false, error: new ConfigError(path, problems, { cause: doc.errors[0] }) };
  }
  const warnings = doc.warnings.map((warning) => {
    const where = position(warning.pos[0]);
    return `${path} line ${where.line}: ${warning.message}`;
  });

  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const problem: ConfigProblem = {
      path: "",
      found: "a document that cannot be read",
      expected: "valid YAML",
      message: `YAML could not be read: ${reason}`,
    };
    return { ok: false, error: new ConfigError(path, [problem], { cause: error }) };
  }
  if (input === null || input === undefined) return defaults(warnings);
  if (!isPlainObject(input)) return rootNotMapping(input, path, {});

  const locate: Locate = (keyPath, atKey) => {
    // Falls back to the nearest enclosing key that is in the file (never to the whole document).
    for (let depth = keyPath.length; depth >= 1; depth--) {
      const prefix = keyPath.slice(0, depth);
      if (atKey && depth === keyPath.length && prefix.length > 0) {
        const parent = prefix.length === 1 ? doc.contents : doc.getIn(prefix.slice(0, -1), true);
        if (isMap(parent)) {
          const key = String(prefix[prefix.length - 1]);
          const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
          const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
          if (range) return position(range[0]);
        }
        continue;
      }
      const node = doc.getIn(prefix, true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return position(range[0]);
    }
    return undefined;
  };
  const result = validate(input, path, locate);
  return result.ok ? { ...result, warnings: [...warnings, ...result.warnings] } : result;
}

function rootNotMapping(input: unknown, source: string, options: { cause?: unknown }): ConfigResult {
  const found = describeFound(input);
  const expected = "a mapping of settings (`key: value` lines)";
  const problem: ConfigProblem = {
    path: "",
    found,
    expected,
    message: problemMessage("", undefined, found, expected),
  };
  return { ok: false, error: new ConfigError(source, [problem], options) };
}

/** Objects merge key by key; anything else (lists included) replaces. Safe against `__proto__` keys. */
function deepMerge(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const merged = new Map<string, unknown>(Object.entries(base));
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    merged.set(key, Object.hasOwn(base, key) ? deepMerge(base[key], value) : value);
  }
  return Object.fromEntries(merged);
}

/**
 * Applies overrides (the `config` input of a workflow_dispatch or of the worker action) on top of a
 * configuration: a JSON object string or an object, deep-merged (lists replace), then validated as a whole.
 * Empty or absent overrides return the configuration unchanged. Never throws.
 */
export function applyConfigOverrides(
  config: AutopilotConfig,
  overrides: unknown,
  source = "config overrides",
): ConfigResult {
  let value = overrides;
  if (value === undefined || value === null || (typeof value === "string" && value.trim() === "")) {
    return { ok: true, config, warnings: [] };
  }
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const found = describeFound(overrides);
      const expected = "a JSON object";
      const problem: ConfigProblem = {
        path: "",
        found,
        expected,
        message: `not valid JSON (${reason}): found ${found}; expected ${expected}`,
      };
      return { ok: false, error: new ConfigError(source, [problem], { cause: error }) };
    }
  }
  if (!isPlainObject(value)) return rootNotMapping(value, source, {});
  return validate(deepMerge(config, value), source, noLocation);
}

// ---------------------------------------------------------------------------------------------------------
// Markdown for the tracking issue
// ---------------------------------------------------------------------------------------------------------

/** Escapes text for a markdown table cell: no markup, mentions, HTML or hidden markers survive. */
function escapeCell(text: string): string {
  return text.replace(/[^A-Za-z0-9 .,;:=+\-/()'"?≥≤…]/gu, (char) => `&#${char.codePointAt(0)};`);
}

/** Cell text where `code` spans of plain identifiers stay code spans and everything else is escaped. */
function cell(text: string): string {
  return text
    .split(/(`[^`\n]*`)/)
    .map((part) => (/^`[^`<|\n]+`$/.test(part) ? part : escapeCell(part)))
    .join("");
}

const MAX_ROWS = 50;

/** Markdown explaining a bad configuration, for the tracking issue. */
export function renderConfigError(error: ConfigError): string {
  const problems = error.problems;
  const withLines = problems.some((problem) => problem.line !== undefined);
  const header = withLines ? ["Key", "Line", "Found", "Expected"] : ["Key", "Found", "Expected"];
  const rows = problems.slice(0, MAX_ROWS).map((problem) => {
    const key = !problem.path
      ? "(file)"
      : /^[^`<|\n]+$/.test(problem.path)
        ? `\`${problem.path}\``
        : escapeCell(problem.path);
    const line = problem.line === undefined ? "" : String(problem.line);
    const found = cell(problem.found);
    const expected = cell(problem.expected);
    return withLines ? [key, line, found, expected] : [key, found, expected];
  });
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const more = problems.length > MAX_ROWS ? `\n\n…and ${problems.length - MAX_ROWS} more.` : "";
  return [
    `### ⚠️ Invalid config in ${cell(`\`${error.source}\``)}`,
    "",
    `Autopilot found ${count}:`,
    "",
    markdownTable([header, ...rows], { alignDelimiters: false }) + more,
    "",
    "Every key, its type and its default are listed in Autopilot's `docs/CONFIGURATION.md`.",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------
// JSON Schema and the reference table
// ---------------------------------------------------------------------------------------------------------

let internalSchemaCache: JsonNode | undefined;

/** JSON Schema including the internal `x-expected` phrases (for error messages and the reference). */
function internalJsonSchema(): JsonNode {
  internalSchemaCache ??= z.toJSONSchema(ConfigSchema, { io: "input", target: "draft-7" }) as JsonNode;
  return internalSchemaCache;
}

/** The JSON Schema published for editors (draft-07; what a user may write). */
export function configJsonSchema(): JsonNode {
  return z.toJSONSchema(ConfigSchema, {
    io: "input",
    target: "draft-7",
    override: (ctx) => {
      delete (ctx.jsonSchema as JsonNode)[EXPECTED];
    },
  }) as JsonNode;
}

export interface ConfigReferenceRow {
  /** Key path, e.g. `merge.method`. */
  path: string;
  /** What it accepts, e.g. `one of "merge", "squash", "rebase"`. */
  type: string;
  /** The default as JSON, e.g. `"squash"`. */
  default: string;
  description: string;
}

/**
 * One row per key in schema order: a mapping gets a row (type "a mapping") followed by rows for its keys;
 * a list is one row.
 */
export function configReference(): ConfigReferenceRow[] {
  const rows: ConfigReferenceRow[] = [];
  const walk = (node: JsonNode, prefix: string[]) => {
    for (const [key, child] of Object.entries(asNode(node.properties) ?? {})) {
      const childNode = asNode(child) ?? {};
      const path = [...prefix, key];
      const description = typeof childNode.description === "string" ? childNode.description : "";
      if (childNode.type === "object" && asNode(childNode.properties)) {
        rows.push({ path: formatPath(path), type: "a mapping", default: "", description });
        walk(childNode, path);
        continue;
      }
      const type = describeSchemaNode(childNode);
      rows.push({
        path: formatPath(path),
        type,
        default: JSON.stringify(getAt(DEFAULT_CONFIG, path)),
        description,
      });
    }
  };
  walk(internalJsonSchema(), []);
  return rows;
}

// ---------------------------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
