/**
 * `autopilot serve`: the hosted Probot app, configured from the environment.
 *
 * APP_ID, PRIVATE_KEY (PEM, or base64 of it) or PRIVATE_KEY_PATH, WEBHOOK_SECRET; optional PORT (3000),
 * HOST (127.0.0.1; 0.0.0.0 to accept deliveries from outside), GITHUB_API_URL (https://api.github.com),
 * AUTOPILOT_TICK_SECONDS (300; 0 turns the periodic reconcile off), AUTOPILOT_DRY_RUN (true: no writes),
 * LOG_LEVEL (Probot's own log level, default warn), LOG_FORMAT (json: every log line one JSON object, Probot's
 * and the controller's own, json-log.ts); how ticks choose repositories
 * (src/core/scheduling/tick-choice.ts): AUTOPILOT_IDLE_SWEEP_HOURS (6), AUTOPILOT_TICK_IDLE_REPOS (50),
 * AUTOPILOT_TICK_NEW_REPOS (50), AUTOPILOT_RATE_RESERVE_PERCENT (20);
 * and the memory bounds AUTOPILOT_KEPT_REPOSITORIES,
 * AUTOPILOT_KEPT_GRAPHS, AUTOPILOT_READ_CACHE_ENTRIES and AUTOPILOT_READ_CACHE_MB (memory-bounds.ts);
 * several replicas sharing the work (replica-work.ts): AUTOPILOT_REDIS_URL, with AUTOPILOT_REDIS_PREFIX
 * (autopilot) and AUTOPILOT_REPLICA_CONCURRENCY (8); Prometheus metrics at GET /metrics for a scraper that
 * sends AUTOPILOT_METRICS_TOKEN as its bearer token (controller-metrics.ts; unset: no metrics).
 * WEBHOOK_PROXY_URL (Probot's smee.io relay): deliveries read from that channel are posted to the webhook URL
 * serve listens on (webhook-proxy.ts).
 */
import type { TickPolicy } from "../../core/scheduling/tick-choice.js";
import type { GatewayLog } from "../../github/transport/octokit-surface.js";
import { type ControllerServer, type ControllerServerOptions, startControllerServer } from "./http-server.js";
import { readAppCredentials } from "./app-credentials.js";
import { jsonLog } from "./json-log.js";
import { memoryBoundsFromEnv } from "./memory-bounds.js";
import { startWebhookProxy, webhookProxyUrl } from "./webhook-proxy.js";

interface ServeOptions {
  env?: NodeJS.ProcessEnv;
  log?: GatewayLog;
  /** Stop on SIGINT/SIGTERM (default true). */
  handleSignals?: boolean;
}

type LogLevel = NonNullable<ControllerServerOptions["logLevel"]>;
const LOG_LEVELS = new Set<string>(["trace", "debug", "info", "warn", "error", "fatal"]);

const consoleLog: GatewayLog = {
  debug: () => {},
  info: (m) => console.log(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};

export async function serve(options: ServeOptions = {}): Promise<ControllerServer> {
  const env = options.env ?? process.env;
  const logFormat = env.LOG_FORMAT?.trim().toLowerCase() === "json" ? "json" : "pretty";
  const log = logFormat === "json" ? jsonLog(options.log ?? consoleLog) : (options.log ?? consoleLog);
  // Checked before anything listens: a bad key or id fails here, naming its variable (app-credentials.ts).
  const { appId, privateKey, webhookSecret } = await readAppCredentials(env);
  const memoryBounds = memoryBoundsFromEnv(env);
  const tickSeconds = env.AUTOPILOT_TICK_SECONDS === undefined ? 300 : Number(env.AUTOPILOT_TICK_SECONDS);
  const tickMs = Number.isFinite(tickSeconds) && tickSeconds > 0 ? tickSeconds * 1000 : 0;
  const metricsToken = env.AUTOPILOT_METRICS_TOKEN?.trim();
  if (metricsToken !== undefined && metricsToken !== "" && !/^[\x21-\x7e]{16,}$/.test(metricsToken)) {
    throw new Error(
      "AUTOPILOT_METRICS_TOKEN must be at least 16 printable characters without spaces (for example the output of `openssl rand -hex 32`): a scraper sends it as its bearer token.",
    );
  }
  const proxyUrl = webhookProxyUrl(env);
  const replicas = await replicasFrom(env, tickMs, log);
  const server = await startControllerServer({
    appId,
    privateKey,
    webhookSecret,
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    port: env.PORT ? Number(env.PORT) : 3000,
    host: env.HOST || "127.0.0.1",
    tickMs,
    dryRun: /^true$/i.test(env.AUTOPILOT_DRY_RUN ?? ""),
    memoryBounds,
    ...(LOG_LEVELS.has(env.LOG_LEVEL ?? "") ? { logLevel: env.LOG_LEVEL as LogLevel } : {}),
    logFormat,
    tickPolicy: tickPolicyFrom(env),
    ...(replicas ? { replicas } : {}),
    ...(metricsToken ? { metricsToken } : {}),
    log,
  });
  log.info(
    `Autopilot controller listening; webhooks at ${server.webhookUrl}${metricsToken ? `; metrics at ${server.url}/metrics` : ""}${replicas ? "; sharing the work with the other replicas through Redis" : ""}`,
  );
  if (proxyUrl) {
    const proxy = await startWebhookProxy(proxyUrl, server.webhookUrl, log).catch(async (error: unknown) => {
      await server.stop();
      throw new Error(
        `WEBHOOK_PROXY_URL: could not connect to ${proxyUrl}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const stopServer = server.stop.bind(server);
    // The relay stops first: no delivery arrives at a server that is closing.
    server.stop = async () => {
      await proxy.stop();
      await stopServer();
    };
  }
  if (options.handleSignals !== false) {
    const stop = () => {
      void server.stop().then(() => process.exit(0));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  }
  return server;
}

/** The tick's policy from the environment: only the variables set, each checked. */
export function tickPolicyFrom(env: NodeJS.ProcessEnv): Partial<TickPolicy> {
  const policy: Partial<TickPolicy> = {};
  const read = (name: string, min: number, max: number): number | null => {
    const text = env[name];
    if (text === undefined || text.trim() === "") return null;
    const n = Number(text);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new Error(`${name} must be a number from ${min} to ${max} (it is ${JSON.stringify(text)}).`);
    return n;
  };
  const hours = read("AUTOPILOT_IDLE_SWEEP_HOURS", 0.01, 24 * 30);
  if (hours !== null) policy.idleSweepMs = Math.round(hours * 3_600_000);
  const idle = read("AUTOPILOT_TICK_IDLE_REPOS", 0, 100_000);
  if (idle !== null) policy.idlePerTick = Math.floor(idle);
  const unknown = read("AUTOPILOT_TICK_NEW_REPOS", 0, 100_000);
  if (unknown !== null) policy.unknownPerTick = Math.floor(unknown);
  const reserve = read("AUTOPILOT_RATE_RESERVE_PERCENT", 0, 100);
  if (reserve !== null) policy.reserveFraction = reserve / 100;
  return policy;
}

/**
 * The replicas' shared work when AUTOPILOT_REDIS_URL is set (the queue engine is loaded only then); null: this
 * process alone.
 */
async function replicasFrom(env: NodeJS.ProcessEnv, tickMs: number, log: GatewayLog) {
  const url = env.AUTOPILOT_REDIS_URL?.trim();
  if (!url) return null;
  if (!/^rediss?:\/\/[^\s]+$/.test(url))
    throw new Error(
      `AUTOPILOT_REDIS_URL must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379 (it is ${JSON.stringify(url.replace(/\/\/[^@/]*@/, "//…@"))}).`,
    );
  const concurrencyText = env.AUTOPILOT_REPLICA_CONCURRENCY?.trim();
  const concurrency = concurrencyText ? Number(concurrencyText) : 8;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256)
    throw new Error(
      `AUTOPILOT_REPLICA_CONCURRENCY must be a whole number from 1 to 256 (it is ${JSON.stringify(concurrencyText)}).`,
    );
  const prefix = env.AUTOPILOT_REDIS_PREFIX?.trim() || "autopilot";
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix))
    throw new Error(
      `AUTOPILOT_REDIS_PREFIX must be 1 to 64 letters, digits, '_', '.' or '-' (it is ${JSON.stringify(prefix)}).`,
    );
  const { ReplicaWork } = await import("./replica-work.js");
  return new ReplicaWork({ url, prefix, concurrency, tickMs, log });
}
