/**
 * The controller as an HTTP server: Probot's `createNodeMiddleware` on node:http, bound to 127.0.0.1 by
 * default. `autopilot serve` and the sandbox scenarios start it through `startControllerServer`.
 * Webhook deliveries are read with a bound (webhook-body-limit.ts: 413 past GitHub's 25 MB cap), verified
 * (a bad signature gets 400 from Probot), answered at once, and reconciled behind the answer; `tick()` reconciles the installed repositories a tick chooses (src/app/hosted/controller-tick.ts) and resolves when done.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Probot, ProbotOctokit } from "probot";
import type { TickPolicy } from "../../core/scheduling/tick-choice.js";
import type { GatewayLog } from "../../github/transport/octokit-surface.js";
import { rateLimitHandlers, retryOptions, writePacing } from "../../github/transport/octokit.js";
import { createControllerApp } from "./app.js";
import { ControllerMetrics } from "./controller-metrics.js";
import type { ReplicaWork } from "./replica-work.js";
import { applyMemoryBounds, type MemoryBounds } from "./memory-bounds.js";
import type { ReconcileOptions, ReconcileResult } from "../reconcile-repo.js";
import { unverifiedBytes, readBoundedBody, WEBHOOK_BODY_LIMIT } from "./webhook-body-limit.js";

const WEBHOOK_PATH = "/api/github/webhooks";

export interface ControllerServerOptions {
  appId: number | string;
  privateKey: string;
  webhookSecret: string;
  /** REST base URL: https://api.github.com, a GHES `/api/v3` URL, or the sandbox's URL. */
  baseUrl?: string;
  port?: number;
  host?: string;
  /** Milliseconds between ticks (src/app/hosted/controller-tick.ts says which repositories one reconciles); 0: only on `tick()`. */
  tickMs?: number;
  log?: GatewayLog;
  /** Probot's own log level (default: LOG_LEVEL, else "warn"). */
  logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  /** Probot's own log lines: "json" one JSON object each (LOG_FORMAT=json), else "pretty" (the default). */
  logFormat?: "json" | "pretty";
  /** Octokit's retry of 5xx/network errors (default on; tests that script failures turn it off). */
  retry?: boolean;
  /** Octokit's waiting out of rate limits (default on). */
  throttle?: boolean;
  dryRun?: boolean;
  /** Wait for the reconcile before answering a webhook (default false). */
  awaitReconcile?: boolean;
  /** Largest webhook body read, in bytes (default: GitHub's 25 MB cap); larger ones get 413 unread. */
  webhookBodyLimit?: number;
  /** Bytes of webhook bodies held at once across requests (default: four bodies at the limit); past it, 503. */
  webhookUnverifiedBytes?: number;
  /** Replaces the reconcile (tests). */
  reconcile?: (options: ReconcileOptions) => Promise<ReconcileResult | unknown>;
  /** Where `alerts.webhook`'s URL and secret variables are read (default: this process's environment). */
  alertEnv?: Record<string, string | undefined>;
  /** How ticks choose repositories (src/core/scheduling/tick-choice.ts); unset fields keep their defaults. */
  tickPolicy?: Partial<TickPolicy>;
  /** How much the process keeps between reconciles (memory-bounds.ts; default DEFAULT_MEMORY_BOUNDS). */
  memoryBounds?: Partial<MemoryBounds>;
  /** The work shared with other replicas (replica-work.ts); absent: this process alone. Closed by `stop()`. */
  replicas?: ReplicaWork;
  /**
   * Serves Prometheus metrics (controller-metrics.ts) at `GET /metrics` to a scraper that sends
   * `Authorization: Bearer <this>`; absent: no metrics (they name the repositories and their costs).
   */
  metricsToken?: string;
}

export interface ControllerServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `http://127.0.0.1:PORT/api/github/webhooks` */
  webhookUrl: string;
  /** Ticks now (the repositories a tick chooses, in every installation); resolves when all are done. */
  tick(): Promise<void>;
  /** Resolves when no reconcile (from webhooks or ticks) is running or waiting. */
  idle(): Promise<void>;
  /** Stops the tick, waits for running reconciles, closes the server. */
  stop(): Promise<void>;
}

/** A request's path without its query and trailing slashes; "" when it cannot be read. */
function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
}

function isWebhookPath(url: string | undefined): boolean {
  return pathOf(url) === WEBHOOK_PATH;
}

export async function startControllerServer(options: ControllerServerOptions): Promise<ControllerServer> {
  // A long-lived controller: each repository's task graph is kept for its next reconcile (src/core/tasks/graph.ts),
  // with the process-wide caches, within the bounds.
  applyMemoryBounds(options.memoryBounds);
  const retry = options.retry ?? true;
  const throttle = options.throttle ?? true;
  // The function form: the object form of defaults() is overridden by Probot's own (probot/probot#2039).
  const Octokit = ProbotOctokit.defaults((instance: Record<string, unknown>) => ({
    ...instance,
    retry: { ...(instance.retry as object | undefined), ...retryOptions(retry) },
    throttle: {
      ...(instance.throttle as object | undefined),
      enabled: throttle,
      ...writePacing(options.baseUrl),
      ...rateLimitHandlers(options.log ?? { warn() {} }, 2, { baseUrl: options.baseUrl, mode: "pause" }),
    },
  }));
  const logLevel =
    options.logLevel ?? (process.env.LOG_LEVEL as ControllerServerOptions["logLevel"]) ?? "warn";
  const probot = new Probot({
    appId: options.appId,
    privateKey: options.privateKey,
    secret: options.webhookSecret,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    Octokit,
    logLevel,
    ...(options.logFormat ? { logFormat: options.logFormat } : {}),
  });
  const metrics = options.metricsToken ? new ControllerMetrics() : null;
  const controller = createControllerApp({
    ...(options.tickMs !== undefined ? { tickMs: options.tickMs } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(options.awaitReconcile ? { awaitReconcile: true } : {}),
    ...(options.reconcile ? { reconcile: options.reconcile } : {}),
    ...(options.alertEnv ? { alertEnv: options.alertEnv } : {}),
    ...(options.tickPolicy ? { tickPolicy: options.tickPolicy } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(metrics ? { metrics } : {}),
  });
  const middleware = await createNodeMiddleware(controller.appFn, { probot, webhooksPath: WEBHOOK_PATH });

  const bodyLimit = options.webhookBodyLimit ?? WEBHOOK_BODY_LIMIT;
  const pool = unverifiedBytes(bodyLimit);
  if (options.webhookUnverifiedBytes !== undefined) pool.max = options.webhookUnverifiedBytes;
  const server = createServer((req, res) => {
    // For a load balancer or container orchestrator: the process is up and serving (no GitHub call, no secret).
    if (req.method === "GET" && (req.url === "/healthz" || req.url?.startsWith("/healthz?"))) {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify({ ok: true }));
      return;
    }
    const notFound = () => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "Not Found" }));
    };
    if (metrics && req.method === "GET" && pathOf(req.url) === "/metrics") {
      if (!bearerMatches(req.headers.authorization, options.metricsToken!)) {
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" });
        res.end(JSON.stringify({ message: "Requires authentication" }));
        return;
      }
      metrics.text().then(
        (text) => {
          res.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" });
          res.end(text);
        },
        (error: Error) => {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ message: error.message }));
        },
      );
      return;
    }
    if (req.method !== "POST" || !isWebhookPath(req.url)) {
      void middleware(req, res, notFound);
      return;
    }
    // The body is read here, with a bound, and handed to Probot as a string (which it then verifies).
    readBoundedBody(req, res, bodyLimit, pool).then(
      (body) => {
        if (body === null) return;
        (req as IncomingMessage & { body?: string }).body = body.toString("utf8");
        void middleware(req, res, notFound);
      },
      () => {
        if (!res.headersSent) res.writeHead(400).end();
      },
    );
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let stopped = false;
  return {
    url,
    webhookUrl: `${url}${WEBHOOK_PATH}`,
    tick: () => controller.tick(),
    idle: () => controller.idle(),
    async stop() {
      if (stopped) return;
      stopped = true;
      controller.stop();
      await controller.idle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}

/** Whether an Authorization header carries the bearer token (compared in constant time, as digests). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1] ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return given !== "" && timingSafeEqual(digest(given), digest(token));
}
