/**
 * `reconcile(repo)`: snapshot → tracking state → config → decide → execute, the one code path behind every
 * webhook, every tick and every controller run inside Actions.
 *
 * - Bad config: the last good configuration stays in force and the problems are shown on the tracking issue
 *   (decide's job, given `configError`). It is read from the tracking issue's state — never from this
 *   process's memory, which a restart or a fresh Actions job does not have — with its text, or at its commit
 *   when the state kept only that (src/core/config/last-good-config.ts). With none, decide holds: nothing
 *   is dispatched or merged until the file is fixed.
 * - A tracking-issue revision conflict (another controller wrote it since our snapshot) re-runs the whole
 *   reconcile once, on a fresh snapshot.
 * - Reconciles of one repository never interleave in this process (a per-repository lock); two processes are
 *   kept apart by the revision check.
 */
import {
  type AutopilotConfig,
  applyConfigOverrides,
  type ConfigChoice,
  type ConfigError,
  chooseConfig,
  needsTextAtCommit,
} from "../core/config/index.js";
import { commentProcessedRule } from "../core/contract.js";
import { type ConfigOverrides, type DashboardState, parseDashboard } from "../core/dashboard/index.js";
import { type Decision, decide } from "../core/reconcile/decide.js";
import { type RepoActivity, repoActivity } from "../core/scheduling/repo-activity.js";
import type { WorldSnapshot } from "../core/world.js";
import { withRunEnded } from "../core/reconcile/runs/ending-run.js";
import { circuitFor, type GitHubCircuit } from "../github/transport/circuit.js";
import { LIMIT_WAIT_GRACE_MS, type LimitWait, recentLimitWait } from "../github/transport/limit-waits.js";
import {
  type GatewayLog,
  type OctokitSurface,
  type RepoRef,
  repoKey,
  silentLog,
} from "../github/transport/octokit-surface.js";
import { type RequestCounts, totalOf } from "../github/transport/counter.js";
import type { EffectOutcome } from "../github/execution/effect-context.js";
import { type ExecuteReport, Gateway } from "../github/gateway.js";
import { memoryFor } from "../github/repo-memories.js";
import { relevantLogins } from "../github/permissions.js";
import { type SnapshotSettings, snapshotSettings } from "../github/snapshot/snapshot.js";
import type { RepoMemory, SnapshotFacts } from "../github/snapshot/snapshot-context.js";
import type { AlertWebhook } from "./alert-webhook.js";
import { withLock } from "./scheduler.js";

export const GITHUB_ACTIONS_BOT = "github-actions[bot]";

export interface ReconcileOptions {
  octokit: OctokitSurface;
  /**
   * Keep the circuit breaker's last opening in the tracking issue's state, and start on probation after a recent
   * one the state recorded (the controller inside Actions, a new process per job: src/github/transport/circuit.ts).
   */
  persistCircuit?: boolean;
  repo: RepoRef;
  log?: GatewayLog;
  now?: () => Date;
  /** Log every write as "would …" and skip it (also when the config or a workflow_dispatch asks for it). */
  dryRun?: boolean;
  /** Login of Autopilot's bot: `<app-slug>[bot]` for the App, `github-actions[bot]` inside Actions. */
  botLogin?: string;
  /** The breaker of this GitHub host (default: the process-wide one for `baseUrl`). */
  circuit?: GitHubCircuit;
  /** REST base URL, to pick the process-wide circuit (default https://api.github.com). */
  baseUrl?: string;
  /** Most writing effects per run (default 100); the rest wait for the next reconcile. */
  operationLimit?: number;
  /** A `workflow_dispatch` of the controller workflow: start a session with these overrides. */
  start?: { actor: string; overrides?: ConfigOverrides | null } | null;
  /** The outgoing alert webhook's queue (src/app/alert-webhook.ts); none: alerts are comments only. */
  alerts?: AlertWebhook;
  /** A worker run reconciling as its last step: it counts as ended (src/core/reconcile/runs/ending-run.ts). */
  endingRunId?: number | null;
  /**
   * What earlier reconciles of this repository learned (default: the process-wide memory of
   * src/github/repo-memories.ts). The seeded simulation runs two controllers in one process and gives each its own,
   * as two processes have.
   */
  memory?: RepoMemory;
}

export interface ReconcileResult {
  decision: Decision;
  report: ExecuteReport;
  snapshot: WorldSnapshot;
  /** Requests of the whole reconcile (all attempts), per endpoint. */
  requests: RequestCounts;
  /** 1, or 2 after a revision conflict. */
  attempts: number;
  /**
   * GraphQL points the snapshot queries cost (all attempts; GitHub's `rateLimit.cost`, a budget of its own
   * apart from the REST requests), and what the last answer said is left. Null when no answer carried it.
   */
  graphql: { points: number; remaining: number; resetAt: string } | null;
  configError: ConfigError | null;
  dryRun: boolean;
  /** Whether the repository needs the periodic tick (src/core/scheduling/repo-activity.ts). */
  activity: RepoActivity;
}

const locks = new Map<string, Promise<unknown>>();

export function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  return withLock(locks, repoKey(options.repo), () => reconcileUnlocked(options));
}

async function reconcileUnlocked(options: ReconcileOptions): Promise<ReconcileResult> {
  const log = options.log ?? silentLog;
  const total: RequestCounts = {};
  let last: Omit<ReconcileResult, "requests" | "attempts" | "graphql"> | null = null;
  let graphql: ReconcileResult["graphql"] = null;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const { result, requests, rateLimit } = await reconcileOnce(options, log);
    for (const [endpoint, n] of Object.entries(requests)) total[endpoint] = (total[endpoint] ?? 0) + n;
    graphql = addPoints(graphql, rateLimit);
    last = result;
    if (!result.report.conflict) {
      const points = graphql ? `, ${graphql.points} GraphQL point(s) (${graphql.remaining} left)` : "";
      log.info(
        `reconciled ${options.repo.owner}/${options.repo.name}: ${result.decision.effects.length} effect(s), ${totalOf(total)} request(s)${points}`,
      );
      return { ...result, requests: total, attempts: attempt, graphql };
    }
    log.warn(
      `the tracking issue changed since the snapshot (${result.report.outcomes.find((o) => o.status === "conflict")?.detail ?? "revision conflict"})${attempt === 1 ? "; reconciling again" : ""}`,
    );
  }
  return { ...last!, requests: total, attempts: 2, graphql };
}

function addPoints(
  sum: ReconcileResult["graphql"],
  rateLimit: SnapshotFacts["rateLimit"],
): ReconcileResult["graphql"] {
  if (!rateLimit) return sum;
  return {
    points: (sum?.points ?? 0) + rateLimit.cost,
    remaining: rateLimit.remaining,
    resetAt: rateLimit.resetAt,
  };
}

function circuitOf(options: ReconcileOptions): GitHubCircuit {
  return options.circuit ?? circuitFor(options.baseUrl ?? "https://api.github.com");
}

/**
 * The breaker's state between processes: a recent opening the tracking issue's state recorded puts this
 * process's circuit on probation; this process's own last opening goes to the state.
 */
function carryCircuit(
  circuit: GitHubCircuit,
  state: DashboardState | null,
  at: Date,
  log: GatewayLog,
): { openedAt: string; failure: string | null } | null {
  const kept = state?.circuit;
  if (kept && circuit.recallOpening({ at: Date.parse(kept.openedAt), failure: kept.failure }, at.getTime()))
    log.info(
      `GitHub's circuit opened at ${kept.openedAt} in an earlier job (${kept.failure ?? "no failure recorded"}): on probation until it has answered ${circuit.options.successThreshold} times`,
    );
  const own = circuit.lastOpening;
  return own ? { openedAt: new Date(own.at).toISOString(), failure: own.failure } : null;
}

/**
 * The secondary-limit wait the dashboard shows (while it lasts and a minute after): the host's latest, noted by
 * the rate-limit handler (src/github/transport/limit-waits.ts), joined with this repository's write pause, which may be
 * longer (src/github/transport/circuit.ts `pauseWrites`).
 */
function limitWaitFor(options: ReconcileOptions, nowMs: number): LimitWait | null {
  const host = recentLimitWait(options.baseUrl, nowMs);
  const pause = circuitOf(options).lastWritePause(repoKey(options.repo));
  const repo = pause && pause.until + LIMIT_WAIT_GRACE_MS >= nowMs ? pause : null;
  if (!host) return repo ? { at: repo.since, until: repo.until } : null;
  if (!repo) return host;
  return { at: Math.min(host.at, repo.since), until: Math.max(host.until, repo.until) };
}

/** What reconcile's `settingsFor` chose, beside the settings the snapshot reads with. */
interface ChosenSettings extends SnapshotSettings {
  /** The configuration in force: the file's, the last good one while the file is bad, or none. */
  choice: ConfigChoice;
  /** The tracking issue's state, null before there is one. */
  state: DashboardState | null;
}

/** `base` with a `workflow_dispatch`'s overrides applied (unchanged when they do not apply). */
function effective(base: AutopilotConfig, overrides: ConfigOverrides | null | undefined): AutopilotConfig {
  if (!overrides) return base;
  const applied = applyConfigOverrides(base, overrides, "workflow_dispatch overrides");
  return applied.ok ? applied.config : base;
}

async function reconcileOnce(
  options: ReconcileOptions,
  log: GatewayLog,
): Promise<{
  result: Omit<ReconcileResult, "requests" | "attempts" | "graphql">;
  requests: RequestCounts;
  rateLimit: SnapshotFacts["rateLimit"];
}> {
  const now = options.now ?? (() => new Date());
  const botLogin = options.botLogin ?? GITHUB_ACTIONS_BOT;
  const gateway = new Gateway({
    client: options.octokit,
    repo: options.repo,
    botLogin,
    log,
    dryRun: options.dryRun ?? false,
    circuit: circuitOf(options),
    memory: options.memory ?? memoryFor(options.repo),
    revisionOf: (body) => parseDashboard(body).state?.revision ?? null,
    ...(options.operationLimit !== undefined ? { operationLimit: options.operationLimit } : {}),
    now: () => now().getTime(),
  });

  // Config and state are read from the same snapshot; what the snapshot needs (labels, branch prefix,
  // worker workflow) comes from them with any workflow_dispatch overrides applied. The snapshot hands back what
  // `settingsFor` chose for the file's text: the configuration and the tracking issue's state.
  const settingsFor = async (
    configText: string | null,
    trackingBody: string | null,
  ): Promise<ChosenSettings> => {
    const state = trackingBody === null ? null : parseDashboard(trackingBody).state;
    const input = { fileText: configText, commit: null, lastGood: state?.lastGoodConfig ?? null };
    const commit = needsTextAtCommit(input);
    let textAtCommit: string | null | undefined;
    if (commit) {
      log.info(`reading the last good configuration at ${commit.slice(0, 12)} (the file is bad)`);
      textAtCommit = await gateway.configAt(commit);
    }
    const choice = chooseConfig({ ...input, ...(textAtCommit !== undefined ? { textAtCommit } : {}) });
    const overrides = options.start?.overrides ?? state?.overrides;
    return { ...snapshotSettings(effective(choice.config, overrides)), choice, state };
  };

  const { world, facts } = await gateway.snapshot({
    settingsFor,
    permissionsFor: (snapshot, settings) => {
      return relevantLogins(snapshot, {
        readyLabel: settings.readyLabel,
        needsHumanLabel: settings.needsHumanLabel,
        processed: commentProcessedRule(settings.state),
      });
    },
  });
  const { choice: chosen, state } = facts.settings;
  const configError: ConfigError | null = chosen.error;
  const fileConfig: AutopilotConfig = chosen.config;
  // The record of a good file names the default-branch commit it was read at.
  const lastGoodConfig =
    chosen.source === "file" && chosen.record.commit === null && chosen.record !== state?.lastGoodConfig
      ? { ...chosen.record, commit: facts.defaultBranchSha }
      : chosen.record;
  if (configError) {
    log.warn(configError.message.split("\n")[0] ?? "invalid config");
    log.warn(
      chosen.source === "last-good"
        ? "the last good configuration stays in force until the file is fixed"
        : "no earlier valid configuration: nothing is dispatched or merged until the file is fixed",
    );
  }

  const at = now();
  const circuitOpened = options.persistCircuit ? carryCircuit(circuitOf(options), state, at, log) : undefined;
  const limitWait = limitWaitFor(options, at.getTime());
  const decision = decide({
    snapshot: options.endingRunId ? withRunEnded(world, options.endingRunId, at) : world,
    state,
    config: fileConfig,
    configError,
    lastGoodConfig,
    configHeld: chosen.source === "none",
    now: at,
    dispatchIdSeed: at.getTime().toString(36),
    start: options.start ?? null,
    githubLimitWait: limitWait ? { since: new Date(limitWait.at), until: new Date(limitWait.until) } : null,
    ...(circuitOpened ? { circuitOpened } : {}),
  });
  for (const line of decision.log) log.debug(line);

  const inForce = effective(fileConfig, decision.state.overrides);
  gateway.dryRun = (options.dryRun ?? false) || inForce.dryRun;
  const report = await gateway.execute(decision.effects, { workerWorkflow: inForce.workerWorkflow });
  // Alerts leave only with the state that records them: a conflict decides them again (with the same keys), and
  // a tracking write that was queued or failed leaves them to the reconcile that does write it.
  const outgoing = (decision.alerts?.length ?? 0) + (decision.events?.length ?? 0);
  if (outgoing > 0 && !report.conflict && stateWritten(report.outcomes)) {
    if (gateway.dryRun) log.info(`would send up to ${outgoing} alert(s) and event(s) to alerts.webhook`);
    else
      options.alerts?.send(
        inForce.alerts.webhook,
        decision.alerts ?? [],
        options.repo,
        at,
        decision.events ?? [],
      );
  }
  const activity = repoActivity({
    snapshot: world,
    decision,
    labels: inForce.labels,
    session: decision.state.session.status,
  });
  return {
    result: { decision, report, snapshot: world, configError, dryRun: gateway.dryRun, activity },
    requests: gateway.requests(),
    rateLimit: facts.rateLimit,
  };
}

/**
 * Whether this reconcile's tracking-issue write (the state) is on GitHub: written, or nothing to change (in a dry
 * run, what would have been written: its alerts are only logged).
 */
export function stateWritten(outcomes: readonly EffectOutcome[]): boolean {
  const write = outcomes.find((o) => o.effect.type === "writeTrackingIssue");
  return write === undefined || ["done", "skipped", "dry-run"].includes(write.status);
}
