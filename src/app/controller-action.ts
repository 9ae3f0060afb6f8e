/**
 * The controller inside a GitHub Actions job (our own entry instead of @probot/adapter-github-actions, which
 * pins an older Probot, ignores GITHUB_API_URL and exits 0 on errors): read the event and the inputs, run ONE
 * reconcile of this repository, and fail the job (`core.setFailed`) when it could not run.
 *
 * A `workflow_dispatch` of the controller workflow starts a session with overrides taken from the dispatch's
 * inputs (`max-parallel`, `labels`, `dry-run`) or the action's inputs of the same names.
 */
import { AlertWebhook } from "./alert-webhook.js";
import { readFile } from "node:fs/promises";
import * as core from "@actions/core";
import type { ConfigOverrides } from "../core/dashboard/index.js";
import { describeEffect } from "../core/effects.js";
import { circuitFor, type GitHubCircuit } from "../github/transport/circuit.js";
import { type GatewayLog, repoKey } from "../github/transport/octokit-surface.js";
import { describeError, statusOf } from "../github/transport/errors.js";
import { createOctokit } from "../github/transport/octokit.js";
import { GITHUB_ACTIONS_BOT, reconcile } from "./reconcile-repo.js";

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** A fetch for the GitHub client (tests). */
  fetch?: typeof globalThis.fetch;
  /** Octokit's retry and rate-limit throttling (default on; tests that script failures turn them off). */
  retry?: boolean;
  throttle?: boolean;
  /** The wait for a short write pause to end (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * How long in all the controller job waits out write pauses (src/github/transport/circuit.ts `pauseWrites`) for writes it
 * holds. The job's queue is their only record, and some are never decided again (a reply to a command, a
 * notice: the state already says they were sent), so the job waits rather than drop them, within the job's
 * own `timeout-minutes: 10` (templates/workflows/autopilot-controller.yml), leaving 3 minutes for its reconciles
 * and the last minute's alert deliveries (ALERT_DELIVERY_MS): past the timeout Actions cancels the job and every
 * held write with it. Actions bills the wait.
 */
export const ACTIONS_HELD_WRITES_WAIT_SECONDS = 6 * 60;
/** Reconciles after the first, at most, to carry out held writes (each pause doubles after a refusal). */
const ACTIONS_HELD_WRITES_ROUNDS = 6;

/**
 * How long to wait before reconciling again for held writes, given how long the job has waited already; null
 * when nothing is held, nothing pauses them, or the wait would take the job past ACTIONS_HELD_WRITES_WAIT_SECONDS.
 */
export function heldWritesWait(
  circuit: GitHubCircuit,
  repo: string,
  nowMs: number,
  waitedMs = 0,
): number | null {
  if (circuit.queued(repo).length === 0) return null;
  const pause = circuit.writePause(repo, nowMs);
  if (!pause) return null;
  const wait = Math.max(0, pause.until - nowMs);
  return waitedMs + wait <= ACTIONS_HELD_WRITES_WAIT_SECONDS * 1000 ? wait : null;
}

const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const coreLog: GatewayLog = {
  debug: (m) => core.debug(m),
  info: (m) => core.info(m),
  warn: (m) => core.warning(m),
  error: (m) => core.error(m),
};

/** Octokit logs every failed attempt (retries included): warnings, not error annotations. */
const octokitLog: GatewayLog = {
  debug: (m) => core.debug(m),
  info: (m) => core.debug(m),
  warn: (m) => core.warning(m),
  error: (m) => core.warning(m),
};

/** How long the job waits for its alert deliveries before it ends. */
const ALERT_DELIVERY_MS = 60_000;

export async function runController(options: RunOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  try {
    const [owner, name] = (env.GITHUB_REPOSITORY ?? "").split("/");
    if (!owner || !name) throw new Error("GITHUB_REPOSITORY is not set (expected owner/name).");
    const token = core.getInput("github-token") || env.GITHUB_TOKEN || "";
    if (!token)
      throw new Error("No token: set the `github-token` input (an App installation token is best).");
    core.setSecret(token);
    const eventName = env.GITHUB_EVENT_NAME ?? "";
    const event = await readEvent(env.GITHUB_EVENT_PATH);
    const dispatchInputs =
      eventName === "workflow_dispatch" ? ((event.inputs ?? {}) as Record<string, unknown>) : {};
    const input = (key: string) => String(dispatchInputs[key] ?? "").trim() || core.getInput(key);
    const overrides = parseOverrides(input("max-parallel"), input("labels"), input("dry-run"));
    const budget = core.getInput("operation-budget");
    const baseUrl = env.GITHUB_API_URL || "https://api.github.com";
    const alerts = new AlertWebhook({ env, log: coreLog });
    const runOnce = (startSession: boolean) =>
      reconcile({
        octokit: createOctokit({
          auth: token,
          baseUrl,
          log: octokitLog,
          // A secondary rate limit pauses this repository's writes and ends the run; the next run resumes them.
          secondaryLimit: "pause",
          ...(options.fetch ? { fetch: options.fetch } : {}),
          ...(options.retry === false ? { retry: false } : {}),
          ...(options.throttle === false ? { throttle: false } : {}),
        }),
        repo: { owner, name },
        log: coreLog,
        baseUrl,
        botLogin: core.getInput("bot-login") || GITHUB_ACTIONS_BOT,
        dryRun: overrides.dryRun === true,
        alerts,
        ...(budget ? { operationBudget: Number(budget) } : {}),
        start:
          startSession && eventName === "workflow_dispatch"
            ? {
                actor: env.GITHUB_ACTOR || String((event.sender as { login?: string })?.login ?? "someone"),
                overrides,
              }
            : null,
      });
    let result = await runOnce(true);
    // A secondary rate limit paused this repository's writes and some are held: this process is their only
    // record, so the pause is waited out and another reconcile carries them out (it replays them first).
    const circuit = circuitFor(baseUrl);
    const key = repoKey({ owner, name });
    let waited = 0;
    for (let round = 0; round < ACTIONS_HELD_WRITES_ROUNDS; round++) {
      const wait = heldWritesWait(circuit, key, Date.now(), waited);
      if (wait === null) break;
      core.info(
        `${circuit.queued(key).length} write(s) held by GitHub's secondary rate limit; reconciling again in ${Math.ceil(wait / 1000)}s`,
      );
      await (options.sleep ?? sleepMs)(wait);
      waited += wait;
      // A session start is decided again only if the state recording it was held too (else it is started).
      const stateHeld = result.report.outcomes.some(
        (o) => o.effect.type === "writeTrackingIssue" && o.status === "queued",
      );
      result = await runOnce(stateHeld);
    }
    const left = circuit.queued(repoKey({ owner, name }));
    if (left.length > 0) {
      core.warning(
        `${left.length} write(s) not carried out (${left[0]!.reason}); the next run decides them again: ${left
          .map((q) => describeEffect(q.effect))
          .join("; ")}`,
      );
    }
    // The job ends with this process: alert deliveries get a bounded time to go out (retries included).
    let deadline: NodeJS.Timeout | undefined;
    const delivered = await Promise.race([
      alerts.idle().then(() => true),
      new Promise<boolean>((resolve) => {
        deadline = setTimeout(() => resolve(false), ALERT_DELIVERY_MS);
      }),
    ]);
    clearTimeout(deadline);
    if (!delivered) core.warning("alerts.webhook: deliveries still failing after 60 s are given up");
    await alerts.stop();
    const requests = Object.values(result.requests).reduce((a, b) => a + b, 0);
    core.setOutput("effects", String(result.decision.effects.length));
    core.setOutput("requests", String(requests));
    core.info(`${eventName || "run"}: ${result.decision.effects.length} effect(s), ${requests} request(s)`);
  } catch (error) {
    const where = env.GITHUB_REPOSITORY ? ` ${env.GITHUB_REPOSITORY}` : "";
    const status = statusOf(error);
    core.setFailed(
      status === null
        ? `Autopilot could not reconcile${where}: ${error instanceof Error ? error.message : String(error)}`
        : `Autopilot could not reconcile${where}: GitHub answered ${describeError(error)}`,
    );
  }
}

async function readEvent(path: string | undefined): Promise<Record<string, unknown>> {
  if (!path) return {};
  try {
    return JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `max-parallel: 3`, `labels: {"ready":"go"}` or `ready=go, review=check`, `dry-run: true`. */
export function parseOverrides(maxParallel: string, labels: string, dryRun: string): ConfigOverrides {
  const out: ConfigOverrides = {};
  if (maxParallel) {
    const n = Number(maxParallel);
    if (!Number.isInteger(n) || n < 1 || n > 20)
      throw new Error(`max-parallel must be a whole number from 1 to 20, not "${maxParallel}".`);
    out.maxParallel = n;
  }
  if (labels) {
    let parsed: Record<string, string> = {};
    if (labels.startsWith("{")) {
      parsed = JSON.parse(labels) as Record<string, string>;
    } else {
      for (const pair of labels.split(/[,\n]/)) {
        if (!pair.trim()) continue;
        const [key, ...rest] = pair.split("=");
        if (!key || rest.length === 0)
          throw new Error(`labels: expected role=name pairs, got "${pair.trim()}".`);
        parsed[key.trim()] = rest.join("=").trim();
      }
    }
    if (Object.keys(parsed).length > 0) out.labels = parsed;
  }
  if (dryRun) {
    if (!/^(true|false)$/i.test(dryRun)) throw new Error(`dry-run must be true or false, not "${dryRun}".`);
    if (/^true$/i.test(dryRun)) out.dryRun = true;
  }
  return out;
}
