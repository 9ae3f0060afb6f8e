/**
 * `reconcile(repo)`: snapshot → tracking state → config → decide → execute, the one code path behind every
 * webhook, every tick and every controller run inside Actions.
 *
 * - Bad config: the last good configuration of this repository (remembered in this process; the defaults
 *   otherwise) stays in force and the problems are shown on the tracking issue (decide's job, given
 *   `configError`).
 * - A tracking-issue revision conflict (another controller wrote it since our snapshot) re-runs the whole
 *   reconcile once, on a fresh snapshot.
 * - Reconciles of one repository never interleave in this process (a per-repository lock); two processes are
 *   kept apart by the revision check.
 */
import {
  type AutopilotConfig,
  applyConfigOverrides,
  type ConfigError,
  DEFAULT_CONFIG,
  parseConfig,
} from "../core/config/index.js";
import { commentProcessedRule } from "../core/contract.js";
import { type ConfigOverrides, type DashboardState, parseDashboard } from "../core/dashboard/index.js";
import { type Decision, decide } from "../core/reconcile/decide.js";
import type { WorldSnapshot } from "../core/world.js";
import { circuitFor, type GitHubCircuit } from "../github/circuit.js";
import { type GatewayLog, type GitHubClient, type RepoRef, repoKey, silentLog } from "../github/client.js";
import { type RequestCounts, totalOf } from "../github/counter.js";
import { type ExecuteReport, Gateway, memoryFor } from "../github/gateway.js";
import { relevantLogins } from "../github/permissions.js";
import { snapshotSettings } from "../github/snapshot.js";
import { withLock } from "./scheduler.js";

export const GITHUB_ACTIONS_BOT = "github-actions[bot]";

export interface ReconcileOptions {
  octokit: GitHubClient;
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
  operationBudget?: number;
  /** A `workflow_dispatch` of the controller workflow: start a session with these overrides. */
  start?: { actor: string; overrides?: ConfigOverrides | null } | null;
}

export interface ReconcileResult {
  decision: Decision;
  report: ExecuteReport;
  snapshot: WorldSnapshot;
  /** Requests of the whole reconcile (all attempts), per endpoint. */
  requests: RequestCounts;
  /** 1, or 2 after a revision conflict. */
  attempts: number;
  configError: ConfigError | null;
  dryRun: boolean;
}

const locks = new Map<string, Promise<unknown>>();
const lastGoodConfigs = new Map<string, AutopilotConfig>();

/** Forgets what this process remembered between reconciles (tests). */
export function resetReconcileMemory(): void {
  lastGoodConfigs.clear();
}

export function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  return withLock(locks, repoKey(options.repo), () => reconcileUnlocked(options));
}

async function reconcileUnlocked(options: ReconcileOptions): Promise<ReconcileResult> {
  const log = options.log ?? silentLog;
  const total: RequestCounts = {};
  let last: Omit<ReconcileResult, "requests" | "attempts"> | null = null;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const { result, requests } = await reconcileOnce(options, log);
    for (const [endpoint, n] of Object.entries(requests)) total[endpoint] = (total[endpoint] ?? 0) + n;
    last = result;
    if (!result.report.conflict) {
      log.info(
        `reconciled ${options.repo.owner}/${options.repo.name}: ${result.decision.effects.length} effect(s), ${totalOf(total)} request(s)`,
      );
      return { ...result, requests: total, attempts: attempt };
    }
    log.warn(
      `the tracking issue changed since the snapshot (${result.report.outcomes.find((o) => o.status === "conflict")?.detail ?? "revision conflict"})${attempt === 1 ? "; reconciling again" : ""}`,
    );
  }
  return { ...last!, requests: total, attempts: 2 };
}

async function reconcileOnce(
  options: ReconcileOptions,
  log: GatewayLog,
): Promise<{ result: Omit<ReconcileResult, "requests" | "attempts">; requests: RequestCounts }> {
  const now = options.now ?? (() => new Date());
  const key = repoKey(options.repo);
  const botLogin = options.botLogin ?? GITHUB_ACTIONS_BOT;
  const gateway = new Gateway({
    client: options.octokit,
    repo: options.repo,
    botLogin,
    log,
    dryRun: options.dryRun ?? false,
    circuit: options.circuit ?? circuitFor(options.baseUrl ?? "https://api.github.com"),
    memory: memoryFor(options.repo),
    revisionOf: (body) => parseDashboard(body).state?.revision ?? null,
    ...(options.operationBudget !== undefined ? { operationBudget: options.operationBudget } : {}),
    now: () => now().getTime(),
  });

  // Config and state are read from the same snapshot; what the snapshot needs (labels, branch prefix,
  // worker workflow) comes from them with any workflow_dispatch overrides applied.
  let configError: ConfigError | null = null;
  let fileConfig: AutopilotConfig = lastGoodConfigs.get(key) ?? DEFAULT_CONFIG;
  let state: DashboardState | null = null;
  const effective = (
    base: AutopilotConfig,
    overrides: ConfigOverrides | null | undefined,
  ): AutopilotConfig => {
    if (!overrides) return base;
    const applied = applyConfigOverrides(base, overrides, "workflow_dispatch overrides");
    return applied.ok ? applied.config : base;
  };
  const settingsFor = (configText: string | null, trackingBody: string | null) => {
    const parsed = parseConfig(configText);
    if (parsed.ok) {
      fileConfig = parsed.config;
      configError = null;
      lastGoodConfigs.set(key, parsed.config);
    } else {
      configError = parsed.error;
      fileConfig = lastGoodConfigs.get(key) ?? DEFAULT_CONFIG;
    }
    state = trackingBody === null ? null : parseDashboard(trackingBody).state;
    return snapshotSettings(effective(fileConfig, options.start?.overrides ?? state?.overrides));
  };

  const { world } = await gateway.snapshot({
    settingsFor,
    permissionsFor: (snapshot, settings) => {
      return relevantLogins(snapshot, {
        readyLabel: settings.readyLabel,
        needsHumanLabel: settings.needsHumanLabel,
        processed: commentProcessedRule(state as DashboardState | null),
      });
    },
  });
  if (configError) log.warn((configError as ConfigError).message.split("\n")[0] ?? "invalid config");

  const at = now();
  const decision = decide({
    snapshot: world,
    state,
    config: fileConfig,
    configError,
    now: at,
    dispatchIdSeed: at.getTime().toString(36),
    start: options.start ?? null,
  });
  for (const line of decision.log) log.debug(line);

  const inForce = effective(fileConfig, decision.state.overrides);
  gateway.dryRun = (options.dryRun ?? false) || inForce.dryRun;
  const report = await gateway.execute(decision.effects, { workerWorkflow: inForce.workerWorkflow });
  return {
    result: { decision, report, snapshot: world, configError, dryRun: gateway.dryRun },
    requests: gateway.requests(),
  };
}
