/**
 * Sandbox scenarios: a YAML file describing a repository (and, optionally, the organization around it), its
 * people and issues, what the people do over time, the faults to inject, and how long the whole run may take. `loadScenario` reads and validates one
 * (zod), reporting every problem with its path in the file and what was expected.
 *
 * ```yaml
 * name: demo
 * repo:
 *   owner: demo
 *   name: shop
 *   ci: node --test                 # the CI command run on every PR head (check run "ci")
 *   files: { package.json: "…", src/cart.js: "…" }
 *   config: { maxParallel: 2 }      # .github/autopilot.yml (merged over the demo agent defaults), or text
 *   protection: { requiredApprovals: 1 }   # branch protection of the default branch (also rulesets: […])
 *   allowAutoMerge: true            # the repository setting "Allow auto-merge" (default false, as on GitHub)
 * users:
 *   - { login: alice, permission: admin }
 *   - { login: bob, permission: write }
 * issues:                           # created in order: the first is #1
 *   - title: Add a price formatter
 *     labels: [autopilot:ready, quick-win]
 *     agent: { behavior: complete, files: { src/format.js: "…" } }
 *   - title: Cart total
 *     dependsOn: [1]                # "Depends on #1" in the body; blockedBy: native, parent: sub-issue
 *     agent: { behavior: needs-human, question: "Round up or down?", answerIncludes: "down" }
 * timeline:
 *   - when: { issue: 2, labeled: autopilot:needs-human }
 *     do: [{ as: bob, comment: "Round down." }]
 *   - when: { pr: 1, opened: true }
 *     do: [{ as: bob, review: request-changes, body: "Add a test." }]
 *     then:
 *       - when: { pr: 1, pushed: true }
 *         do: [{ as: bob, review: approve }]
 *   - when: { afterSeconds: 20 }
 *     do: [{ as: alice, comment: "/autopilot pause", on: tracking }]
 *   - when: { afterSeconds: 30 }    # in another of the installations' repositories (repo: owner/name)
 *     do: [{ as: alice, label: autopilot:ready, repo: demo/billing, on: 1 }]
 * installations:                  # the App across an organization (scenario-installations.ts); default: one
 *   - account: demo                # installation covering every repository. demo/shop is covered here
 *     repositories:
 *       - { name: billing, config: { maxParallel: 1 }, issues: [{ title: Idle, labels: [] }] }
 *   - { account: tools, repositorySelection: selected, repositories: [{ name: cli }] }
 * faults: { serverErrorRate: 0.1 }
 * controllers: { instances: 2 }      # two controller processes at once (fault runs: scenarios/faults-*.yml)
 * # controllers: { instances: 2, sharedWork: true }   # two replicas sharing their work through Redis
 * # controllers: { mode: actions }   # the controller workflow run by the Actions stand-in instead of the app
 * # fault actions: killController: { afterWrites: 1 }, badSignatureWebhook: true,
 * #   { as: alice, corruptState: true, on: tracking }, { as: alice, delete: true, on: tracking }
 * limits: { maxDurationSeconds: 120 }
 * createdIssues: 4                 # issue numbers past the seeded ones `expect` may name (a split's sub-issues)
 * expect:                          # final states, and more (expect-schema.ts)
 *   1: done
 *   2: { state: done, results: [needs_human, complete], prompts: ["Round down"], pr: { merged: true } }
 *   dashboardSeen: ["autopilot:session paused"]
 * ```
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { FaultsSchema } from "../emulator/server/faults.js";
import { IssueExpectationSchema, RunExpectationShape } from "./checks/expect-schema.js";
import { login, REPORT_STATES } from "./scenario-fields.js";
import { checkInstallations, InstallationsSchema } from "./scenario-installations.js";
import { checkIssues, ScenarioIssueSchema, ScenarioUserSchema } from "./scenario-issues.js";
import { PULL_VERBS, RuleSchema, type ScenarioRule } from "./timeline/timeline-schema.js";

const CiSchema = z.union([
  z.string().min(1),
  z.strictObject({
    command: z.string().min(1),
    name: z.string().min(1).default("ci"),
    timeoutSeconds: z.number().positive().default(300),
    /**
     * Whether the CI workflow also lists `merge_group` in `on:`, so it runs on a merge queue's merge groups too
     * (GitHub runs a workflow there only then). Off by default, as a workflow starts.
     */
    mergeGroup: z.boolean().default(false),
  }),
]);

export const ScenarioSchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().default(""),
    repo: z
      .strictObject({
        owner: login.default("demo"),
        name: z
          .string()
          .regex(/^[A-Za-z0-9_.-]+$/, "a repository name")
          .default("shop"),
        defaultBranch: z.string().min(1).default("main"),
        /**
         * Repository files (path → content) of the initial commit. `.github/autopilot.yml` here replaces the
         * file made from `config` (a file broken from the start; `{demo_agent}` is replaced); `config` still
         * names the settings the harness reads (labels, branch prefix).
         */
        files: z.record(z.string(), z.string()).default({}),
        /** The CI command run on every pull request head (a check run named `ci` unless named). */
        ci: CiSchema.optional(),
        /** The repository setting "Allow auto-merge" (`allow_auto_merge`); off by default, as on GitHub. */
        allowAutoMerge: z.boolean().default(false),
        /**
         * `.github/autopilot.yml`: a mapping merged over the runner's defaults (the demo agent as primary agent),
         * or the file's text verbatim (`{demo_agent}` is replaced by the demo agent's command).
         */
        config: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}),
        /**
         * Classic branch protection of the default branch (sandbox/emulator/merge/merge-requirements.ts enforces it
         * on merges): required approving reviews, stale approvals dismissed, required checks by name, up to
         * date, a required merge queue.
         */
        protection: z
          .strictObject({
            requiredApprovals: z.number().int().min(0).max(6).default(0),
            dismissStaleReviews: z.boolean().default(false),
            requiredChecks: z.array(z.string().min(1)).default([]),
            strict: z.boolean().default(false),
            mergeQueue: z.boolean().default(false),
          })
          .optional(),
        /** Rulesets, as `GET …/rules/branches/{branch}` lists their rules (`pull_request`, `merge_queue`, …). */
        rulesets: z
          .array(
            z.strictObject({
              branches: z.array(z.string().min(1)).default(["~DEFAULT_BRANCH"]),
              rules: z
                .array(
                  z.strictObject({
                    type: z.string().min(1),
                    parameters: z.record(z.string(), z.unknown()).optional(),
                  }),
                )
                .min(1),
            }),
          )
          .default([]),
      })
      .default({
        owner: "demo",
        name: "shop",
        defaultBranch: "main",
        files: {},
        config: {},
        rulesets: [],
        allowAutoMerge: false,
      }),
    users: z.array(ScenarioUserSchema).default([{ login: "alice", permission: "admin" }]),
    issues: z.array(ScenarioIssueSchema).min(1, "a scenario needs at least one issue"),
    /**
     * Issue numbers past the seeded ones that Autopilot creates during the run and `expect` may name (a split's
     * sub-issues; the dashboard takes a number too): #count+1 to #count+createdIssues.
     */
    createdIssues: z.number().int().min(0).max(20).default(0),
    timeline: z.array(RuleSchema).default([]),
    /**
     * Whether a person starts the session by commenting `/autopilot start` on the tracking issue once it
     * exists (on issue #1 when none appears within 8 s). Default false: the controller starts a session by
     * itself when ready work appears.
     */
    start: z
      .union([
        z.literal(false),
        z.strictObject({ as: login.optional(), command: z.string().default("/autopilot start") }),
      ])
      .default(false),
    /**
     * The App's installations across an organization, each with its repositories (scenario-installations.ts).
     * Default: one installation covering every repository, the scenario's own alone.
     */
    installations: InstallationsSchema.optional(),
    faults: FaultsSchema.optional(),
    /**
     * The controller: `instances` separate controller processes on the same GitHub state, each receiving every
     * webhook and ticking (two controllers at once); `process: true` runs even one as a process (implied by a
     * `killController` action). Default: one controller inside the runner's process.
     *
     * `mode: actions` runs the controller as a user of the Actions-only mode has it: the controller workflow
     * template installed in the repository, run by the Actions stand-in on its events and schedule
     * (sandbox/scenario/controllers/controller-mode.ts). There `instances: N` adds N − 1 hosted controller processes
     * beside it, and `killController` kills the controller's running job instead of a process.
     */
    controllers: z
      .strictObject({
        instances: z.number().int().min(1).max(3).default(1),
        process: z.boolean().default(false),
        mode: z.enum(["hosted", "actions"]).default("hosted"),
        /**
         * The hosted controller processes are replicas sharing their work through a Redis server the harness
         * starts (src/app/hosted/replica-work.ts), and each webhook goes to one live replica in turn, as a load
         * balancer sends it, instead of to every one.
         */
        sharedWork: z.boolean().default(false),
      })
      .optional(),
    limits: z
      .strictObject({
        /** The run ends (outcome "timeout") after this long (half as long again in Actions mode). */
        maxDurationSeconds: z.number().positive().default(180),
        /** The controller's periodic reconcile. */
        tickMs: z.number().int().positive().default(2000),
        /** Nothing may change for this long before a settled run ends. */
        settleSeconds: z.number().nonnegative().default(2),
        /** Wall clock of one worker job. */
        jobTimeoutSeconds: z.number().positive().default(300),
        /** Actions mode: how long one minute of the controller workflow's cron lasts (default tickMs). */
        scheduleMinuteMs: z.number().positive().optional(),
      })
      .default({ maxDurationSeconds: 180, tickMs: 2000, settleSeconds: 2, jobTimeoutSeconds: 300 }),
    /**
     * What must hold at the end; anything unmet fails the run. Per issue number: the final state, or an
     * object of checks (see `IssueExpectationSchema`); plus run-wide checks on the dashboard and dispatches
     * (`RunExpectationShape`).
     */
    expect: z
      .object(RunExpectationShape)
      .catchall(z.union([z.enum(REPORT_STATES), IssueExpectationSchema]))
      .default({}),
  })
  .superRefine((s, ctx) => {
    const logins = new Set(s.users.map((u) => u.login.toLowerCase()));
    const count = s.issues.length;
    const knownIssue = (n: number, path: (string | number)[]) => {
      if (n > count)
        ctx.addIssue({
          code: "custom",
          path,
          message: `there is no issue #${n} (the scenario has ${count})`,
        });
    };
    const knownUser = (name: string, path: (string | number)[]) => {
      // The sandbox App's own account (store-core.ts: slug `autopilot`) is always there: an agent holding its token
      // may write as it (the seeded simulation plays that).
      const own = name.toLowerCase() === "autopilot[bot]";
      if (!own && !logins.has(name.toLowerCase()) && name.toLowerCase() !== s.repo.owner.toLowerCase()) {
        ctx.addIssue({ code: "custom", path, message: `unknown user "${name}": add it under users` });
      }
    };
    checkIssues(s.issues, ["issues"], knownUser, ctx);
    if (s.installations) checkInstallations(s.installations, s, ctx);
    // An action in another repository names one of the installations' and an issue that repository has.
    const knownOrgIssue = (full: string, on: unknown, path: (string | number)[]) => {
      const [owner, name] = full.toLowerCase().split("/");
      const installation = s.installations?.find((i) => i.account.toLowerCase() === owner);
      const repo = installation?.repositories.find((r) => r.name.toLowerCase() === name);
      if (!repo)
        ctx.addIssue({
          code: "custom",
          path: [...path, "repo"],
          message: `no repository ${full} under installations: declare it there`,
        });
      else if (typeof on === "number" && (on < 1 || on > repo.issues.length))
        ctx.addIssue({
          code: "custom",
          path: [...path, "on"],
          message: `${full} has ${repo.issues.length} issue(s); #${on} is not one of them`,
        });
    };
    const walk = (rules: ScenarioRule[], path: (string | number)[]) =>
      rules.forEach((rule, i) => {
        const here = [...path, i];
        if (rule.when.issue !== undefined) knownIssue(rule.when.issue, [...here, "when", "issue"]);
        if (rule.when.pr !== undefined) knownIssue(rule.when.pr, [...here, "when", "pr"]);
        rule.do.forEach((action, j) => {
          if ("as" in action && action.as) knownUser(action.as, [...here, "do", j, "as"]);
          if ("repo" in action && action.repo) knownOrgIssue(action.repo, action.on, [...here, "do", j]);
          else if ("on" in action && typeof action.on === "number")
            knownIssue(action.on, [...here, "do", j, "on"]);
          const onPull = PULL_VERBS.find((verb) => verb in action && action[verb] !== undefined);
          if (onPull && action.pr === undefined && rule.when.pr === undefined) {
            ctx.addIssue({
              code: "custom",
              path: [...here, "do", j, "pr"],
              message: `${onPull === "review" ? "a review" : onPull} needs \`pr: N\` here or in the condition`,
            });
          }
        });
        walk(rule.then, [...here, "then"]);
      });
    walk(s.timeline, ["timeline"]);
    for (const key of Object.keys(s.expect)) {
      if (key in RunExpectationShape) continue;
      if (!/^\d+$/.test(key)) {
        ctx.addIssue({
          code: "custom",
          path: ["expect", key],
          message: `expected an issue number or one of ${Object.keys(RunExpectationShape).join(", ")}`,
        });
        continue;
      }
      if (Number(key) > count + s.createdIssues) knownIssue(Number(key), ["expect", key]);
    }
    if (s.start !== false && s.start.as) knownUser(s.start.as, ["start", "as"]);
  });

export type Scenario = z.infer<typeof ScenarioSchema>;

export class ScenarioError extends Error {
  override readonly name = "ScenarioError";
}

function describePath(path: PropertyKey[]): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === "number") return `${out}[${part}]`;
    const key = String(part);
    return out ? `${out}.${key}` : key;
  }, "");
}

/** Parses and validates scenario text; `source` names it in errors. */
export function parseScenario(text: string, source = "scenario"): Scenario {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) {
    throw new ScenarioError(`Invalid scenario ${source}: ${doc.errors.map((e) => e.message).join("\n")}`);
  }
  const data = doc.toJS() as unknown;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ScenarioError(
      `Invalid scenario ${source}: expected a mapping with name, repo, users, issues, …`,
    );
  }
  const parsed = ScenarioSchema.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const where = describePath(issue.path) || "(top level)";
      let message = issue.message;
      if (issue.code === "unrecognized_keys")
        message = `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
      if (issue.code === "invalid_union") message = `${message}: ${unionHint(where)}`;
      return `  - ${where}: ${message}`;
    });
    throw new ScenarioError(`Invalid scenario ${source}:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

function unionHint(where: string): string {
  if (where.endsWith("ci")) return "a command string, or { command, name, timeoutSeconds, mergeGroup }";
  if (where.endsWith("config")) return "a mapping (merged over the defaults) or the file's text";
  if (where.endsWith("behavior")) return "a behaviour name or a list of them";
  if (where.startsWith("expect."))
    return `under expect: an issue number with a state or { state, comments, prompts, results, … }, or one of ${Object.keys(RunExpectationShape).join(", ")}`;
  return "see the scenario format in sandbox/scenario/scenario-file.ts";
}

/** Reads and validates a scenario file. */
export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ScenarioError(`Cannot read scenario ${path}: ${(error as Error).message}`);
  }
  return parseScenario(text, basename(path) === path ? path : path);
}

type CiSettings = { command: string; name: string; timeoutMs: number; mergeGroup: boolean };

/** The CI settings of a scenario, normalized. */
export function scenarioCi(scenario: Scenario): CiSettings | null {
  return scenario.repo.ci ? ciSettings(scenario.repo.ci) : null;
}

/** A `ci:` setting (the scenario repository's, or a command alone: an organization repository's), normalized. */
export function ciSettings(ci: z.infer<typeof CiSchema>): CiSettings {
  if (typeof ci === "string") return { command: ci, name: "ci", timeoutMs: 300_000, mergeGroup: false };
  return {
    command: ci.command,
    name: ci.name,
    timeoutMs: ci.timeoutSeconds * 1000,
    mergeGroup: ci.mergeGroup,
  };
}
