/**
 * What `autopilot serve` shows Prometheus (docs/INSTALL.md, "Metrics"), kept with prom-client, the Prometheus
 * client most Node services use (its registry, text format and process metrics are what a scraper expects, so
 * none of it is written here):
 *
 * - each repository's session as its last reconcile left it: tasks by status, finished tasks by outcome,
 *   iterations, tokens and cost (the dashboard's own statistics, src/core/session/stats.ts);
 * - the reconciles: how many ended and how (ok, failed), and how long they took;
 * - GitHub: the requests reconciles made per installation and API, and each installation's rate limit and what
 *   is left of it, as GitHub's headers last reported;
 * - the process: memory, CPU, event loop lag (prom-client's default metrics), per replica.
 *
 * A repository's series are labelled with its `owner/name`; they go when the repository leaves the App's
 * installations (`retain`), so the series stay as many as the installed repositories.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { SessionStatistics } from "../../core/session/stats.js";
import { requestsByApi, TASK_STATUS_FIGURES } from "../../core/session/run-metrics.js";
import type { RateReading } from "../../github/transport/rate-headers.js";

/** What one reconcile reports to the metrics. */
interface ReconcileObservation {
  /** `owner/name`, lower case. */
  repo: string;
  installationId: number;
  /** The reconcile's result (a test's stand-in may say nothing). */
  result: unknown;
  seconds: number;
  failed: boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  private readonly tasks: Gauge<"repository" | "status">;
  private readonly iterations: Gauge<"repository">;
  private readonly tokens: Gauge<"repository" | "kind">;
  private readonly cost: Gauge<"repository">;
  private readonly merges: Gauge<"repository">;
  private readonly reconciles: Counter<"outcome">;
  private readonly duration: Histogram;
  private readonly requests: Counter<"installation" | "api">;
  private readonly rateLimit: Gauge<"installation" | "resource">;
  private readonly rateRemaining: Gauge<"installation" | "resource">;
  private readonly rateReset: Gauge<"installation" | "resource">;
  private readonly repos = new Set<string>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "autopilot_" });
    this.tasks = new Gauge({
      name: "autopilot_tasks",
      help: "Tasks of the repository's session by status, as its last reconcile left them (done and skipped: this session's).",
      labelNames: ["repository", "status"],
      registers,
    });
    this.iterations = new Gauge({
      name: "autopilot_iterations",
      help: "Agent iterations of the repository's session.",
      labelNames: ["repository"],
      registers,
    });
    this.tokens = new Gauge({
      name: "autopilot_tokens",
      help: "Model tokens of the repository's session, input and output.",
      labelNames: ["repository", "kind"],
      registers,
    });
    this.cost = new Gauge({
      name: "autopilot_cost_usd",
      help: "Model cost of the repository's session in US dollars, as priced by the workers.",
      labelNames: ["repository"],
      registers,
    });
    this.merges = new Gauge({
      name: "autopilot_merges",
      help: "Task pull requests merged in the repository's session.",
      labelNames: ["repository"],
      registers,
    });
    this.reconciles = new Counter({
      name: "autopilot_reconciles_total",
      help: "Reconciles this process ran, by how they ended.",
      labelNames: ["outcome"],
      registers,
    });
    this.duration = new Histogram({
      name: "autopilot_reconcile_duration_seconds",
      help: "How long one reconcile took, reads and writes included.",
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    });
    this.requests = new Counter({
      name: "autopilot_github_requests_total",
      help: "Requests reconciles made to GitHub with the installation's token, by installation and API (rest: requests, graphql: queries).",
      labelNames: ["installation", "api"],
      registers,
    });
    this.rateLimit = new Gauge({
      name: "autopilot_github_rate_limit",
      help: "The installation's rate limit per window, as GitHub's headers last reported it.",
      labelNames: ["installation", "resource"],
      registers,
    });
    this.rateRemaining = new Gauge({
      name: "autopilot_github_rate_limit_remaining",
      help: "What is left of the installation's rate limit in this window, as GitHub's headers last reported it.",
      labelNames: ["installation", "resource"],
      registers,
    });
    this.rateReset = new Gauge({
      name: "autopilot_github_rate_limit_reset_timestamp_seconds",
      help: "When the installation's rate-limit window resets (Unix time).",
      labelNames: ["installation", "resource"],
      registers,
    });
  }

  /** Records one reconcile: how it ended and took, its requests, and the session it left. */
  reconciled({ repo, installationId, result, seconds, failed }: ReconcileObservation): void {
    this.reconciles.inc({ outcome: failed ? "failed" : "ok" });
    this.duration.observe(seconds);
    const installation = String(installationId);
    const requests = (result as { requests?: Record<string, number> } | null)?.requests;
    for (const [api, n] of Object.entries(requestsByApi(requests ?? {})))
      if (n > 0) this.requests.inc({ installation, api }, n);
    const statistics = (result as { decision?: { statistics?: SessionStatistics } } | null)?.decision
      ?.statistics;
    if (!statistics) return;
    this.repos.add(repo);
    const repository = repo;
    for (const [status, count] of TASK_STATUS_FIGURES)
      this.tasks.set({ repository, status }, count(statistics));
    this.iterations.set({ repository }, statistics.iterations.total);
    this.tokens.set({ repository, kind: "input" }, statistics.tokens.input);
    this.tokens.set({ repository, kind: "output" }, statistics.tokens.output);
    this.cost.set({ repository }, statistics.costUsd);
    this.merges.set({ repository }, statistics.merges.successful);
  }

  /** Records GitHub's latest reading of an installation's rate limit. */
  rate(installationId: number, reading: RateReading): void {
    const labels = { installation: String(installationId), resource: reading.resource };
    this.rateLimit.set(labels, reading.limit);
    this.rateRemaining.set(labels, reading.remaining);
    this.rateReset.set(labels, Math.round(reading.resetAt / 1000));
  }

  /** Drops the series of repositories no longer installed (`keys`: the installed ones, `owner/name` lower case). */
  retain(keys: ReadonlySet<string>): void {
    for (const repository of [...this.repos]) {
      if (keys.has(repository)) continue;
      this.repos.delete(repository);
      for (const [status] of TASK_STATUS_FIGURES) this.tasks.remove({ repository, status });
      this.iterations.remove({ repository });
      this.tokens.remove({ repository, kind: "input" });
      this.tokens.remove({ repository, kind: "output" });
      this.cost.remove({ repository });
      this.merges.remove({ repository });
    }
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
