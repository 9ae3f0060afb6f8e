/**
 * The Probot app. Handlers only schedule `reconcile(repo)` for the event's repository (docs/CONTROLLER.md): webhooks
 * are hints, the reconcile decides. Events caused by Autopilot's own bot reconcile too (that is how the state
 * catches up with its own writes); they never start work by themselves because decide only acts on what the
 * world shows, and bot comments are never commands (src/github/snapshot/snapshot.ts leaves them out of `comments`).
 *
 * A periodic tick reconciles the repositories of every installation (listed through the App, cached) where time
 * based decisions — timeouts, retries after a backoff, stalled runs — may be due without any event: which ones,
 * src/core/scheduling/tick-choice.ts decides from what each one's last reconcile found (repo-activity.ts) and the
 * installation's rate budget as GitHub's headers report it (installation-budgets.ts). An idle repository costs
 * a tick nothing but its bounded, spread-out safety sweep; its next event brings it in. A reconcile that
 * ends with the repository's writes paused for GitHub's secondary rate limit and writes held
 * (src/github/transport/circuit.ts `pauseWrites`) schedules one more reconcile of that repository for when the pause ends,
 * which carries them out without waiting for the next event or tick.
 *
 * With several replicas (`replicas`, replica-work.ts) a delivery or a tick only queues the repository's
 * reconcile in Redis, one replica runs it, and one replica runs each tick; what ticks choose by is shared.
 */
import { AlertWebhook } from "./alert-webhook.js";
import type { ApplicationFunction, Context, Probot } from "probot";
import type { GatewayLog, OctokitSurface, RepoRef } from "../github/transport/octokit-surface.js";
import { silentLog, repoKey } from "../github/transport/octokit-surface.js";
import {
  appBotLogin,
  listInstallationIds,
  listInstallationRepos,
} from "../github/setup/app-installations.js";
import { circuitFor } from "../github/transport/circuit.js";
import { watchRateHeaders } from "../github/transport/rate-headers.js";
import { chooseTickRepos, DEFAULT_TICK_POLICY, type TickPolicy } from "../core/scheduling/tick-choice.js";
import type { RepoActivity } from "../core/scheduling/repo-activity.js";
import { activityEvent } from "./activity-events.js";
import { InstallationBudgets, reconcileCost } from "./installation-budgets.js";
import { RepoActivityBook } from "./activity-book.js";
import type { ControllerMetrics } from "./controller-metrics.js";
import {
  type ReconcileOptions,
  type ReconcileResult,
  reconcile as defaultReconcile,
} from "./reconcile-repo.js";
import type { RepoWork, ReplicaWork } from "./replica-work.js";
import { ReplicaStopping } from "./replica-stopping.js";
import { RepoScheduler } from "./scheduler.js";

/** Exactly the events app.yml subscribes to. */
export const CONTROLLER_EVENTS = [
  "issues",
  "issue_comment",
  "pull_request",
  "pull_request_review",
  // A review conversation resolved: the gate's wait on its reviewer ends (src/core/gates/gates.ts). GitHub Actions
  // has no such trigger; the controller there sees it at its next run.
  "pull_request_review_thread",
  "check_suite",
  "check_run",
  "workflow_run",
  "push",
] as const;

/**
 * A reconcile reads one thing from git, the config file on the default branch; a push anywhere else (a worker
 * pushing to its task branch every iteration, a tag) changes nothing it reads, and a task branch's pull request
 * has events of its own. The Actions template leaves task branches out of `push` the same way.
 */
function pushToDefaultBranch(payload: unknown): boolean {
  const p = payload as { ref?: string; repository?: { default_branch?: string } };
  return !!p.repository?.default_branch && p.ref === `refs/heads/${p.repository.default_branch}`;
}

interface ControllerAppOptions {
  /** Milliseconds between ticks; 0 or absent: no periodic tick (call `tick()` yourself). */
  tickMs?: number;
  log?: GatewayLog;
  /** REST base URL of the GitHub the app talks to (picks the circuit breaker). */
  baseUrl?: string;
  dryRun?: boolean;
  /** How long the list of installations and their repositories is reused by ticks. */
  installationsTtlMs?: number;
  /** Wait for the reconcile before answering the webhook (default: answer at once, reconcile behind). */
  awaitReconcile?: boolean;
  /** The reconcile to run (tests hand in a spy). */
  reconcile?: (options: ReconcileOptions) => Promise<ReconcileResult | unknown>;
  /** Where `alerts.webhook`'s URL and secret variables are read (default: this process's environment). */
  alertEnv?: Record<string, string | undefined>;
  /** How ticks choose repositories (src/core/scheduling/tick-choice.ts); unset fields keep their defaults. */
  tickPolicy?: Partial<TickPolicy>;
  /**
   * The work shared with other replicas (replica-work.ts, started here with the app's handlers): reconciles
   * and ticks go through it. Absent: this process alone, in memory.
   */
  replicas?: ReplicaWork;
  /** Where reconciles and rate readings are counted for `GET /metrics` (controller-metrics.ts); absent: nowhere. */
  metrics?: ControllerMetrics;
}

interface ControllerApp {
  appFn: ApplicationFunction;
  /** Reconciles the repositories a tick chooses in every installation once; resolves when all are done. */
  tick(): Promise<void>;
  /** Resolves when no tick and no reconcile is running or waiting. */
  idle(): Promise<void>;
  /** Stops the periodic tick and starts no reconcile from then on (await `idle()` for the one running to end). */
  stop(): void;
}

interface InstallationRepos {
  installationId: number;
  repos: RepoRef[];
}

export function createControllerApp(options: ControllerAppOptions = {}): ControllerApp {
  const log = options.log ?? silentLog;
  const run = options.reconcile ?? defaultReconcile;
  const scheduler = new RepoScheduler();
  const alerts = new AlertWebhook({ env: options.alertEnv ?? process.env, log });
  const ttl = options.installationsTtlMs ?? 10 * 60_000;
  let probot: Probot | null = null;
  let botLogin: string | null = null;
  let installations: { at: number; list: InstallationRepos[] } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<void> | null = null;
  let stopped = false;
  /** Per repository: the reconcile due when its write pause ends. */
  const resumes = new Map<string, NodeJS.Timeout>();
  const book = new RepoActivityBook();
  const budgets = new InstallationBudgets();
  const policy: TickPolicy = { ...DEFAULT_TICK_POLICY, ...options.tickPolicy };
  const replicas = options.replicas ?? null;
  let closing: Promise<void> | null = null;

  /** Notes the installation's rate budget from every answer its client gets. */
  function watch(octokit: OctokitSurface, installationId: number): OctokitSurface {
    watchRateHeaders(octokit, (reading) => {
      budgets.note(installationId, reading);
      options.metrics?.rate(installationId, reading);
      replicas?.saveReading(installationId, reading);
    });
    return octokit;
  }

  /** Records what is known of a repository where every replica reads it. */
  function share(key: string): void {
    replicas?.saveStanding(key, book.entry(key));
  }

  async function resolveBotLogin(): Promise<string | undefined> {
    if (botLogin || !probot) return botLogin ?? undefined;
    try {
      botLogin = await appBotLogin(await probot.auth());
    } catch (error) {
      log.warn(`could not look up the app's bot login: ${(error as Error).message}`);
    }
    return botLogin ?? undefined;
  }

  /**
   * Asks for a reconcile of the repository: in this process, or on the replicas' shared queue. When Redis cannot
   * take it, this process runs it itself (nothing is lost; the tracking issue's revision check keeps it apart
   * from a replica that may run the same repository meanwhile). `event`: a webhook's, which may carry a change
   * a reconcile already running read too early (a tick or a pause that ended does not).
   */
  async function schedule(
    octokit: OctokitSurface,
    repo: RepoRef,
    installationId: number,
    reason: string,
    event: boolean,
    decidedAt?: number,
  ): Promise<void> {
    if (replicas) {
      try {
        const work: RepoWork = { owner: repo.owner, name: repo.name, installationId, reason };
        if (decidedAt !== undefined) work.decidedAt = decidedAt;
        await replicas.request(work, { event });
        return;
      } catch (error) {
        log.warn(
          `could not queue the reconcile of ${repo.owner}/${repo.name} for the replicas (${(error as Error).message}): running it here`,
        );
      }
    }
    return reconcileHere(octokit, repo, installationId, reason);
  }

  /** Runs the repository's reconcile in this process (one at a time per repository, scheduler.ts). */
  function reconcileHere(
    octokit: OctokitSurface,
    repo: RepoRef,
    installationId: number,
    reason: string,
  ): Promise<void> {
    const key = repoKey(repo);
    return scheduler.request(key, async () => {
      const login = await resolveBotLogin();
      let result: unknown;
      const started = Date.now();
      let failed = false;
      try {
        result = await run({
          octokit,
          repo,
          log,
          ...(login ? { botLogin: login } : {}),
          ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
          ...(options.dryRun ? { dryRun: true } : {}),
          alerts,
        });
      } catch (error) {
        log.error(`reconcile of ${repo.owner}/${repo.name} (${reason}) failed: ${(error as Error).message}`);
        failed = true;
        throw error;
      } finally {
        options.metrics?.reconciled({
          repo: key,
          installationId,
          result,
          seconds: (Date.now() - started) / 1000,
          failed,
        });
        const activity = activityOf(result);
        book.reconciled(key, Date.now(), activity);
        share(key);
        if (activity)
          log.debug(
            `${repo.owner}/${repo.name} is ${activity.kind === "active" ? `active: ${activity.reason}` : "idle"}`,
          );
        const cost = reconcileCost(result);
        if (cost) budgets.noteCost(installationId, cost);
        resumeAfterWritePause(octokit, repo, installationId);
      }
    });
  }

  /** Schedules a reconcile for when the repository's write pause ends, if it holds writes (once per pause). */
  function resumeAfterWritePause(octokit: OctokitSurface, repo: RepoRef, installationId: number): void {
    const key = repoKey(repo);
    const circuit = circuitFor(options.baseUrl ?? "https://api.github.com");
    const pause = circuit.writePause(key);
    if (stopped || !pause || resumes.has(key) || circuit.queued(key).length === 0) return;
    const timer = setTimeout(
      () => {
        resumes.delete(key);
        if (!stopped) schedule(octokit, repo, installationId, "the write pause ended", false).catch(() => {});
      },
      Math.max(0, pause.until - Date.now()) + 1_000,
    );
    timer.unref();
    resumes.set(key, timer);
  }

  async function listInstallations(): Promise<InstallationRepos[]> {
    if (installations && Date.now() - installations.at < ttl) return installations.list;
    if (!probot) return [];
    const ids = await listInstallationIds(await probot.auth());
    const list: InstallationRepos[] = [];
    for (const installationId of ids) {
      const repos = await listInstallationRepos(await probot.auth(installationId));
      list.push({ installationId, repos });
    }
    installations = { at: Date.now(), list };
    const installed = new Set(list.flatMap((i) => i.repos.map(repoKey)));
    book.retain(installed);
    options.metrics?.retain(installed);
    return list;
  }

  async function tickOnce(): Promise<void> {
    if (!probot || stopped) return;
    let list: InstallationRepos[];
    try {
      list = await listInstallations();
    } catch (error) {
      log.error(`tick: could not list installations: ${(error as Error).message}`);
      return;
    }
    const runs: Promise<void>[] = [];
    for (const installation of list) {
      if (installation.repos.length === 0) continue;
      let octokit: OctokitSurface;
      try {
        octokit = await probot.auth(installation.installationId);
      } catch (error) {
        log.error(
          `tick: could not authenticate installation ${installation.installationId}: ${(error as Error).message}`,
        );
        continue;
      }
      if (stopped) break;
      watch(octokit, installation.installationId);
      const byKey = new Map(installation.repos.map((repo) => [repoKey(repo), repo]));
      // What the choice below knows of each repository dates from here: a replica that takes one of its
      // reconciles after another replica reconciled that repository since skips it (replica-work.ts).
      const decidedAt = Date.now();
      if (replicas) await adoptShared(installation.installationId, [...byKey.keys()]);
      const choice = chooseTickRepos({
        repos: [...byKey.keys()].map((key) => book.standing(key)),
        nowMs: Date.now(),
        tickMs: options.tickMs ?? 0,
        budgets: budgets.budgets(installation.installationId),
        policy,
      });
      const { active, unknown, idle } = choice.deferred;
      const line = `tick: installation ${installation.installationId}: ${choice.reconcile.length} of ${byKey.size} repositories`;
      if (active + unknown + idle > 0)
        log.info(
          `${line}; left for later: ${active} active, ${unknown} not yet reconciled, ${idle} idle due a sweep (room for ${choice.allowed} reconciles in the rate budget)`,
        );
      else log.debug(line);
      for (const key of choice.reconcile)
        runs.push(schedule(octokit, byKey.get(key)!, installation.installationId, "tick", false, decidedAt));
    }
    await Promise.all(runs);
  }

  /** What the replicas recorded of these repositories and this installation's budget (a tick chooses by it). */
  async function adoptShared(installationId: number, keys: string[]): Promise<void> {
    try {
      book.adopt(await replicas!.standings(keys));
      for (const reading of await replicas!.readings(installationId)) budgets.note(installationId, reading);
    } catch (error) {
      log.warn(
        `tick: could not read what the replicas recorded (${(error as Error).message}); choosing from this replica's own`,
      );
    }
  }

  /** A job of the replicas' queue: the repository's reconcile, as its installation. */
  async function reconcileShared(work: RepoWork): Promise<void> {
    if (!probot || stopped) throw new ReplicaStopping();
    const octokit = watch(await probot.auth(work.installationId), work.installationId);
    await reconcileHere(octokit, { owner: work.owner, name: work.name }, work.installationId, work.reason);
  }

  const appFn: ApplicationFunction = (app) => {
    probot = app;
    if (replicas && !closing)
      replicas.start({ reconcile: reconcileShared, tick }).catch((error: Error) => {
        log.error(`could not start taking the replicas' shared work: ${error.message}`);
      });
    app.on([...CONTROLLER_EVENTS], async (context: Context) => {
      const payload = context.payload as {
        repository?: { name: string; owner: { login: string } };
        installation?: { id: number };
      };
      if (!payload.repository || !payload.installation) return;
      if (context.name === "push" && !pushToDefaultBranch(context.payload)) return;
      const repo = { owner: payload.repository.owner.login, name: payload.repository.name };
      const why = activityEvent(context.name, context.payload);
      if (why) {
        book.markActive(repoKey(repo));
        share(repoKey(repo));
        log.debug(`${repo.owner}/${repo.name} is active: ${why}`);
      }
      const octokit = watch(context.octokit, payload.installation.id);
      const pending = schedule(octokit, repo, payload.installation.id, `${context.name} event`, true);
      if (options.awaitReconcile) await pending;
    });
    app.on(["installation", "installation_repositories"], async (context: Context) => {
      installations = null;
      // Repositories added anew are unknown again: the next tick learns their activity first among the
      // never-reconciled ones.
      const p = context.payload as {
        repositories?: { full_name?: string }[];
        repositories_added?: { full_name?: string }[];
        repositories_removed?: { full_name?: string }[];
      };
      for (const r of [
        ...(p.repositories ?? []),
        ...(p.repositories_added ?? []),
        ...(p.repositories_removed ?? []),
      ])
        if (r.full_name) {
          book.forget(r.full_name.toLowerCase());
          share(r.full_name.toLowerCase());
        }
    });
    // With replicas, the shared queue's tick scheduler calls tick() on one replica each interval.
    if (!replicas && options.tickMs && options.tickMs > 0 && !timer) {
      timer = setInterval(() => {
        void tick();
      }, options.tickMs);
      timer.unref();
    }
  };

  /** The verdict a reconcile's result carries (a stand-in reconcile's may carry none). */
  function activityOf(result: unknown): RepoActivity | null {
    const activity = (result as { activity?: RepoActivity } | null | undefined)?.activity;
    return activity && (activity.kind === "active" || activity.kind === "idle") ? activity : null;
  }

  function tick(): Promise<void> {
    // Overlapping ticks share one run.
    ticking ??= tickOnce().finally(() => {
      ticking = null;
    });
    return ticking;
  }

  return {
    appFn,
    tick,
    async idle() {
      await ticking;
      if (replicas && !stopped) await replicas.idle();
      await scheduler.idle();
      if (closing) await closing;
      // Alert deliveries retry for minutes: waited for only once stopped (which gives up their retries).
      if (stopped) await alerts.idle();
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      for (const resume of resumes.values()) clearTimeout(resume);
      resumes.clear();
      // Webhooks that still arrive (and the follow-up of a burst) start nothing: stopping waits only for the
      // reconcile already running.
      scheduler.close();
      // Jobs this replica runs end first; queued ones stay for the other replicas.
      if (replicas)
        closing ??= replicas.close().catch((error: Error) => log.warn(`replicas: ${error.message}`));
      void alerts.stop();
    },
  };
}
