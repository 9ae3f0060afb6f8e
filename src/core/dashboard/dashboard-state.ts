/**
 * The machine state Autopilot keeps in the tracking issue between reconciles (zod, versioned `v1`).
 *
 * It holds only what cannot be derived from labels, PRs, runs and worker results: per-task attempt and
 * retry counters, the live dispatch, waits, feedback rounds, the last result, usage totals and the human
 * gate rules that fired; the session; the command cursor; history counters; incidents. A task that is done
 * (or skipped) leaves the state: its numbers go into the history counters and, in batches, into a history
 * comment on the tracking issue (compact-state.ts).
 */
import { z } from "zod";
import { MAX_ITERATIONS } from "../tasks/iteration-limit.js";
import { MAX_BEST_OF_CANDIDATES } from "../config/config-section-schemas.js";
import { LAST_GOOD_TEXT_CAP } from "../config/last-good-config.js";
import { SESSION_REASONS, SESSION_STATUSES } from "../session/session.js";

export const TRACKING_ISSUE_TITLE = "Autopilot dashboard";
export const TRACKING_MARKER = "<!-- autopilot:tracking-issue -->";

/** What the rendered body is kept under (UTF-8 bytes, so it holds for characters of any width). */
export const BODY_CAP = 64_000;
/** The state block is compacted (history moved out, older records trimmed) above this many characters. */
export const STATE_CAP = 24_000;
/** Finished tasks waiting to be written out as one history comment. */
export const HISTORY_BATCH = 20;

const isoTime = z.string().max(40);
const count = z.number().int().nonnegative();

const SessionSchema = z.object({
  status: z.enum(SESSION_STATUSES),
  since: isoTime,
  reason: z.enum(SESSION_REASONS),
  actor: z.string().max(100),
  detail: z.string().max(500).optional(),
  startedAt: isoTime.nullable(),
});

/** One task's record: only what labels, PRs, runs and worker results cannot tell. */
const TaskRecordSchema = z.object({
  /** Dispatches made so far; the last one's attempt number (1-based; 0 = never dispatched). */
  attempt: count.default(0),
  /** Earlier retries (crashes, retried failures, manual retries): the scoring penalty. */
  retries: count.default(0),
  /** Failed attempts since the last manual retry (weighed against maxRetries). */
  failures: count.default(0),
  /** The live (or last) dispatch. */
  dispatchId: z.string().max(100).optional(),
  dispatchedAt: isoTime.optional(),
  runId: z.number().int().positive().optional(),
  /** dispatchId of the last finished worker result acted on. */
  handled: z.string().max(100).optional(),
  /** Not to be dispatched before this time (rate/usage limit reset, retry backoff). */
  waitUntil: isoTime.optional(),
  /** Times the PR's feedback (checks, reviews, conflicts) sent the task back to a worker. */
  feedbackRounds: count.default(0),
  /** Head SHA the last feedback was about (feedback is sent once per head). */
  feedbackSha: z.string().max(64).optional(),
  /**
   * Node id of the comment the worker keeps its result in (one comment, edited in place): the snapshot
   * fetches it directly once later comments have pushed it out of the recent ones it reads.
   */
  resultComment: z.string().max(100).optional(),
  /** Last result: a worker outcome, or `crash` / `lost` / `cancelled` / `feedback` / `retry`. */
  result: z.string().max(40).optional(),
  reason: z.string().max(300).optional(),
  /** When the task entered its current off-ramp (needs-human: when the question was asked). */
  since: isoTime.optional(),
  iterations: count.default(0),
  tokensIn: z.number().nonnegative().default(0),
  tokensOut: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  /** The reviewer's share of `costUsd` (`review`), across the task's jobs. */
  reviewUsd: z.number().nonnegative().optional(),
  startedAt: isoTime.optional(),
  /** Human-gate rules that fired for this task (never cleared by editing a PR body). */
  gate: z.array(z.string().max(120)).max(20).optional(),
  pr: z.number().int().positive().optional(),
  /** A cancel of the live run was requested at this time. */
  cancelAt: isoTime.optional(),
  /**
   * A merge was requested for this head SHA: which attempt, on what basis (src/core/gates/merge-refusal.ts
   * `mergeBasis`), GitHub's refusal when it refused, and how many attempts are allowed before a person must
   * say `/autopilot retry`.
   */
  merge: z
    .object({
      sha: z.string().max(64),
      at: isoTime,
      basis: z.string().max(16).optional(),
      attempt: z.number().int().nonnegative().optional(),
      allowed: z.number().int().nonnegative().optional(),
      refused: z.string().max(200).optional(),
      /** GitHub's mechanism the merge was handed to after the refusal (src/core/gates/merge-refusal.ts). */
      via: z.enum(["auto-merge", "queue", "update-branch"]).optional(),
      /** When Autopilot first saw that mechanism no longer holding the PR (it waits a little for GitHub's merge). */
      goneAt: isoTime.optional(),
    })
    .optional(),
  /** The status label Autopilot last gave the task, and when (a stale read cannot undo it for a while). */
  label: z.string().max(20).optional(),
  labelAt: isoTime.optional(),
  /** One-time comments already posted (`no-checks-<PR>`, `gate-<PR>`) and cancels asked (`cancel:<run>`). */
  notices: z.array(z.string().max(80)).max(12).optional(),
  /**
   * This task's own iteration limit, raised by `/autopilot retry #N --iterations M`: it goes to every worker of
   * the task as the `maxIterations` of its `config` input (src/worker/settings/config-input.ts) in place of the file's.
   */
  maxIterations: z.number().int().min(1).max(MAX_ITERATIONS).optional(),
  /**
   * `/autopilot rollback #N` of a merged task (src/core/reconcile/commands/rollback.ts): the merged PR whose revert was
   * asked for, and when. While it is set the task's PR is the revert PR, and its merge makes the task ready.
   */
  rollback: z
    .object({ merged: z.number().int().positive(), at: isoTime, by: z.string().max(40).optional() })
    .optional(),
  /**
   * Pull requests that are no longer the task's though they are on its branch: merged PRs whose revert merged,
   * and revert PRs closed unmerged (src/core/reconcile/pulls/task-pulls.ts leaves them out).
   */
  dropped: z.array(z.number().int().positive()).max(20).optional(),
  /**
   * `/autopilot rollback #N` of unmerged work asked at this time: until the snapshot shows the task branch gone,
   * its deletion is asked again every reconcile and no worker starts (one would resume the old branch).
   */
  discard: isoTime.optional(),
  /**
   * A writer's `/autopilot fix` (src/core/reconcile/commands/fix-follow-up.ts) waiting for the task's pull request
   * to be free of a worker: then it goes back to one with the instructions of comment `comment`.
   */
  fixAsked: z
    .object({ at: isoTime, by: z.string().max(40), comment: z.number().int().positive() })
    .optional(),
  /**
   * `/autopilot follow-up #N` of a merged task: the merged PR (dropped from the task's PRs), and the time from
   * which edits of the issue's text by people without write access take the task out (the PR's creation); when
   * it was asked (the issue is being opened again: src/core/reconcile/closed-issues.ts).
   */
  followUp: z
    .object({ merged: z.number().int().positive(), since: isoTime, by: z.string().max(40), at: isoTime })
    .optional(),
  /**
   * The plan gate (src/core/reconcile/commands/plan-approval.ts): the digest of the plan the last planning run
   * proposed, when, and the writer who approved it (the next workers implement that plan).
   */
  plan: z
    .object({
      digest: z.string().regex(/^[0-9a-f]{64}$/),
      at: isoTime,
      approvedBy: z.string().max(40).optional(),
    })
    .optional(),
  /**
   * Best of N (src/core/reconcile/runs/best-of.ts): the round of candidates this task is worked by, each
   * candidate's attempt, agent, outcome, pull request and spend; then the winner (0: none passed) and when it
   * was chosen.
   */
  bestOf: z
    .object({
      of: z.number().int().min(1).max(MAX_BEST_OF_CANDIDATES),
      at: isoTime,
      candidates: z
        .array(
          z.object({
            attempt: count,
            dispatchId: z.string().max(100),
            agent: z.string().max(80),
            outcome: z.string().max(40).optional(),
            reason: z.string().max(200).optional(),
            pr: z.number().int().positive().optional(),
            /**
             * Human-gate rules the candidate's worker reported (the controller reads the diff itself too): the
             * winner's become the task's `gate`, as a worker's do.
             */
            rules: z.array(z.string().max(120)).max(20).optional(),
            costUsd: z.number().nonnegative().default(0),
            tokens: z.number().nonnegative().default(0),
            at: isoTime.optional(),
          }),
        )
        .max(MAX_BEST_OF_CANDIDATES)
        .default([]),
      winner: z.number().int().min(0).max(MAX_BEST_OF_CANDIDATES).optional(),
      chosenAt: isoTime.optional(),
    })
    .optional(),
  /** The dispatch id of the task's last planning run (the plan gate): a plan waits for approval only after it. */
  planRun: z.string().max(100).optional(),
  /** The task text a writer approved (src/core/tasks/task-text.ts): its digest, and since when edits are new. */
  text: z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), since: isoTime }).optional(),
  /** The writer whose ready label approved the text dispatched (src/core/reconcile/task-alerts.ts mentions them). */
  approvedBy: z.string().max(40).optional(),
  /** The last agent switch sent as an `agent-switched` event (src/core/reconcile/runs/agent-switches.ts). */
  agentSwitch: z.string().max(200).optional(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** A finished task waiting to go out in a history comment. */
const HistoryEntrySchema = z.object({
  issue: z.number().int().positive(),
  title: z.string().max(80),
  outcome: z.enum(["done", "skipped", "closed"]),
  at: isoTime,
  iterations: count.default(0),
  tokens: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  attempts: count.default(0),
  /** The reviewer's share of `costUsd`, when the task was reviewed. */
  reviewUsd: z.number().nonnegative().optional(),
  pr: z.number().int().positive().optional(),
  /** The task's first dispatch: the session report's time for it runs from here to `at`. */
  startedAt: isoTime.optional(),
});
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;

const Extreme = z.object({ issue: z.number().int().positive(), iterations: count }).nullable();

/** Totals of the tasks that have left the state. */
const HistorySchema = z.object({
  completed: count.default(0),
  skipped: count.default(0),
  closed: count.default(0),
  merges: count.default(0),
  iterations: count.default(0),
  completedIterations: count.default(0),
  fastest: Extreme.default(null),
  slowest: Extreme.default(null),
  tokensIn: z.number().nonnegative().default(0),
  tokensOut: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  /** History comments written so far. */
  comments: count.default(0),
});

const IncidentSchema = z.object({
  at: isoTime,
  kind: z.string().max(40),
  message: z.string().max(400),
});

/** Overrides a `workflow_dispatch` of the controller started the session with. */
export const ConfigOverridesSchema = z
  .object({
    maxParallel: z.number().int().min(1).max(20).optional(),
    labels: z.record(z.string().max(20), z.string().max(50)).optional(),
    dryRun: z.boolean().optional(),
  })
  .strict();
export type ConfigOverrides = z.infer<typeof ConfigOverridesSchema>;

/**
 * What one worker's `config` input may carry: the session's overrides and the task's own iteration limit
 * (`/autopilot retry #N --iterations M`). Raising it spends more of the budget, which a writer may do; it
 * loosens no safety setting.
 */
export const JobOverridesSchema = ConfigOverridesSchema.extend({
  maxIterations: z.number().int().min(1).max(MAX_ITERATIONS).optional(),
  /**
   * The plan gate (src/core/reconcile/commands/plan-approval.ts): `propose` makes the job a planning run, `split` a
   * splitting run (src/core/reconcile/commands/split-command.ts); a digest makes it implement the approved plan with that digest, which it finds in Autopilot's own plan comment. Not
   * a setting of the configuration: the worker takes it out before applying the rest.
   */
  plan: z.union([z.literal("propose"), z.literal("split"), z.string().regex(/^[0-9a-f]{64}$/)]).optional(),
  /**
   * Best of N (src/core/reconcile/runs/best-of.ts): the job is candidate `candidate` of a best-of round. It runs
   * the configuration's `bestOf.candidates[candidate - 1]` alone, on that candidate's branch, and leaves the
   * task in progress. Not a setting of the configuration either.
   */
  candidate: z.number().int().min(1).max(MAX_BEST_OF_CANDIDATES).optional(),
}).strict();

/**
 * The last good `.github/autopilot.yml` (src/core/config/last-good-config.ts): in force while the file is
 * bad, in every controller and every worker. Compaction drops the text first; the commit names it still.
 */
const LastGoodConfigSchema = z.object({
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
    .nullable(),
  text: z.string().max(LAST_GOOD_TEXT_CAP).optional(),
});

export const DashboardStateSchema = z.object({
  version: z.literal(1),
  /** +1 per write of the tracking issue; the writer checks it to detect a concurrent writer. */
  revision: count.default(0),
  session: SessionSchema,
  overrides: ConfigOverridesSchema.nullable().default(null),
  /** A writer's `/autopilot mode`: who starts tasks, instead of the file's `mode`, until the next one. */
  mode: z.enum(["auto", "semi-auto"]).nullable().default(null),
  lastGoodConfig: LastGoodConfigSchema.nullable().default(null),
  /** Task records by issue number. */
  tasks: z.record(z.string().regex(/^\d+$/), TaskRecordSchema).default({}),
  consecutiveFailures: count.default(0),
  /** The issues of the current run of failures, for the pause message. */
  failedInARow: z.array(z.number().int().positive()).max(50).default([]),
  /** Newest comment processed (ids grow with time). */
  cursor: z.object({ id: z.number().int().nonnegative(), at: isoTime }).nullable().default(null),
  /** Recently processed comment ids (bounded). */
  processed: z.array(z.number().int().nonnegative()).max(500).default([]),
  /**
   * Line comments of pull-request reviews (commands given there): read since `since`, these ids processed
   * (bounded; a command there also carries Autopilot's reaction). Null until first read (src/core/contract.ts).
   */
  reviewComments: z
    .object({ since: isoTime, processed: z.array(z.number().int().nonnegative()).max(300).default([]) })
    .nullable()
    .default(null),
  /** Logins that already got the polite refusal (bounded). */
  refused: z.array(z.string().max(40)).max(100).default([]),
  /**
   * Reactions Autopilot gave comments it processed, kept until a snapshot shows them: the state that marks a
   * command processed is written first, so a reaction lost after it (a killed process, a write held by a limit)
   * is given again (src/core/reconcile/commands/owed-reactions.ts). Bounded.
   */
  reactions: z
    .array(
      z.object({
        id: z.number().int().nonnegative(),
        content: z.enum(["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]),
        review: z.boolean().optional(),
        at: isoTime,
        /** How many times it was given again (owed-reactions.ts stops at AGAIN_AT_MOST). */
        again: z.number().int().nonnegative().max(100).optional(),
      }),
    )
    .max(30)
    .default([]),
  history: HistorySchema.prefault({}),
  pendingHistory: z.array(HistoryEntrySchema).max(200).default([]),
  incidents: z.array(IncidentSchema).max(20).default([]),
  /** Tasks that just left the state (done, skipped, closed): a stale read may still show them open. */
  recent: z
    .array(
      z.object({
        issue: z.number().int().positive(),
        outcome: z.enum(["done", "skipped", "closed"]),
        at: isoTime,
      }),
    )
    .max(30)
    .default([]),
  /** Pull requests on task branches that are not the task's (a fork, not Autopilot's): each reported once. */
  ignoredPulls: z.array(z.number().int().positive()).max(100).default([]),
  /** The controller's own human-gate reading per PR head SHA (src/core/gates/diff-gate.ts), read once per head. */
  diffGates: z
    .array(
      z.object({
        pr: z.number().int().positive(),
        sha: z.string().max(64),
        rules: z.array(z.string().max(120)).max(20),
        /** humanGateDigest of the settings the rules were read under; a verdict without one is read again. */
        gate: z.string().max(16).optional(),
        /** Lines added and removed in the diff (best of N prefers the smaller). */
        lines: count.optional(),
      }),
    )
    .max(30)
    .default([]),
  /**
   * Every agent of a worker was limited (rate or usage limit): no task is dispatched before this time, the
   * earliest reset reported (src/core/reconcile/task-alerts.ts).
   */
  agentsLimitedUntil: isoTime.nullable().default(null),
  /**
   * When the circuit breaker in front of GitHub last opened, and on what failure (src/github/transport/circuit.ts):
   * a controller job inside Actions, a new process, starts on probation after a recent opening (design document
   * 003's persisted breaker states). Absent until the breaker first opens.
   */
  circuit: z.object({ openedAt: isoTime, failure: z.string().max(200).nullable() }).optional(),
  /** The tracking issue a pin was requested for (0: the one being created). */
  pinRequested: z.number().int().nonnegative().nullable().default(null),
  /**
   * Open epics by parent issue number (src/core/reconcile/epic-pooling.ts): when and by which writer the parent's ready
   * label was given (the approval its pooled sub-issues' text is judged from), which sub-issues it pooled then,
   * those it did not because of how they were linked (src/core/tasks/sub-issue-links.ts: `linkedBy` absent when
   * the link was not read, null for a deleted account), and a digest of the progress comment last written (it is
   * written only when it changes). Absent without epics.
   */
  epics: z
    .record(
      z.string().regex(/^\d+$/),
      z.object({
        at: isoTime,
        by: z.string().max(40),
        pooled: z.array(z.number().int().positive()).max(50).default([]),
        refused: z
          .array(
            z.object({
              issue: z.number().int().positive(),
              linkedBy: z.string().max(40).nullable().optional(),
            }),
          )
          .max(50)
          .optional(),
        comment: z.string().max(16).optional(),
      }),
    )
    .optional(),
  /**
   * `/autopilot split #N` by issue number (src/core/reconcile/commands/split-command.ts): who asked and when, and
   * once a writer approved the proposal, its digest, who and when (the sub-issues are created from Autopilot's
   * own proposal comment with that digest, until the issue is an epic holding them). Absent without splits.
   */
  splits: z
    .record(
      z.string().regex(/^\d+$/),
      z.object({
        by: z.string().max(40),
        at: isoTime,
        approved: z
          .object({ digest: z.string().regex(/^[0-9a-f]{64}$/), by: z.string().max(40), at: isoTime })
          .optional(),
      }),
    )
    .optional(),
  /** Digest of the rendered dashboard (times left out): a write happens only when it changes. */
  digest: z.string().max(16).default(""),
  renderedAt: isoTime.nullable().default(null),
});
export type DashboardState = z.infer<typeof DashboardStateSchema>;

export function emptyState(now: Date): DashboardState {
  return DashboardStateSchema.parse({
    version: 1,
    revision: 0,
    session: {
      status: "idle",
      since: now.toISOString(),
      reason: "initial",
      actor: "autopilot",
      startedAt: null,
    },
  });
}

/** A record with every default filled in. */
export function newTaskRecord(): TaskRecord {
  return TaskRecordSchema.parse({});
}
