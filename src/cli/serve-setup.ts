/**
 * `autopilot serve` without App credentials: take them from `.env` in the current directory when it has them,
 * else register the App through the manifest flow first (src/cli/register.ts) and go on with what it saved.
 * Variables already set in the environment win over `.env`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { runRegister } from "./register.js";
import { hasAppCredentials, type SetupIo } from "./setup-context.js";

type ServeSetupIo = SetupIo;

function loadDotEnv(env: NodeJS.ProcessEnv, dir: string): void {
  const path = join(dir, ".env");
  if (!existsSync(path)) return;
  for (const [key, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
    if (env[key] === undefined) env[key] = value;
  }
}

/**
 * 0 when credentials are in `io.env` afterwards; otherwise `autopilot register`'s exit code (2 when `.env` is in
 * the way, 130 when interrupted, 1 when the registration failed). WEBHOOK_URL, when set, is the App's webhook
 * URL (register's `--webhook-url`): a hosted controller needs deliveries.
 */
export async function registerForServe(io: ServeSetupIo, dir = process.cwd()): Promise<number> {
  loadDotEnv(io.env, dir);
  if (hasAppCredentials(io.env)) return 0;
  io.out("No GitHub App credentials (APP_ID, PRIVATE_KEY, WEBHOOK_SECRET): register the App first.");
  const registered = await runRegister(io, {
    dir,
    ...(io.env.WEBHOOK_URL ? { webhookUrl: io.env.WEBHOOK_URL } : {}),
  });
  if (registered !== 0) return registered;
  loadDotEnv(io.env, dir);
  io.out("Starting the controller with the new App's credentials.");
  return 0;
}
