/**
 * The schemas of the configuration's sections (labels, agents, rate limits, human gate, merge, budgets,
 * prices, scoring). config-schema.ts puts them together with the top-level keys.
 */
import { z } from "zod";
import { compileGatePattern } from "../gates/gate-pattern.js";
import { DEFAULT_REGISTRIES } from "../gates/supply-chain-gate.js";
import { DEFAULT_PRESET, PRESET_NAMES } from "../presets/index.js";
import { EXPECTED, PROMPT_FILE_PLACEHOLDER } from "./config-constants.js";
import { checkAgent } from "./cross-field-checks.js";
import { isPlainObject } from "./key-paths.js";

/** A string with something besides whitespace; `expected` is how an error message phrases it. */
export const nonBlank = (expected: string) =>
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

export const LabelsSchema = z
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

export const AgentObjectSchema = z
  .strictObject({
    preset: z
      .enum(PRESET_NAMES)
      .default(DEFAULT_PRESET)
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
        "Environment variable names passed to the agent besides its preset's model keys, `PATH` and the " +
          "runner's toolchain variables (docs/WORKER.md, *Toolchains*): list a variable here to pass it even " +
          "when its name looks like a secret (e.g. `NPM_TOKEN`); everything else of the runner is withheld. " +
          "The GitHub and Actions tokens and another preset's model key can never be listed.",
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

export const AgentsSchema = z
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

export const RateLimitSchema = z
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

// A registry host name, optionally with a port: what a lockfile's download URL must name to count as allowed.
const REGISTRY_HOST =
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/i;

const SupplyChainSchema = z
  .strictObject({
    lifecycleScripts: z
      .boolean()
      .default(true)
      .describe(
        "Gate added or changed install-time scripts in any package.json, package.yaml or package.json5 " +
          "(preinstall, install, postinstall, prepare and the others `npm ci` runs, and every script they " +
          "reach), a changed `workspaces` list, and the files installs and builds run: `binding.gyp`, " +
          "`build.rs` (and a Cargo.toml `build` script), `setup.py`, `setup.cfg`, `hatch_build.py`, " +
          "`pdm_build.py`, an in-tree pyproject.toml build backend (`backend-path`) and its code, and " +
          "dependency patches (`.yarn/patches/`, `patches/*.patch`).",
      ),
    registrySettings: z
      .boolean()
      .default(true)
      .describe(
        "Gate package-manager settings files (`.npmrc`, `.yarnrc*`, `.pnpmfile.cjs`, `pnpm-workspace.yaml`, " +
          "`bunfig.toml`, `pip.conf`, `uv.toml`, `poetry.toml`, `pdm.toml`, `.cargo/config.toml`, `rust-toolchain.toml`, …), index " +
          "settings in pyproject.toml, and a manifest's `packageManager`, `pnpm`, `trustedDependencies` and " +
          "`dependenciesMeta` fields.",
      ),
    lockfileSources: z
      .boolean()
      .default(true)
      .describe(
        "Accept lockfile and manifest sources only from `registries`, registry versions, and paths inside " +
          "the repository; gate everything else (git, a tarball URL on another host, a GitHub shorthand, a " +
          "path outside the repository, a go.mod `replace` by another module) and any lockfile or manifest " +
          "the gate cannot read (`bun.lockb`, an unparseable file).",
      ),
    registries: z
      .array(
        z
          .string()
          .regex(REGISTRY_HOST)
          .meta({ [EXPECTED]: "a host name such as `registry.npmjs.org` (no scheme, no path)" }),
      )
      .default([...DEFAULT_REGISTRIES])
      .describe(
        "Hosts packages may be downloaded from over https; replaces the default list (the public npm, " +
          "PyPI and crates.io hosts), so list those too when you add a private registry.",
      ),
  })
  .prefault({})
  .describe("The supply-chain rules: what installs and builds is code too. Each rule can be turned off.");

export const HumanGateSchema = z
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
    supplyChain: SupplyChainSchema,
  })
  .prefault({})
  .describe("The human gate: changes that need a person's approval before their pull request merges.");

export const MergeSchema = z
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
    deleteBranch: z
      .boolean()
      .default(true)
      .describe(
        "Delete the task branch after merging (only while it is at the merged head: a branch pushed to after the merge is kept).",
      ),
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
    .describe(
      `Most US dollars of agent cost ${scope}; null means no limit. Every configured agent must have a known ` +
        "cost (a CLI that prices its own usage, or a model priced in `prices` or the built-in table): a " +
        "configuration whose USD budget some agent could spend past is refused.",
    );

export const BudgetsSchema = z
  .strictObject({
    task: z
      .strictObject({ tokens: tokenBudget("one task may use"), usd: usdBudget("one task may use") })
      .prefault({})
      .describe(
        "Budget of one task, earlier attempts included. The worker meters each run as its CLI streams usage and " +
          "stops it when it reaches what is left (Claude Code is also given it as `--max-budget-usd`), commits " +
          "and pushes the work so far, and ends with `budget_exceeded`; a CLI that reports usage only at its end " +
          "(Gemini CLI) is checked after each run.",
      ),
    session: z
      .strictObject({
        tokens: tokenBudget("a whole session may use"),
        usd: usdBudget("a whole session may use"),
      })
      .prefault({})
      .describe(
        "Budget of a whole session: the dashboard publishes what is left; each worker's runs are capped at its " +
          "share of it (what is left divided by `maxParallel`); workers side by side, reading it at different " +
          'times, can together pass it before the session pauses (docs/WORKER.md "Budgets").',
      ),
  })
  .prefault({})
  .describe("Token and cost budgets.");

const PRICES_EXPECTED = "a list (at most 100) of { model, input, output }: US dollars per million tokens";

export const PricesSchema = z
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

export const ScoringSchema = z
  .strictObject({
    unblocks: weight(10, "Points per open issue that finishing this task unblocks."),
    critical: weight(50, "Points for the `critical` label."),
    quickWin: weight(30, "Points for the `quick-win` label."),
    nearCompleteParent: weight(20, "Points when more than half of the parent issue's sub-issues are done."),
    retryPenalty: weight(15, "Points taken off per earlier attempt at the task."),
  })
  .prefault({})
  .describe("Weights of the task score; the highest score is picked next, ties go to the oldest issue.");

export const SessionSchema = z
  .strictObject({
    autoStart: z
      .boolean()
      .default(true)
      .describe(
        "Start a session by itself when work is ready (a task labeled ready by someone with write access, or new " +
          "work after a completed session). `false`: the session waits, and the dashboard says so, until " +
          "somebody with write access comments `/autopilot start`.",
      ),
  })
  .prefault({})
  .describe("How a session begins.");

export const CleanupSchema = z
  .strictObject({
    staleBranchDays: z
      .union([z.literal("off"), z.number().positive().max(3650)])
      .default("off")
      .meta({
        description:
          "Delete the branch (and close the pull request) of a failed, timed-out or skipped task once nothing was " +
          "pushed to it for this many days (fractions allowed), and only when every push to it was Autopilot's own " +
          "(GitHub's record of who pushed, never the commits' author fields): a branch a person pushed to is kept, " +
          "and so is one pushed to after Autopilot judged it (it is deleted only while still at the commit it was " +
          "judged at). " +
          "`off` keeps every branch until `/autopilot cleanup #N`.",
        [EXPECTED]: "`off` or a number of days greater than 0, such as `14`",
      }),
  })
  .prefault({})
  .describe("Cleaning up the branches of tasks that ended without a merge.");

/** Epics (src/core/tasks/epics.ts): a writer's ready label on a parent issue pools its open sub-issues. */
export const EpicsSchema = z
  .strictObject({
    closeParent: z
      .boolean()
      .default(true)
      .describe(
        "Close the parent issue (as completed) once every one of its sub-issues is closed. `false`: the parent " +
          "stays open and its progress comment says all are done.",
      ),
  })
  .prefault({})
  .describe(
    "Epics: a ready label given by a person with write access to an issue with sub-issues pools its open " +
      "sub-issues as tasks (the parent itself is not one) and keeps a checklist of their progress in one comment " +
      "on the parent.",
  );

/**
 * The plan gate (src/core/reconcile/commands/plan-approval.ts): a planning run proposes a plan, and the task waits
 * for a writer's approval before any code is written.
 */
export const PlanGateSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        "Every task first gets a planning run: the agent reads the code and proposes a plan (nothing it changes is " +
          "kept or pushed), posted on the issue; the task waits, needing a human, until a writer approves it with " +
          "`/autopilot approve #N` (a comment with changes instead gets a new plan with those words). The " +
          "approved plan goes to the agent with the task.",
      ),
    label: z
      .string()
      .trim()
      .min(1)
      .max(50)
      .default("autopilot:plan")
      .describe("A task with this label gets the plan gate even when `enabled` is false."),
  })
  .prefault({})
  .describe("Approve a plan before any code is written: for every task, or for tasks with the label.");

/** Most candidates one best-of round runs (each is a whole attempt, paid for). */
export const MAX_BEST_OF_CANDIDATES = 4;

/**
 * Best of N (src/core/reconcile/runs/best-of.ts): one attempt run by several candidate agents, each on a branch of
 * its own, and the best by evidence kept.
 */
export const BestOfSchema = z
  .strictObject({
    candidates: z
      .array(AgentObjectSchema)
      .max(MAX_BEST_OF_CANDIDATES)
      .default([])
      .refine((list) => list.length !== 1, {
        message: "bestOf.candidates needs at least 2 agents (or none, which turns best of N off)",
      })
      .meta({
        description:
          "The agents of a best-of round, same keys as `agents.primary` (a preset, a model…): each works the task " +
          "from the default branch on `<branchPrefix>issue-N-candidate-K` and opens a pull request there. Empty: " +
          "best of N is off.",
        [EXPECTED]: `no entries, or 2 to ${MAX_BEST_OF_CANDIDATES} agents, each a mapping with the same keys as \`agents.primary\``,
      }),
    label: z
      .string()
      .trim()
      .min(1)
      .max(50)
      .default("autopilot:best-of")
      .describe("A task with this label is worked as a best-of round (when `candidates` lists agents)."),
    onRetry: z
      .boolean()
      .default(false)
      .describe(
        "A task's attempt after one that ended without a pull request (failed, timed out, crashed, retried) is " +
          "worked as a best-of round, label or not.",
      ),
    checksWaitMinutes: z
      .int()
      .min(0)
      .max(240)
      .default(30)
      .describe(
        "How long the choice waits, after the last candidate finished, for the candidates' pull-request checks; " +
          "a candidate whose checks are still running then counts as not passing them.",
      ),
  })
  .prefault({})
  .describe(
    "Best of N: the candidates work one after another, each from the default branch on its own branch; the " +
      "winner is chosen by evidence (the quality gate passed, the PR's checks passed, no human-gate rule fired, " +
      "the smaller diff; the earlier candidate on a tie) and continues as the task's pull request on the task " +
      "branch; the other candidates' pull requests are closed and their branches deleted. Every candidate's cost " +
      "counts against the task's budget and is shown.",
  );

/**
 * The definition of ready (src/core/tasks/task-readiness.ts): what a ready task's text must hold before a worker
 * is dispatched for it.
 */
export const DefinitionOfReadySchema = z
  .strictObject({
    minWords: z
      .int()
      .min(0)
      .max(10_000)
      .default(0)
      .describe(
        "Fewest words a ready task's body must have before Autopilot dispatches it (headings, HTML comments and " +
          "an issue form's `_No response_` do not count); a task with fewer is listed on the dashboard under " +
          '"Not in the pool" as too thin to act on, and `/autopilot run #N` is refused, until a writer adds to ' +
          "it. 0: no minimum.",
      ),
    sections: z
      .array(z.string().trim().min(1).max(100))
      .max(20)
      .default([])
      .describe(
        "Headings a ready task's body must have, each followed by text (`### Goal`, as GitHub writes the fields " +
          "of an issue form; any heading level, case ignored). `autopilot init` writes an issue form with Goal, " +
          "Acceptance criteria, Files or areas and Out of scope, and sets `[Goal, Acceptance criteria]` here.",
      ),
  })
  .prefault({})
  .describe(
    "The definition of ready: a ready task whose text is too thin to act on waits, listed with what it lacks, " +
      "instead of being dispatched. Off by default (a repository's existing tasks keep their behaviour); " +
      "`autopilot init` turns it on.",
  );

/** A directory of the repository, relative to its root: no `..`, not absolute, forward slashes. */
const REPO_DIRECTORY = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[^\\\0\r\n]+$/;

/**
 * Monorepo workspaces (src/core/gates/workspace-scope.ts): which paths belong to which part of the repository,
 * the quality commands of each part, and where an agent routed to a part works.
 */
export const WorkspacesSchema = z
  .array(
    z.strictObject({
      name: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/)
        .meta({
          description: "The workspace's name, as the prompt and the quality results show it.",
          [EXPECTED]: "a name of letters, digits, `.`, `_` and `-` (at most 60)",
        }),
      paths: z
        .array(nonBlank("a path glob (not blank)"))
        .min(1)
        .max(50)
        .meta({
          description:
            "Globs of the paths that belong to it (as `humanGate.paths`: `packages/api/**`, or `packages/api/` for " +
            "everything below).",
          [EXPECTED]: "a non-empty list of path globs",
        }),
      directory: z
        .string()
        .regex(REPO_DIRECTORY)
        .max(200)
        .nullable()
        .default(null)
        .meta({
          description:
            "Where its quality commands run and where an agent routed to it starts (its own instructions file, " +
            "such as CLAUDE.md or AGENTS.md, is read from there by the agent CLIs); null: the repository's root.",
          [EXPECTED]: "a directory relative to the repository's root, without `..`",
        }),
      qualityCommands: z
        .array(nonBlank("a shell command (not blank)"))
        .max(20)
        .default([])
        .describe("Shell commands that must pass when a change touches the workspace (run in `directory`)."),
      label: z
        .string()
        .trim()
        .min(1)
        .max(50)
        .nullable()
        .default(null)
        .describe("A label that routes a task to this workspace: its agent starts in `directory`."),
    }),
  )
  .max(50)
  .default([])
  .meta({
    description:
      "Monorepo workspaces. A change runs the quality commands of each workspace whose paths it touches, and the " +
      "top-level `qualityCommands` only when it touches files of no workspace (or there are no workspaces); a " +
      "task labeled with a workspace's `label` is worked from its `directory`.",
    [EXPECTED]: "a list of { name, paths, directory, qualityCommands, label }",
  });
