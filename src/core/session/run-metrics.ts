/**
 * The figures one controller run leaves behind, the same ones `autopilot serve` shows Prometheus
 * (src/app/hosted/controller-metrics.ts): the session's tasks by status, iterations, tokens, cost and merges; the
 * reconciles the run made and how long they took; the requests they made to GitHub by API; and GitHub's last
 * reading of each rate-limit resource. The Actions controller writes them to its job summary (as a table) and to
 * a JSON file its workflow keeps as an artifact (templates/workflows/autopilot-controller.yml), so a run's
 * figures are where Actions users already look, and a script can collect them across runs. Pure: the caller
 * passes the time.
 */
import type { SessionStatistics } from "./stats.js";

/** The dashboard's statuses, in the order both the metrics and the summary list them. */
export const TASK_STATUS_FIGURES = [
  ["ready", (s: SessionStatistics) => s.tasks.ready],
  ["in-progress", (s: SessionStatistics) => s.tasks.inProgress],
  ["review", (s: SessionStatistics) => s.tasks.review],
  ["blocked", (s: SessionStatistics) => s.tasks.blocked],
  ["needs-human", (s: SessionStatistics) => s.tasks.needsHuman],
  ["timeout", (s: SessionStatistics) => s.tasks.timeout],
  ["failed", (s: SessionStatistics) => s.tasks.failed],
  ["done", (s: SessionStatistics) => s.tasks.completed],
  ["skipped", (s: SessionStatistics) => s.tasks.skipped],
] as const;

type TaskStatusFigure = (typeof TASK_STATUS_FIGURES)[number][0];

/** One reading of a rate-limit resource, as GitHub's headers gave it (src/github/transport/rate-headers.ts). */
interface RateFigure {
  resource: string;
  limit: number;
  remaining: number;
  /** When the window resets (epoch ms). */
  resetAt: number;
}

/** The JSON a controller run writes: versioned, so a collecting script can tell a later shape apart. */
export interface RunMetrics {
  format: "autopilot-run-metrics/1";
  /** `owner/name`. */
  repository: string;
  /** When the run's last reconcile ended (ISO). */
  at: string;
  /** The event that started the run (`schedule`, `issues`, … or `workflow_run` for a worker's last step). */
  event: string;
  /** The session as the run's last reconcile left it; null when no reconcile read it. */
  session: {
    tasks: Record<TaskStatusFigure, number>;
    iterations: number;
    tokens: { input: number; output: number };
    costUsd: number;
    merges: number;
  } | null;
  reconciles: { count: number; seconds: number[] };
  /** Requests to GitHub with the run's token: REST requests and GraphQL queries. */
  requests: { rest: number; graphql: number };
  rateLimits: { resource: string; limit: number; remaining: number; resetAt: string }[];
}

interface RunMetricsInput {
  repository: string;
  now: Date;
  event: string;
  statistics: SessionStatistics | null;
  /** Each reconcile's duration in seconds, in order. */
  reconcileSeconds: readonly number[];
  /** Requests by `METHOD /route`, summed over the run's reconciles. */
  requests: Readonly<Record<string, number>>;
  /** The last reading of each resource. */
  rates: readonly RateFigure[];
}

/**
 * Requests by API, from counts by `METHOD /route`: GraphQL queries apart from REST requests. The App's own
 * requests (`/app/…`, made with its JWT for installation tokens) are not the installation token's and are left out.
 */
export function requestsByApi(requests: Readonly<Record<string, number>>): { rest: number; graphql: number } {
  const out = { rest: 0, graphql: 0 };
  for (const [endpoint, n] of Object.entries(requests)) {
    if (/^\S+ \/app\//.test(endpoint)) continue;
    if (endpoint === "POST /graphql") out.graphql += n;
    else out.rest += n;
  }
  return out;
}

export function runMetrics(input: RunMetricsInput): RunMetrics {
  const s = input.statistics;
  return {
    format: "autopilot-run-metrics/1",
    repository: input.repository,
    at: input.now.toISOString(),
    event: input.event,
    session: s
      ? {
          tasks: Object.fromEntries(
            TASK_STATUS_FIGURES.map(([status, count]) => [status, count(s)]),
          ) as Record<TaskStatusFigure, number>,
          iterations: s.iterations.total,
          tokens: { input: s.tokens.input, output: s.tokens.output },
          costUsd: s.costUsd,
          merges: s.merges.successful,
        }
      : null,
    reconciles: {
      count: input.reconcileSeconds.length,
      seconds: input.reconcileSeconds.map((x) => Math.round(x * 1000) / 1000),
    },
    requests: requestsByApi(input.requests),
    rateLimits: [...input.rates]
      .sort((a, b) => a.resource.localeCompare(b.resource))
      .map((r) => ({
        resource: r.resource,
        limit: r.limit,
        remaining: r.remaining,
        resetAt: new Date(r.resetAt).toISOString(),
      })),
  };
}

/** The job summary's Markdown: one table of the figures, the same as the JSON. */
export function runMetricsMarkdown(metrics: RunMetrics): string {
  const rows: [string, string][] = [];
  const s = metrics.session;
  if (s) {
    const tasks = TASK_STATUS_FIGURES.map(([status]) => [status, s.tasks[status]] as const)
      .filter(([, n]) => n > 0)
      .map(([status, n]) => `${status} ${n}`);
    rows.push(["Tasks", tasks.length ? tasks.join(", ") : "none"]);
    rows.push(["Iterations", String(s.iterations)]);
    rows.push(["Tokens", `${s.tokens.input} in, ${s.tokens.output} out`]);
    rows.push(["Cost", `$${s.costUsd.toFixed(2)}`]);
    rows.push(["Merges", String(s.merges)]);
  } else {
    rows.push(["Tasks", "no reconcile read the session"]);
  }
  const total = metrics.reconciles.seconds.reduce((a, b) => a + b, 0);
  rows.push(["Reconciles", `${metrics.reconciles.count} (${total.toFixed(1)} s)`]);
  rows.push(["GitHub requests", `${metrics.requests.rest} REST, ${metrics.requests.graphql} GraphQL`]);
  for (const r of metrics.rateLimits)
    rows.push([`Rate limit (${r.resource})`, `${r.remaining} of ${r.limit} left, resets ${r.resetAt}`]);
  return [
    `### Autopilot controller: ${metrics.repository}`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
  ].join("\n");
}
