/**
 * The Probot app of the hosted controller (Probot's convention: the app function registers handlers). It wires
 * three parts: the webhook handlers (webhook-handlers.ts), which only schedule a reconcile of the event's
 * repository; the periodic tick (controller-tick.ts), which reconciles the repositories where something may be
 * due without an event; and the reconcile queue (reconcile-queue.ts), which runs each reconcile one at a time
 * per repository and notes what it found.
 *
 * With several replicas (`replicas`, replica-work.ts) a delivery or a tick only queues the repository's
 * reconcile in Redis, one replica runs it, and one replica runs each tick; what ticks choose by is shared.
 */
import type { ApplicationFunction, Probot } from "probot";
import { DEFAULT_TICK_POLICY, type TickPolicy } from "../../core/scheduling/tick-choice.js";
import type { GatewayLog } from "../../github/transport/octokit-surface.js";
import { silentLog } from "../../github/transport/octokit-surface.js";
import { AlertWebhook } from "../alert-webhook.js";
import {
  type ReconcileOptions,
  type ReconcileResult,
  reconcile as defaultReconcile,
} from "../reconcile-repo.js";
import { RepoActivityBook } from "./activity-book.js";
import { ControllerTick } from "./controller-tick.js";
import type { ControllerMetrics } from "./controller-metrics.js";
import { InstallationRateLimits } from "./installation-rate-limits.js";
import { ReconcileQueue } from "./reconcile-queue.js";
import type { ReplicaWork } from "./replica-work.js";
import { registerWebhookHandlers } from "./webhook-handlers.js";

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

export function createControllerApp(options: ControllerAppOptions = {}): ControllerApp {
  const log = options.log ?? silentLog;
  const alerts = new AlertWebhook({ env: options.alertEnv ?? process.env, log });
  const book = new RepoActivityBook();
  const rateLimits = new InstallationRateLimits();
  const replicas = options.replicas ?? null;
  let probot: Probot | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let closing: Promise<void> | null = null;

  const queue = new ReconcileQueue({
    log,
    run: options.reconcile ?? defaultReconcile,
    alerts,
    book,
    rateLimits,
    replicas,
    metrics: options.metrics,
    baseUrl: options.baseUrl,
    dryRun: options.dryRun,
    probot: () => probot,
  });
  const ticks = new ControllerTick({
    log,
    queue,
    book,
    rateLimits,
    replicas,
    policy: { ...DEFAULT_TICK_POLICY, ...options.tickPolicy },
    tickMs: options.tickMs ?? 0,
    installationsTtlMs: options.installationsTtlMs ?? 10 * 60_000,
    metrics: options.metrics,
    probot: () => probot,
  });
  const tick = () => ticks.tick();

  const appFn: ApplicationFunction = (app) => {
    probot = app;
    if (replicas && !closing)
      replicas.start({ reconcile: (work) => queue.reconcileShared(work), tick }).catch((error: Error) => {
        log.error(`could not start taking the replicas' shared work: ${error.message}`);
      });
    registerWebhookHandlers(app, { log, queue, tick: ticks, book, awaitReconcile: options.awaitReconcile });
    // With replicas, the shared queue's tick scheduler calls tick() on one replica each interval.
    if (!replicas && options.tickMs && options.tickMs > 0 && !timer) {
      timer = setInterval(() => {
        void tick();
      }, options.tickMs);
      timer.unref();
    }
  };

  return {
    appFn,
    tick,
    async idle() {
      await ticks.idle();
      if (replicas && !stopped) await replicas.idle();
      await queue.idle();
      if (closing) await closing;
      // Alert deliveries retry for minutes: waited for only once stopped (which gives up their retries).
      if (stopped) await alerts.idle();
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      ticks.stop();
      queue.stop();
      // Jobs this replica runs end first; queued ones stay for the other replicas.
      if (replicas)
        closing ??= replicas.close().catch((error: Error) => log.warn(`replicas: ${error.message}`));
      void alerts.stop();
    },
  };
}
