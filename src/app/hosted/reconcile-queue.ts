/**
 * The hosted controller's reconcile queue: asks for a repository's reconcile in this process (one at a time per
 * repository, scheduler.ts) or on the replicas' shared queue (replica-work.ts), and notes what each reconcile
 * found: its activity verdict (activity-book.ts), its cost (installation-rate-limits.ts), its metrics. A
 * reconcile that ends with the repository's writes paused for GitHub's secondary rate limit and writes held
 * (src/github/transport/circuit.ts `pauseWrites`) schedules one more reconcile of that repository for when the
 * pause ends, which carries them out without waiting for the next event or tick.
 */
import type { Probot } from "probot";
import type { RepoActivity } from "../../core/scheduling/repo-activity.js";
import { appBotLogin } from "../../github/setup/app-installations.js";
import { circuitFor } from "../../github/transport/circuit.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../../github/transport/octokit-surface.js";
import { repoKey } from "../../github/transport/octokit-surface.js";
import { watchRateHeaders } from "../../github/transport/rate-headers.js";
import type { AlertWebhook } from "../alert-webhook.js";
import type { ReconcileOptions, ReconcileResult } from "../reconcile-repo.js";
import { RepoScheduler } from "../scheduler.js";
import type { RepoActivityBook } from "./activity-book.js";
import type { ControllerMetrics } from "./controller-metrics.js";
import { type InstallationRateLimits, reconcileCost } from "./installation-rate-limits.js";
import { ReplicaStopping } from "./replica-stopping.js";
import type { ReplicaWork, RepoWork } from "./replica-work.js";

interface ReconcileQueueOptions {
  log: GatewayLog;
  run: (options: ReconcileOptions) => Promise<ReconcileResult | unknown>;
  alerts: AlertWebhook;
  book: RepoActivityBook;
  rateLimits: InstallationRateLimits;
  replicas: ReplicaWork | null;
  metrics?: ControllerMetrics | undefined;
  baseUrl?: string | undefined;
  dryRun?: boolean | undefined;
  /** The Probot instance once the app function ran (null before). */
  probot: () => Probot | null;
}

export class ReconcileQueue {
  private readonly scheduler = new RepoScheduler();
  /** Per repository: the reconcile due when its write pause ends. */
  private readonly resumes = new Map<string, NodeJS.Timeout>();
  private botLogin: string | null = null;
  private stopped = false;

  constructor(private readonly options: ReconcileQueueOptions) {}

  /** Notes the installation's rate limits from every answer its client gets. */
  watch(octokit: OctokitSurface, installationId: number): OctokitSurface {
    watchRateHeaders(octokit, (reading) => {
      this.options.rateLimits.note(installationId, reading);
      this.options.metrics?.rate(installationId, reading);
      this.options.replicas?.saveReading(installationId, reading);
    });
    return octokit;
  }

  /** Records what is known of a repository where every replica reads it. */
  share(key: string): void {
    this.options.replicas?.saveStanding(key, this.options.book.entry(key));
  }

  /**
   * Asks for a reconcile of the repository: in this process, or on the replicas' shared queue. When Redis cannot
   * take it, this process runs it itself (nothing is lost; the tracking issue's revision check keeps it apart
   * from a replica that may run the same repository meanwhile). `event`: a webhook's, which may carry a change
   * a reconcile already running read too early (a tick or a pause that ended does not).
   */
  async schedule(
    octokit: OctokitSurface,
    repo: RepoRef,
    installationId: number,
    reason: string,
    event: boolean,
    decidedAt?: number,
  ): Promise<void> {
    const replicas = this.options.replicas;
    if (replicas) {
      try {
        const work: RepoWork = { owner: repo.owner, name: repo.name, installationId, reason };
        if (decidedAt !== undefined) work.decidedAt = decidedAt;
        await replicas.request(work, { event });
        return;
      } catch (error) {
        this.options.log.warn(
          `could not queue the reconcile of ${repo.owner}/${repo.name} for the replicas (${(error as Error).message}): running it here`,
        );
      }
    }
    return this.reconcileHere(octokit, repo, installationId, reason);
  }

  /** A job of the replicas' queue: the repository's reconcile, as its installation. */
  async reconcileShared(work: RepoWork): Promise<void> {
    const probot = this.options.probot();
    if (!probot || this.stopped) throw new ReplicaStopping();
    const octokit = this.watch(await probot.auth(work.installationId), work.installationId);
    await this.reconcileHere(
      octokit,
      { owner: work.owner, name: work.name },
      work.installationId,
      work.reason,
    );
  }

  /** Resolves when no reconcile of this process is running or waiting. */
  idle(): Promise<void> {
    return this.scheduler.idle();
  }

  /** Starts no reconcile from then on; the one running ends by itself. */
  stop(): void {
    this.stopped = true;
    for (const resume of this.resumes.values()) clearTimeout(resume);
    this.resumes.clear();
    // Webhooks that still arrive (and the follow-up of a burst) start nothing: stopping waits only for the
    // reconcile already running.
    this.scheduler.close();
  }

  /** Runs the repository's reconcile in this process (one at a time per repository, scheduler.ts). */
  private reconcileHere(
    octokit: OctokitSurface,
    repo: RepoRef,
    installationId: number,
    reason: string,
  ): Promise<void> {
    const { log, metrics, book } = this.options;
    const key = repoKey(repo);
    return this.scheduler.request(key, async () => {
      const login = await this.resolveBotLogin();
      let result: unknown;
      const started = Date.now();
      let failed = false;
      try {
        result = await this.options.run({
          octokit,
          repo,
          log,
          ...(login ? { botLogin: login } : {}),
          ...(this.options.baseUrl ? { baseUrl: this.options.baseUrl } : {}),
          ...(this.options.dryRun ? { dryRun: true } : {}),
          alerts: this.options.alerts,
        });
      } catch (error) {
        log.error(`reconcile of ${repo.owner}/${repo.name} (${reason}) failed: ${(error as Error).message}`);
        failed = true;
        throw error;
      } finally {
        metrics?.reconciled({
          repo: key,
          installationId,
          result,
          seconds: (Date.now() - started) / 1000,
          failed,
        });
        const activity = activityOf(result);
        book.reconciled(key, Date.now(), activity);
        this.share(key);
        if (activity)
          log.debug(
            `${repo.owner}/${repo.name} is ${activity.kind === "active" ? `active: ${activity.reason}` : "idle"}`,
          );
        const cost = reconcileCost(result);
        if (cost) this.options.rateLimits.noteCost(installationId, cost);
        this.resumeAfterWritePause(octokit, repo, installationId);
      }
    });
  }

  private async resolveBotLogin(): Promise<string | undefined> {
    const probot = this.options.probot();
    if (this.botLogin || !probot) return this.botLogin ?? undefined;
    try {
      this.botLogin = await appBotLogin(await probot.auth());
    } catch (error) {
      this.options.log.warn(`could not look up the app's bot login: ${(error as Error).message}`);
    }
    return this.botLogin ?? undefined;
  }

  /** Schedules a reconcile for when the repository's write pause ends, if it holds writes (once per pause). */
  private resumeAfterWritePause(octokit: OctokitSurface, repo: RepoRef, installationId: number): void {
    const key = repoKey(repo);
    const circuit = circuitFor(this.options.baseUrl ?? "https://api.github.com");
    const pause = circuit.writePause(key);
    if (this.stopped || !pause || this.resumes.has(key) || circuit.queued(key).length === 0) return;
    const timer = setTimeout(
      () => {
        this.resumes.delete(key);
        if (!this.stopped)
          this.schedule(octokit, repo, installationId, "the write pause ended", false).catch(() => {});
      },
      Math.max(0, pause.until - Date.now()) + 1_000,
    );
    timer.unref();
    this.resumes.set(key, timer);
  }
}

/** The verdict a reconcile's result carries (a stand-in reconcile's may carry none). */
function activityOf(result: unknown): RepoActivity | null {
  const activity = (result as { activity?: RepoActivity } | null | undefined)?.activity;
  return activity && (activity.kind === "active" || activity.kind === "idle") ? activity : null;
}
