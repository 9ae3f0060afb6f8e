/**
 * The hosted controller's periodic tick: reconciles the repositories of every installation (listed through the
 * App, cached) where time based decisions — timeouts, retries after a backoff, stalled runs — may be due without
 * any event. Which ones, src/core/scheduling/tick-choice.ts decides from what each one's last reconcile found
 * (repo-activity.ts) and the installation's rate limits as GitHub's headers report them
 * (installation-rate-limits.ts). An idle repository costs a tick nothing but its bounded, spread-out safety
 * sweep; its next event brings it in.
 */
import type { Probot } from "probot";
import { chooseTickRepos, type TickPolicy } from "../../core/scheduling/tick-choice.js";
import { listInstallationIds, listInstallationRepos } from "../../github/setup/app-installations.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../../github/transport/octokit-surface.js";
import { repoKey } from "../../github/transport/octokit-surface.js";
import type { RepoActivityBook } from "./activity-book.js";
import type { ControllerMetrics } from "./controller-metrics.js";
import type { InstallationRateLimits } from "./installation-rate-limits.js";
import type { ReconcileQueue } from "./reconcile-queue.js";
import type { ReplicaWork } from "./replica-work.js";

interface InstallationRepos {
  installationId: number;
  repos: RepoRef[];
}

interface ControllerTickOptions {
  log: GatewayLog;
  queue: ReconcileQueue;
  book: RepoActivityBook;
  rateLimits: InstallationRateLimits;
  replicas: ReplicaWork | null;
  policy: TickPolicy;
  /** Milliseconds between ticks (0: none planned). */
  tickMs: number;
  /** How long the list of installations and their repositories is reused. */
  installationsTtlMs: number;
  metrics?: ControllerMetrics | undefined;
  probot: () => Probot | null;
}

export class ControllerTick {
  private installations: { at: number; list: InstallationRepos[] } | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: ControllerTickOptions) {}

  /** Reconciles the repositories the tick chooses in every installation once; overlapping ticks share one run. */
  tick(): Promise<void> {
    this.ticking ??= this.tickOnce().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  /** Resolves when no tick is running. */
  async idle(): Promise<void> {
    await this.ticking;
  }

  /** The installations or their repositories changed: the next tick lists them again. */
  forgetInstallations(): void {
    this.installations = null;
  }

  stop(): void {
    this.stopped = true;
  }

  private async tickOnce(): Promise<void> {
    const { log, queue, book, rateLimits, replicas } = this.options;
    const probot = this.options.probot();
    if (!probot || this.stopped) return;
    let list: InstallationRepos[];
    try {
      list = await this.listInstallations(probot);
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
      if (this.stopped) break;
      queue.watch(octokit, installation.installationId);
      const byKey = new Map(installation.repos.map((repo) => [repoKey(repo), repo]));
      // What the choice below knows of each repository dates from here: a replica that takes one of its
      // reconciles after another replica reconciled that repository since skips it (replica-work.ts).
      const decidedAt = Date.now();
      if (replicas) await this.adoptShared(replicas, installation.installationId, [...byKey.keys()]);
      const choice = chooseTickRepos({
        repos: [...byKey.keys()].map((key) => book.standing(key)),
        nowMs: Date.now(),
        tickMs: this.options.tickMs,
        rateLimits: rateLimits.rateLimits(installation.installationId),
        policy: this.options.policy,
      });
      const { active, unknown, idle } = choice.deferred;
      const line = `tick: installation ${installation.installationId}: ${choice.reconcile.length} of ${byKey.size} repositories`;
      if (active + unknown + idle > 0)
        log.info(
          `${line}; left for later: ${active} active, ${unknown} not yet reconciled, ${idle} idle due a sweep (room for ${choice.allowed} reconciles in the rate limit)`,
        );
      else log.debug(line);
      for (const key of choice.reconcile)
        runs.push(
          queue.schedule(octokit, byKey.get(key)!, installation.installationId, "tick", false, decidedAt),
        );
    }
    await Promise.all(runs);
  }

  private async listInstallations(probot: Probot): Promise<InstallationRepos[]> {
    const cached = this.installations;
    if (cached && Date.now() - cached.at < this.options.installationsTtlMs) return cached.list;
    const ids = await listInstallationIds(await probot.auth());
    const list: InstallationRepos[] = [];
    for (const installationId of ids) {
      const repos = await listInstallationRepos(await probot.auth(installationId));
      list.push({ installationId, repos });
    }
    this.installations = { at: Date.now(), list };
    const installed = new Set(list.flatMap((i) => i.repos.map(repoKey)));
    this.options.book.retain(installed);
    this.options.metrics?.retain(installed);
    return list;
  }

  /** What the replicas recorded of these repositories and this installation's rate limits (a tick chooses by it). */
  private async adoptShared(replicas: ReplicaWork, installationId: number, keys: string[]): Promise<void> {
    try {
      this.options.book.adopt(await replicas.standings(keys));
      for (const reading of await replicas.readings(installationId))
        this.options.rateLimits.note(installationId, reading);
    } catch (error) {
      this.options.log.warn(
        `tick: could not read what the replicas recorded (${(error as Error).message}); choosing from this replica's own`,
      );
    }
  }
}
