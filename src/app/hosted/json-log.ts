/**
 * `LOG_FORMAT=json` for the controller's own lines: one JSON object per line with pino's fields (`level` as
 * pino's number, `time` in milliseconds, `msg`), as Probot writes its own with that setting
 * (https://probot.github.io/docs/configuration/), so one log collector reads both.
 */
import type { GatewayLog } from "../../github/transport/octokit-surface.js";

const PINO_LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export function jsonLog(base: GatewayLog, now: () => number = Date.now): GatewayLog {
  const line = (level: keyof typeof PINO_LEVEL, msg: string) =>
    JSON.stringify({ level: PINO_LEVEL[level], time: now(), name: "autopilot", msg });
  return {
    debug: (msg) => base.debug(line("debug", msg)),
    info: (msg) => base.info(line("info", msg)),
    warn: (msg) => base.warn(line("warn", msg)),
    error: (msg) => base.error(line("error", msg)),
  };
}
