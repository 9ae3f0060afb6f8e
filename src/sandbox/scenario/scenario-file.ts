/**
 * Sandbox scenarios: a YAML file describing a repository, its people and issues, what the people do over
 * time, the faults to inject, and how long the whole run may take. `loadScenario` reads and validates one
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
 * faults: { serverErrorRate: 0.1 }
 * controllers: { instances: 2 }      # two controller processes at once (fault runs: scenarios/faults-*.yml)
 * # fault actions: killController: { afterWrites: 1 }, badSignatureWebhook: true,
 * #   { as: alice, corruptState: true, on: tracking }, { as: alice, delete: true, on: tracking }
 * limits: { maxDurationSeconds: 120 }
 * expect:                          # final states, and more (IssueExpectationSchema, RunExpectationShape)
 *   1: done
 *   2: { state: done, results: [needs_human, complete], prompts: ["Round down"], pr: { merged: true } }
 *   dashboardSeen: ["autopilot:session paused"]
 * ```
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { DemoAgentEntrySchema } from "./demo-agent.js";
import { FaultsSchema } from "../github/faults.js";

export const REPORT_STATES = [
  "done",
  "blocked",
  "needs-human",
  "timeout",
  "failed",
  "ready",
  "in-progress",
  "review",
] as const;
export type ReportState = (typeof REPORT_STATES)[number];

const PERMISSIONS = ["admin", "maintain", "write", "triage", "read", "none"] as const;

const login = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, "a GitHub login (letters, digits and hyphens)");
const issueNumber = z.number().int().positive();

const CiSchema = z.union([
  z.string().min(1),
  z.strictObject({
    command: z.string().min(1),
    name: z.string().min(1).default("ci"),
    timeoutSeconds: z.number().positive().default(300),
  }),
]);

export const ScenarioUserSchema = z.strictObject({
  login,
  permission: z.enum(PERMISSIONS).default("write"),
  name: z.string().optional(),
});

export const ScenarioCommentSchema = z.strictObject({
  author: login,
  body: z.string().min(1),
});

export const ScenarioIssueSchema = z.strictObject({
  /** Optional check: the issue's position (issues are created in order, #1 first). */
  number: issueNumber.optional(),
  title: z.string().min(1),
  body: z.string().default(""),
  /** Labels at creation; default: the ready label. */
  labels: z.array(z.string().min(1)).default(["autopilot:ready"]),
  /** Author login (a scenario user); default: the first user. */
  author: login.optional(),
  comments: z.array(ScenarioCommentSchema).default([]),
  /** Written into the body as `Depends on #N` lines. */
  dependsOn: z.array(issueNumber).default([]),
  /** GitHub's native "blocked by" relations. */
  blockedBy: z.array(issueNumber).default([]),
  /** Native sub-issue parent. */
  parent: issueNumber.optional(),
  /** What the demo agent does for this issue. */
  agent: DemoAgentEntrySchema.optional(),
});

const ConditionSchema = z
  .strictObject({
    /** Seconds after the scenario started (or, under `then`, after the parent rule fired). */
    afterSeconds: z.number().nonnegative().optional(),
    /** An issue number, with labeled / unlabeled / closed / state / commented. */
    issue: issueNumber.optional(),
    labeled: z.string().min(1).optional(),
    unlabeled: z.string().min(1).optional(),
    closed: z.boolean().optional(),
    state: z.enum(REPORT_STATES).optional(),
    /** A comment by someone other than the scenario's users matching this regular expression. */
    commented: z.string().min(1).optional(),
    /** The pull request of this task issue, with opened / pushed / merged / checks. */
    pr: issueNumber.optional(),
    opened: z.boolean().optional(),
    /** The PR head moved since the rule was armed (under `then`: since the parent fired). */
    pushed: z.boolean().optional(),
    merged: z.boolean().optional(),
    checks: z.enum(["success", "failure", "pending"]).optional(),
    /** At least this many worker runs in progress. */
    running: z.number().int().positive().optional(),
    /** The tracking issue's body matches this regular expression. */
    dashboard: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    const issueKeys = (["labeled", "unlabeled", "closed", "state", "commented"] as const).filter(
      (k) => c[k] !== undefined,
    );
    const prKeys = (["opened", "pushed", "merged", "checks"] as const).filter((k) => c[k] !== undefined);
    if (issueKeys.length && c.issue === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${issueKeys.join(", ")} needs \`issue: N\``,
        path: [issueKeys[0]!],
      });
    }
    if (prKeys.length && c.pr === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${prKeys.join(", ")} needs \`pr: N\` (the task issue's number)`,
        path: [prKeys[0]!],
      });
    }
    if (c.issue !== undefined && !issueKeys.length) {
      ctx.addIssue({
        code: "custom",
        message: "`issue: N` needs one of labeled, unlabeled, closed, state, commented",
        path: ["issue"],
      });
    }
    if (c.pr !== undefined && !prKeys.length) {
      ctx.addIssue({
        code: "custom",
        message: "`pr: N` needs one of opened, pushed, merged, checks",
        path: ["pr"],
      });
    }
    const kinds = [
      c.afterSeconds !== undefined,
      c.issue !== undefined,
      c.pr !== undefined,
      c.running !== undefined,
      c.dashboard !== undefined,
    ];
    if (!kinds.some(Boolean)) {
      ctx.addIssue({
        code: "custom",
        message: "a condition needs afterSeconds, issue, pr, running or dashboard",
      });
    }
  });
export type ScenarioCondition = z.infer<typeof ConditionSchema>;

const TargetSchema = z.union([issueNumber, z.literal("tracking")]);

/**
 * One thing that happens: a person acts (`as` + exactly one of comment, review, label, unlabel, close, reopen,
 * editBody, corruptState, delete, forkPr), or the runner injects a fault (`killRun`, `faults`, `killController`,
 * `badSignatureWebhook`).
 */
const ActionSchema = z
  .strictObject({
    /** The scenario user who acts (their `ghp_<login>` token is used). */
    as: login.optional(),
    comment: z.string().min(1).optional(),
    review: z.enum(["approve", "request-changes", "comment"]).optional(),
    body: z.string().optional(),
    label: z.string().min(1).optional(),
    unlabel: z.string().min(1).optional(),
    close: z.boolean().optional(),
    reopen: z.boolean().optional(),
    /** Where: an issue number or `tracking`; default: the condition's issue (or PR's task issue). */
    on: TargetSchema.optional(),
    /** For review: the task issue whose PR is reviewed; default: the condition's `pr`. */
    pr: issueNumber.optional(),
    /** Kill the running worker run of this task issue (a lost runner). */
    killRun: z.strictObject({ issue: issueNumber }).optional(),
    /** Replace the sandbox's faults. */
    faults: FaultsSchema.optional(),
    /** The person replaces the target issue's body with this text (REST `PATCH`, recorded in its edit history). */
    editBody: z.string().optional(),
    /** A person edits the target's (`on: tracking`) hidden state block into unreadable JSON. */
    corruptState: z.literal(true).optional(),
    /** A person (admin) deletes the target issue for good (`on: tracking`: the dashboard). */
    delete: z.literal(true).optional(),
    /**
     * Fault: the controller process is SIGKILLed right after its next `afterWrites` successful writes to the API
     * (mid-reconcile, between two effects) and a new process starts on the same state `restartAfterSeconds`
     * later. Runs the controllers as processes (see `controllers`).
     */
    killController: z
      .strictObject({
        instance: z.number().int().positive().default(1),
        afterWrites: z.number().int().positive().default(1),
        restartAfterSeconds: z.number().nonnegative().default(2),
      })
      .optional(),
    /** Fault: a webhook signed with the wrong secret is sent to every controller; each must answer 400. */
    badSignatureWebhook: z.literal(true).optional(),
    /**
     * The acting user commits `files` on top of the default branch in their fork, on `branch` (e.g. a task
     * branch's name), and opens a pull request from it (`head: "<user>:<branch>"`). The sandbox's CI runs on
     * its head like a fork's own workflows would, so its checks can pass.
     */
    forkPr: z
      .strictObject({
        branch: z.string().min(1),
        title: z.string().min(1).default("Fix"),
        body: z.string().default(""),
        files: z.record(z.string(), z.string()).refine((f) => Object.keys(f).length > 0, "at least one file"),
      })
      .optional(),
  })
  .superRefine((a, ctx) => {
    const verbs = (
      [
        "comment",
        "review",
        "label",
        "unlabel",
        "close",
        "reopen",
        "editBody",
        "corruptState",
        "delete",
        "forkPr",
      ] as const
    ).filter((k) => a[k] !== undefined);
    const system = (["killRun", "faults", "killController", "badSignatureWebhook"] as const).filter(
      (k) => a[k] !== undefined,
    );
    if (system.length) {
      if (system.length > 1 || verbs.length || a.as) {
        ctx.addIssue({
          code: "custom",
          message: `${system.join(" and ")} stands alone (no \`as\` and no other action)`,
        });
      }
      return;
    }
    if (!a.as) ctx.addIssue({ code: "custom", path: ["as"], message: "who acts? add `as: <user>`" });
    if (verbs.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `an action does exactly one of comment, review, label, unlabel, close, reopen, editBody (found ${verbs.length ? verbs.join(", ") : "none"})`,
      });
    }
    if (a.review === "request-changes" && !a.body?.trim()) {
      ctx.addIssue({ code: "custom", path: ["body"], message: "review: request-changes needs a body" });
    }
  });
export type ScenarioAction = z.infer<typeof ActionSchema>;

export interface ScenarioRule {
  when: ScenarioCondition;
  do: ScenarioAction[];
  then: ScenarioRule[];
  repeat: boolean;
  delaySeconds: number;
}

const RuleSchema: z.ZodType<ScenarioRule, unknown> = z.lazy(() =>
  z.strictObject({
    when: ConditionSchema,
    do: z.array(ActionSchema).min(1),
    /** Rules armed once this one fired. */
    // biome-ignore lint/suspicious/noThenProperty: `then:` is the scenario format's word for follow-up rules
    then: z.array(RuleSchema).default([]),
    /** Fire every time the condition becomes true again (default: once). */
    repeat: z.boolean().default(false),
    /** A person's reaction time: act this long after the condition became true (default 0). */
    delaySeconds: z.number().nonnegative().default(0),
  }),
) as unknown as z.ZodType<ScenarioRule, unknown>;

/** Regular expressions (case-insensitive): one, or a list that must each match. */
const PatternsSchema = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .superRefine((list, ctx) => {
    for (const pattern of list) {
      try {
        new RegExp(pattern, "i");
      } catch (error) {
        ctx.addIssue({ code: "custom", message: `not a regular expression: ${(error as Error).message}` });
      }
    }
  });

/** A count: exactly N, or `{ min, max }`. */
const CountSchema = z.union([
  z.number().int().nonnegative(),
  z.strictObject({
    min: z.number().int().nonnegative().optional(),
    max: z.number().int().nonnegative().optional(),
  }),
]);
export type ExpectedCount = z.infer<typeof CountSchema>;

/** Checks on one task issue at the end of the run (every key optional). */
export const IssueExpectationSchema = z.strictObject({
  /** The final state. */
  state: z.enum(REPORT_STATES).optional(),
  /** Labels the issue carries at the end. */
  labels: z.array(z.string().min(1)).optional(),
  /** Each pattern matches a comment by Autopilot (not the scenario's people) on the issue or its PR. */
  comments: PatternsSchema.optional(),
  /** No comment by Autopilot on the issue or its PR matches any of these. */
  noComments: PatternsSchema.optional(),
  /** Each pattern matches a prompt the demo agent got for this issue. */
  prompts: PatternsSchema.optional(),
  /** No prompt the demo agent got for this issue matches any of these. */
  noPrompts: PatternsSchema.optional(),
  /** Each pattern matches the prompt of the agent's last run for this issue. */
  lastPrompt: PatternsSchema.optional(),
  /** The finished worker results of the task's runs, in this order (others may come between). */
  results: z.array(z.string().min(1)).min(1).optional(),
  /** Agent iterations across every worker run (from the worker results). */
  iterations: CountSchema.optional(),
  /** Iterations counted by the task's last finished worker run (a retry starts a fresh counter). */
  lastIterations: CountSchema.optional(),
  /** Worker runs dispatched for the task. */
  runs: CountSchema.optional(),
  /** Some run ended on an agent limit with a reset time, and the task's next run started after that time. */
  resumesAfterReset: z.boolean().optional(),
  /** Times the demo agent ran for the task. */
  agentRuns: CountSchema.optional(),
  /** Demo agent names (`{demo_agent} --agent NAME`) that ran for the task. */
  agents: z.array(z.string().min(1)).optional(),
  /** Whether the task's branch (`<branchPrefix>issue-N`) exists at the end. */
  branch: z.boolean().optional(),
  pr: z
    .strictObject({
      /** Whether the task's PR is merged. */
      merged: z.boolean().optional(),
      /** Merged, and approved on the commit that was merged, before the merge. */
      approvedAfterLastPush: z.boolean().optional(),
      /** Changes were requested on an earlier head, and a push followed. */
      pushedAfterChangesRequested: z.boolean().optional(),
      /** The head's checks failed on some push, and the final head's passed. */
      checksFailedThenPassed: z.boolean().optional(),
    })
    .optional(),
  /** Files on the default branch at the end: path → pattern its content matches (null: absent). */
  files: z.record(z.string(), z.string().nullable()).optional(),
});
export type IssueExpectation = z.infer<typeof IssueExpectationSchema>;

/** Run-wide checks, beside the issue numbers in `expect`. */
export const RunExpectationShape = {
  /** Each pattern matches the final dashboard (the tracking issue's body, hidden markers included). */
  dashboard: PatternsSchema.optional(),
  /** Each pattern matched the dashboard at some moment of the run (every edit is looked at). */
  dashboardSeen: PatternsSchema.optional(),
  /** No pattern matches the final dashboard. */
  noDashboard: PatternsSchema.optional(),
  /** Each pattern matches a comment by Autopilot on the tracking issue. */
  dashboardComments: PatternsSchema.optional(),
  /** The session status at the end (idle, running, pausing, paused, stopping, completed). */
  session: z.string().min(1).optional(),
  /** Session statuses the dashboard showed during the run, in this order (others may come between). */
  sessions: z.array(z.string().min(1)).min(1).optional(),
  /** No worker run was dispatched while the dashboard said the session was paused or pausing. */
  noDispatchWhilePaused: z.boolean().optional(),
  /** At most this many worker runs were in progress at once. */
  maxConcurrentRuns: z.number().int().positive().optional(),
  /** Pull requests from forks merged by the end (0: none ever was). */
  forkPullsMerged: z.number().int().nonnegative().optional(),
};
export type RunExpectation = {
  [K in keyof typeof RunExpectationShape]?: z.infer<(typeof RunExpectationShape)[K]>;
};

/** The checks of each issue in `expect` (a bare state is `{ state }`). */
export function issueExpectations(expect: Scenario["expect"]): [number, IssueExpectation][] {
  return Object.entries(expect as Record<string, unknown>)
    .filter(([key]) => /^\d+$/.test(key))
    .map(([key, value]) => [
      Number(key),
      typeof value === "string" ? { state: value as ReportState } : (value as IssueExpectation),
    ]);
}

/** The run-wide checks in `expect`. */
export function runExpectations(expect: Scenario["expect"]): RunExpectation {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(RunExpectationShape)) {
    const value = (expect as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out as RunExpectation;
}

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
        /** Repository files (path → content) of the initial commit. */
        files: z.record(z.string(), z.string()).default({}),
        /** The CI command run on every pull request head (a check run named `ci` unless named). */
        ci: CiSchema.optional(),
        /**
         * `.github/autopilot.yml`: a mapping merged over the runner's defaults (the demo agent as primary agent),
         * or the file's text verbatim (`{demo_agent}` is replaced by the demo agent's command).
         */
        config: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}),
      })
      .default({ owner: "demo", name: "shop", defaultBranch: "main", files: {}, config: {} }),
    users: z.array(ScenarioUserSchema).default([{ login: "alice", permission: "admin" }]),
    issues: z.array(ScenarioIssueSchema).min(1, "a scenario needs at least one issue"),
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
    faults: FaultsSchema.optional(),
    /**
     * The controller: `instances` separate controller processes on the same GitHub state, each receiving every
     * webhook and ticking (two controllers at once); `process: true` runs even one as a process (implied by a
     * `killController` action). Default: one controller inside the runner's process.
     */
    controllers: z
      .strictObject({
        instances: z.number().int().min(1).max(3).default(1),
        process: z.boolean().default(false),
      })
      .optional(),
    limits: z
      .strictObject({
        /** The run ends (outcome "timeout") after this long. */
        maxDurationSeconds: z.number().positive().default(180),
        /** The controller's periodic reconcile. */
        tickMs: z.number().int().positive().default(2000),
        /** Nothing may change for this long before a settled run ends. */
        settleSeconds: z.number().nonnegative().default(2),
        /** Wall clock of one worker job. */
        jobTimeoutSeconds: z.number().positive().default(300),
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
      if (!logins.has(name.toLowerCase()) && name.toLowerCase() !== s.repo.owner.toLowerCase()) {
        ctx.addIssue({ code: "custom", path, message: `unknown user "${name}": add it under users` });
      }
    };
    s.issues.forEach((issue, i) => {
      const path = ["issues", i];
      if (issue.number !== undefined && issue.number !== i + 1) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "number"],
          message: `issues are numbered in order: this one is #${i + 1}, not #${issue.number}`,
        });
      }
      if (issue.author) knownUser(issue.author, [...path, "author"]);
      issue.comments.forEach((c, j) => {
        knownUser(c.author, [...path, "comments", j, "author"]);
      });
      for (const key of ["dependsOn", "blockedBy"] as const) {
        issue[key].forEach((n, j) => {
          knownIssue(n, [...path, key, j]);
          if (n === i + 1)
            ctx.addIssue({
              code: "custom",
              path: [...path, key, j],
              message: "an issue cannot depend on itself",
            });
        });
      }
      if (issue.parent !== undefined) knownIssue(issue.parent, [...path, "parent"]);
    });
    const walk = (rules: ScenarioRule[], path: (string | number)[]) =>
      rules.forEach((rule, i) => {
        const here = [...path, i];
        if (rule.when.issue !== undefined) knownIssue(rule.when.issue, [...here, "when", "issue"]);
        if (rule.when.pr !== undefined) knownIssue(rule.when.pr, [...here, "when", "pr"]);
        rule.do.forEach((action, j) => {
          if ("as" in action && action.as) knownUser(action.as, [...here, "do", j, "as"]);
          if ("on" in action && typeof action.on === "number")
            knownIssue(action.on, [...here, "do", j, "on"]);
          if ("review" in action && action.review && action.pr === undefined && rule.when.pr === undefined) {
            ctx.addIssue({
              code: "custom",
              path: [...here, "do", j, "pr"],
              message: "a review needs `pr: N` here or in the condition",
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
      knownIssue(Number(key), ["expect", key]);
    }
    if (s.start !== false && s.start.as) knownUser(s.start.as, ["start", "as"]);
  });

export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioIssue = z.infer<typeof ScenarioIssueSchema>;

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
  if (where.endsWith("ci")) return "a command string, or { command, name, timeoutSeconds }";
  if (where.endsWith("config")) return "a mapping (merged over the defaults) or the file's text";
  if (where.endsWith("behavior")) return "a behaviour name or a list of them";
  if (where.startsWith("expect."))
    return `under expect: an issue number with a state or { state, comments, prompts, results, … }, or one of ${Object.keys(RunExpectationShape).join(", ")}`;
  return "see the scenario format in src/sandbox/scenario/scenario-file.ts";
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

/** The CI settings of a scenario, normalized. */
export function scenarioCi(scenario: Scenario): { command: string; name: string; timeoutMs: number } | null {
  const ci = scenario.repo.ci;
  if (!ci) return null;
  if (typeof ci === "string") return { command: ci, name: "ci", timeoutMs: 300_000 };
  return { command: ci.command, name: ci.name, timeoutMs: ci.timeoutSeconds * 1000 };
}
