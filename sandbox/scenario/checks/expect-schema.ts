/**
 * The `expect` part of a scenario file: per issue number, its final state or an object of checks
 * (`IssueExpectationSchema`); beside them, run-wide checks on the dashboard and the dispatches
 * (`RunExpectationShape`). Checked by sandbox/scenario/checks/expectations.ts.
 */
import { z } from "zod";
import { REPORT_STATES, type ReportState } from "../scenario-fields.js";

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

/**
 * The Actions controller's schedule over a quiet stretch (idle-schedule.ts): from `afterSeconds` after an
 * Autopilot comment matching `after` to the next comment matching `before`, scheduled controller runs whose job
 * ran (billed) and were skipped (free).
 */
const IdleScheduleSchema = z.strictObject({
  after: z.string().min(1),
  afterSeconds: z.number().nonnegative().default(0),
  before: z.string().min(1),
  ran: CountSchema,
  skipped: CountSchema.optional(),
});

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
  /** Each pattern matches the body of the task's pull request (its summary: quality gates, cost, human gate). */
  pullBody: PatternsSchema.optional(),
  /** What the task's finished worker runs cost together (their results' `costUsd`), at most. */
  costUsd: z.strictObject({ max: z.number().nonnegative() }).optional(),
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
  /** Files on the task's branch at the end: path → pattern its content matches (null: absent). */
  branchFiles: z.record(z.string(), z.string().nullable()).optional(),
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
      /** Every commit the PR brings is one GitHub signed (verified), or (false) none is. */
      verified: z.boolean().optional(),
      /**
       * Autopilot's reviewer (`review`) asked for changes on an earlier head, and approved the head that was
       * merged (its reviews' hidden markers, src/core/contract.ts `reviewMarker`).
       */
      reviewerChangesMade: z.boolean().optional(),
      /** Each pattern matches a review on the PR: its body or one of its line comments (`path:line body`). */
      reviews: PatternsSchema.optional(),
    })
    .optional(),
  /** Files on the default branch at the end: path → pattern its content matches (null: absent). */
  files: z.record(z.string(), z.string().nullable()).optional(),
  /**
   * Best of N: the pull requests on the task's candidate branches (`<branchPrefix>issue-N-candidate-K`), this
   * many, every one closed unmerged at the end, and no candidate branch left.
   */
  candidates: z.strictObject({ closed: z.number().int().nonnegative() }).optional(),
});
type IssueExpectation = z.infer<typeof IssueExpectationSchema>;

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
  /** How many comments by Autopilot on the tracking issue match this pattern: `{ pattern, count }`. */
  dashboardCommentCount: z
    .strictObject({ pattern: PatternsSchema.transform((list) => list[0]!), count: CountSchema })
    .optional(),
  /**
   * Each pattern matches the text of a delivery the alert webhook's receiver got (sandbox/scenario/alert-receiver.ts,
   * started for it); every delivery must carry a valid signature, and no alert may come twice.
   */
  alertWebhook: PatternsSchema.optional(),
  /** No issue or pull request carries two comments by Autopilot with the same text (no write sent twice). */
  noDuplicateComments: z.boolean().optional(),
  /**
   * Checks for the hosted controller only: what a process remembers between reconciles (an Actions controller
   * job is a fresh process each time, so what one job met the next cannot show).
   */
  hosted: z.strictObject({ dashboardSeen: PatternsSchema.optional() }).optional(),
  /**
   * Checks for the Actions controller only: every controller run that succeeded kept its figures as the
   * `autopilot-metrics` artifact (templates/workflows/autopilot-controller.yml, format
   * `autopilot-run-metrics/1`), and the most tasks of a status any of them showed (`done: { min: 4 }`).
   */
  actions: z
    .strictObject({
      metrics: z.record(z.string().min(1), CountSchema).optional(),
      /** The schedule over a quiet stretch: scheduled jobs that ran (billed) and were skipped (idle-schedule.ts). */
      idleSchedule: IdleScheduleSchema.optional(),
    })
    .optional(),
  /** The session status at the end (idle, running, pausing, paused, stopping, completed). */
  session: z.string().min(1).optional(),
  /** Session statuses the dashboard showed during the run, in this order (others may come between). */
  sessions: z.array(z.string().min(1)).min(1).optional(),
  /** No worker run was dispatched while the dashboard said the session was paused or pausing. */
  noDispatchWhilePaused: z.boolean().optional(),
  /**
   * At most this many worker runs were at work at once: in progress and without their finished result yet (a
   * run's last step, the reconcile of its end, may overlap the next run's start).
   */
  maxConcurrentRuns: z.number().int().positive().optional(),
  /** Pull requests from forks merged by the end (0: none ever was). */
  forkPullsMerged: z.number().int().nonnegative().optional(),
  /**
   * Requests the sandbox served over the whole run, by endpoint as the report counts them
   * (`PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge: 1`); a missing endpoint counts 0.
   */
  requests: z.record(z.string().min(1), CountSchema).optional(),
  /**
   * Artifacts kept by the repository's workflow runs at the end: name → patterns its files' text must each
   * match, and `!pattern` one it must not (the agent's transcript: `autopilot-transcript-1-1`).
   */
  artifacts: z.record(z.string().min(1), PatternsSchema).optional(),
};
type RunExpectation = {
  [K in keyof typeof RunExpectationShape]?: z.infer<(typeof RunExpectationShape)[K]>;
};

/** The checks of each issue in `expect` (a bare state is `{ state }`). */
export function issueExpectations(expect: Record<string, unknown>): [number, IssueExpectation][] {
  return Object.entries(expect)
    .filter(([key]) => /^\d+$/.test(key))
    .map(([key, value]) => [
      Number(key),
      typeof value === "string" ? { state: value as ReportState } : (value as IssueExpectation),
    ]);
}

/** The run-wide checks in `expect`. */
export function runExpectations(expect: Record<string, unknown>): RunExpectation {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(RunExpectationShape)) {
    const value = expect[key];
    if (value !== undefined) out[key] = value;
  }
  return out as RunExpectation;
}
