/**
 * `autopilot serve`: the hosted Probot app, configured from the environment.
 *
 * APP_ID, PRIVATE_KEY (PEM, or base64 of it) or PRIVATE_KEY_PATH, WEBHOOK_SECRET; optional PORT (3000),
 * HOST (127.0.0.1; 0.0.0.0 to accept deliveries from outside), GITHUB_API_URL (https://api.github.com),
 * AUTOPILOT_TICK_SECONDS (300; 0 turns the periodic reconcile off), AUTOPILOT_DRY_RUN (true: no writes),
 * LOG_LEVEL (Probot's own log level, default warn); how ticks choose repositories
 * (src/core/scheduling/tick-choice.ts): AUTOPILOT_IDLE_SWEEP_HOURS (6), AUTOPILOT_TICK_IDLE_REPOS (50),
 * AUTOPILOT_TICK_NEW_REPOS (50), AUTOPILOT_RATE_RESERVE_PERCENT (20);
 * and the memory bounds AUTOPILOT_KEPT_REPOSITORIES,
 * AUTOPILOT_KEPT_GRAPHS, AUTOPILOT_READ_CACHE_ENTRIES and AUTOPILOT_READ_CACHE_MB (memory-bounds.ts).
 */
import { readFile } from "node:fs/promises";
import type { TickPolicy } from "../core/scheduling/tick-choice.js";
import type { GatewayLog } from "../github/transport/octokit-surface.js";
import { type ControllerServer, type ControllerServerOptions, startControllerServer } from "./http-server.js";
import { memoryBoundsFromEnv } from "./memory-bounds.js";

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
  const log = options.log ?? consoleLog;
  const missing = ["APP_ID", "WEBHOOK_SECRET"].filter((k) => !env[k]);
  if (!env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH) missing.push("PRIVATE_KEY or PRIVATE_KEY_PATH");
  if (missing.length > 0) {
    throw new Error(
      `autopilot serve needs ${missing.join(", ")} (the GitHub App's settings; see docs/CONTROLLER.md).`,
    );
  }
  const privateKey = env.PRIVATE_KEY
    ? decodeKey(env.PRIVATE_KEY)
    : await readFile(env.PRIVATE_KEY_PATH!, "utf8");
  const memoryBounds = memoryBoundsFromEnv(env);
  const tickSeconds = env.AUTOPILOT_TICK_SECONDS === undefined ? 300 : Number(env.AUTOPILOT_TICK_SECONDS);
  const server = await startControllerServer({
    appId: env.APP_ID!,
    privateKey,
    webhookSecret: env.WEBHOOK_SECRET!,
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    port: env.PORT ? Number(env.PORT) : 3000,
    host: env.HOST || "127.0.0.1",
    tickMs: Number.isFinite(tickSeconds) && tickSeconds > 0 ? tickSeconds * 1000 : 0,
    dryRun: /^true$/i.test(env.AUTOPILOT_DRY_RUN ?? ""),
    memoryBounds,
    ...(LOG_LEVELS.has(env.LOG_LEVEL ?? "") ? { logLevel: env.LOG_LEVEL as LogLevel } : {}),
    tickPolicy: tickPolicyFrom(env),
    log,
  });
  log.info(`Autopilot controller listening; webhooks at ${server.webhookUrl}`);
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

/** A PEM as is, or base64 of one (for environments without multi-line variables). */
function decodeKey(value: string): string {
  if (value.includes("-----BEGIN")) return value.replace(/\\n/g, "\n");
  return Buffer.from(value, "base64").toString("utf8");
}
