/**
 * What one reconcile works with: the read-only inputs (snapshot, configuration, time) and the few things it
 * builds as it goes (the state, the effects, the log, the labels as its own label effects leave them). Every
 * phase in this folder takes a `Reconciling` and returns what later phases need.
 */
import type { AutopilotConfig, ConfigError, LastGoodConfig } from "../config/index.js";
import type { ConfigOverrides, DashboardState, TaskRecord } from "../dashboard/index.js";
import { newTaskRecord } from "../dashboard/index.js";
import type { Alert } from "../session/alerts.js";
import type { LifecycleEvent } from "../session/webhook-events.js";
import type { SessionStatistics } from "../session/stats.js";
import type { Effect } from "../effects.js";
import type { TaskStatus } from "../tasks/task.js";
import type { IssueNode, PullNode, RunNode, WorldSnapshot } from "../world.js";
import type { WorkerResult } from "../tasks/worker-result.js";
import { taskBranchName } from "../contract.js";

export interface DecideInput {
  snapshot: WorldSnapshot;
  /** The state parsed from the tracking issue (`parseDashboard(body).state`); null when missing or corrupt. */
  state: DashboardState | null;
  /** The configuration in force: the file's, or the last good one when the file is bad. */
  config: AutopilotConfig;
  /**
   * When the controller's circuit breaker last opened (Actions mode: kept in the state for the next job's
   * process); absent, or older than the state's, leaves the state's.
   */
  circuitOpened?: { openedAt: string; failure: string | null } | null;
  /** The file's problems when `.github/autopilot.yml` is bad (shown on the dashboard). */
  configError?: ConfigError | null;
  /**
   * The configuration in force as the state keeps it (src/core/config/last-good-config.ts): the file's when it
   * is good, else the last good one. Its digest goes to every worker dispatched. Undefined: the state's stays.
   */
  lastGoodConfig?: LastGoodConfig | null;
  /**
   * The file is bad and no last good configuration is known: nothing is dispatched or merged (commands are
   * still answered) until the file is fixed; `config` is then the defaults, for names only.
   */
  configHeld?: boolean;
  now: Date;
  /** Makes dispatch ids unique per reconcile: `<issue>-<attempt>-<seed>` (e.g. base-36 time). */
  dispatchIdSeed: string;
  /** A `workflow_dispatch` of the controller workflow: start a session with these overrides. */
  start?: { actor: string; overrides?: ConfigOverrides | null } | null;
  /**
   * GitHub is holding this controller's requests back with a secondary rate limit (its content-creation limit,
   * for one): since when, and until when the current wait lasts. Shown on the dashboard.
   */
  githubLimitWait?: { since: Date; until: Date } | null;
}

export interface Decision {
  state: DashboardState;
  effects: Effect[];
  log: string[];
  /** What this reconcile alerted people about, for the outgoing webhook (src/app/alert-webhook.ts). */
  alerts?: Alert[];
  /** The session's and the tasks' events this reconcile saw, for the outgoing webhook's `events`. */
  events?: LifecycleEvent[];
  /**
   * The earliest moment (epoch ms) a step that only time brings falls due here — the stale-branch sweep of a
   * branch not yet stale enough. A hosted controller that leaves idle repositories to its occasional safety
   * sweep reconciles this one again then (src/core/scheduling/tick-choice.ts).
   */
  wakeAtMs?: number;
  /**
   * Ready work that Autopilot starts by itself once a slot frees or a wait for a time ends (`mode: auto`, a
   * running session, a valid configuration): set only then. Ready tasks that wait on people (a paused session,
   * `mode: semi-auto`, a dependency on a task that needs a human, a stranger's ready label) leave it unset.
   */
  readyWaitsOnAutopilot?: true;
  /** The session's figures as the dashboard shows them after this reconcile (tasks by status, usage): metrics. */
  statistics?: SessionStatistics;
}

export interface Reconciling {
  readonly input: DecideInput;
  readonly snapshot: WorldSnapshot;
  readonly now: Date;
  readonly nowMs: number;
  /** The configuration with the session's `workflow_dispatch` overrides applied. */
  readonly config: AutopilotConfig;
  readonly tracking: WorldSnapshot["trackingIssue"];
  /** The issues (no pull requests) by number, with the closes Autopilot made recently held closed. */
  readonly issues: ReadonlyMap<number, IssueNode>;
  /** The latest worker result per issue. */
  readonly results: ReadonlyMap<number, WorkerResult>;
  /** The pull requests by head branch. */
  readonly pullsByRef: ReadonlyMap<string, readonly PullNode[]>;
  /** Runs that have not completed, by task (see liveRunsOf). */
  readonly liveRunsByIssue: ReadonlyMap<number, readonly RunNode[]>;
  /** Labels as they were before this reconcile changed any (after the settle overlay). */
  readonly baseLabels: ReadonlyMap<number, readonly string[]>;

  // What this reconcile builds: changed in place by the phases, returned by decide.
  /** The state to write; its fields are replaced, the object itself stays the same. */
  readonly state: DashboardState;
  /** In execution order. */
  readonly effects: Effect[];
  readonly log: string[];
  /** Labels as they will be once this reconcile's label effects ran. */
  readonly labels: Map<number, string[]>;
  /** Who added each issue's ready label, as it will be once this reconcile's label effects ran. */
  readonly readyBy: Map<number, string | null>;
  /** Tasks this reconcile moved into an off-ramp (blocked, needs-human, timeout, failed): each is alerted once. */
  readonly offRamps: Set<number>;
  /** The alerts raised, in order (src/core/reconcile/task-alerts.ts). */
  readonly alerts: Alert[];
  /** The lifecycle events seen, in order (session-events.ts, runs/agent-switches.ts). */
  readonly events: LifecycleEvent[];
  /** When time alone brings a step due (epoch ms), as the phases found them: `Decision.wakeAtMs` is the earliest. */
  readonly wakes: number[];
  /**
   * statusOf's answers by issue (task-labels.ts), with the label array and names they were read from. Label
   * arrays are replaced, never edited, so an answer holds while the issue's array is the same one.
   */
  readonly statusByIssue: Map<
    number,
    { labels: readonly string[]; names: object; status: TaskStatus | null }
  >;
}

export function note(ctx: Reconciling, message: string): void {
  ctx.log.push(message);
}

/** The task's record in the state, created when it has none. */
export function taskRecord(ctx: Reconciling, n: number): TaskRecord {
  let r = ctx.state.tasks[n];
  if (!r) {
    r = newTaskRecord();
    ctx.state.tasks[n] = r;
  }
  return r;
}

/** Who starts tasks: a writer's `/autopilot mode` when one was given, else the configuration's `mode`. */
export function modeOf(ctx: Reconciling): "auto" | "semi-auto" {
  return ctx.state.mode ?? ctx.config.mode;
}

/** The task's branch: `<branchPrefix>issue-<n>`. */
export function taskBranch(ctx: Reconciling, n: number): string {
  return taskBranchName(ctx.config.branchPrefix, n);
}

export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
