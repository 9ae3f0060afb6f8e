/**
 * The controller inside a GitHub Actions job (our own entry instead of @probot/adapter-github-actions, which
 * pins an older Probot, ignores GITHUB_API_URL and exits 0 on errors): read the event and the inputs, run ONE
 * reconcile of this repository, and fail the job (`core.setFailed`) when it could not run.
 *
 * A `workflow_dispatch` of the controller workflow starts a session with overrides taken from the dispatch's
 * inputs (`max-parallel`, `labels`, `dry-run`) or the action's inputs of the same names.
 */
import { AlertWebhook } from "./alert-webhook.js";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as core from "@actions/core";
import type { ConfigOverrides } from "../core/dashboard/index.js";
import { describeEffect } from "../core/effects.js";
import { circuitFor, type GitHubCircuit } from "../github/transport/circuit.js";
import { type GatewayLog, repoKey } from "../github/transport/octokit-surface.js";
import { describeError, statusOf } from "../github/transport/errors.js";
import { createOctokit } from "../github/transport/octokit.js";
import { GITHUB_ACTIONS_BOT, reconcile } from "./reconcile-repo.js";
import { endingResultShown } from "../core/reconcile/runs/ending-run.js";
import { randomBytes } from "node:crypto";
import { type ReconcileLock, takeReconcileLock } from "../github/reconcile-lock.js";
import { type RateReading, watchRateHeaders } from "../github/transport/rate-headers.js";
import { type RunMetrics, runMetrics, runMetricsMarkdown } from "../core/session/run-metrics.js";
import { WAKE_AFTER_FAILURE, wakeVariableValue } from "../core/scheduling/wake-variable.js";
import { keepWakeVariable } from "../github/wake-variable-write.js";

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

/** How many more reconciles a worker's last step makes while its run's finished result does not show, and how far apart. */
const ENDING_RESULT_ROUNDS = 2;
const ENDING_RESULT_WAIT_MS = 3000;

/**
 * The reconcile lock (src/github/reconcile-lock.ts), held by a job for all its reconciles. A claim lasts
 * RECONCILE_LEASE_MS, the controller job's own `timeout-minutes: 10`, longer than a job holds it (held-write waits stop after 6 minutes); a
 * cancelled job deletes its claim on the way out; only a lost runner leaves one behind, cleared once its run is over. A
 * controller job waits RECONCILE_LOCK_WAIT_MS for the lock (a worker's last step usually holds it for seconds), then
 * fails with the holder's name, leaving the reconcile to the next event or the schedule. A worker's last step
 * waits ENDING_LOCK_WAIT_MS, then fails: its run's end then starts a controller job.
 */
const RECONCILE_LEASE_MS = 10 * 60_000;
const RECONCILE_LOCK_WAIT_MS = 3 * 60_000;
const ENDING_LOCK_WAIT_MS = 60_000;

/** Reconciles after one that merged a pull request, at most (each may merge another). */
const MERGED_ROUNDS = 3;

/** Whether a reconcile merged a pull request itself (not handed to GitHub's auto-merge or merge queue). */
function mergedDirectly(result: {
  report: { outcomes: { effect: { type: string }; status: string }[] };
}): boolean {
  return result.report.outcomes.some((o) => o.effect.type === "mergePr" && o.status === "done");
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
  /** Sets the wake variable once the client exists (src/core/scheduling/wake-variable.ts); a dry run sets none. */
  let keepWake: ((value: string) => Promise<unknown>) | null = null;
  try {
    const [owner, name] = (env.GITHUB_REPOSITORY ?? "").split("/");
    if (!owner || !name) throw new Error("GITHUB_REPOSITORY is not set (expected owner/name).");
    const token = core.getInput("github-token") || env.GITHUB_TOKEN || "";
    if (!token)
      throw new Error("No token: set the `github-token` input (an App installation token is best).");
    core.setSecret(token);
    const endingRun = parseEndingRun(core.getInput("ending-run"));
    // A worker run's last step: its workflow_dispatch is the worker's, never a session start with overrides.
    const eventName = endingRun === null ? (env.GITHUB_EVENT_NAME ?? "") : "workflow_run";
    const event = endingRun === null ? await readEvent(env.GITHUB_EVENT_PATH) : {};
    if (endingRun !== null) core.info(`the reconcile of worker run ${endingRun}'s end, from its last step`);
    const dispatchInputs =
      eventName === "workflow_dispatch" ? ((event.inputs ?? {}) as Record<string, unknown>) : {};
    const input = (key: string) => String(dispatchInputs[key] ?? "").trim() || core.getInput(key);
    const overrides = parseOverrides(input("max-parallel"), input("labels"), input("dry-run"));
    const budget = core.getInput("operation-budget");
    const baseUrl = env.GITHUB_API_URL || "https://api.github.com";
    const alerts = new AlertWebhook({ env, log: coreLog });
    // GitHub's last reading of each rate-limit resource, for the run's metrics.
    const rates = new Map<string, RateReading>();
    const client = () => {
      const octokit = createOctokit({
        auth: token,
        baseUrl,
        log: octokitLog,
        // A secondary rate limit pauses this repository's writes and ends the run; the next run resumes them.
        secondaryLimit: "pause",
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.retry === false ? { retry: false } : {}),
        ...(options.throttle === false ? { throttle: false } : {}),
      });
      watchRateHeaders(octokit, (reading) => rates.set(reading.resource, reading));
      return octokit;
    };
    if (overrides.dryRun !== true)
      keepWake = (value) =>
        keepWakeVariable({ octokit: client(), repo: { owner, name }, value, log: coreLog });
    const holder = `run-${env.GITHUB_RUN_ID || "local"}-${env.GITHUB_RUN_ATTEMPT || "1"}-${randomBytes(4).toString("hex")}`;
    const lock = (waitMs: number): Promise<ReconcileLock> =>
      takeReconcileLock({
        octokit: client(),
        repo: { owner, name },
        holder,
        sha: env.GITHUB_SHA || null,
        leaseMs: RECONCILE_LEASE_MS,
        waitMs,
        log: coreLog,
        ...(options.sleep ? { sleep: options.sleep } : {}),
      });
    const reconcileSeconds: number[] = [];
    const requestsByEndpoint: Record<string, number> = {};
    const reconcileOnce = async (startSession: boolean) => {
      const started = Date.now();
      const result = await reconcileUnmeasured(startSession);
      reconcileSeconds.push((Date.now() - started) / 1000);
      for (const [endpoint, n] of Object.entries(result.requests))
        requestsByEndpoint[endpoint] = (requestsByEndpoint[endpoint] ?? 0) + n;
      return result;
    };
    const reconcileUnmeasured = (startSession: boolean) =>
      reconcile({
        octokit: client(),
        repo: { owner, name },
        log: coreLog,
        baseUrl,
        botLogin: core.getInput("bot-login") || GITHUB_ACTIONS_BOT,
        dryRun: overrides.dryRun === true,
        alerts,
        endingRunId: endingRun,
        ...(budget ? { operationBudget: Number(budget) } : {}),
        start:
          startSession && eventName === "workflow_dispatch"
            ? {
                actor: env.GITHUB_ACTOR || String((event.sender as { login?: string })?.login ?? "someone"),
                overrides,
              }
            : null,
      });
    /**
     * The first reconcile, then those the last one's outcome asks for, each on what the one before left, in one
     * loop so that whatever round a merge happens in (a held write's included) is followed by another:
     * - a worker's last step whose run's finished result does not show yet (written moments ago): the
     *   controller workflow skips this run's end, so no other reconcile follows at once;
     * - a merge this run made: the task is done and its slot free, which the pull request's `closed` event would
     *   start a controller run to act on; the controller workflow skips that event for the bot's own merges;
     * - writes a secondary rate limit holds: this process is their only record, so the pause is waited out and
     *   another reconcile carries them out (it replays them first).
     */
    const reconcileRounds = async () => {
      let result = await reconcileOnce(true);
      const circuit = circuitFor(baseUrl);
      const key = repoKey({ owner, name });
      let endingRounds = 0;
      let mergedRounds = 0;
      let heldRounds = 0;
      let waited = 0;
      for (;;) {
        if (
          endingRun !== null &&
          endingRounds < ENDING_RESULT_ROUNDS &&
          !endingResultShown(result.snapshot, endingRun)
        ) {
          endingRounds++;
          core.info(
            `worker run ${endingRun}'s finished result does not show yet; reconciling again in ${ENDING_RESULT_WAIT_MS / 1000}s`,
          );
          await (options.sleep ?? sleepMs)(ENDING_RESULT_WAIT_MS);
          result = await reconcileOnce(false);
          continue;
        }
        if (mergedRounds < MERGED_ROUNDS && mergedDirectly(result)) {
          mergedRounds++;
          core.info("this run merged a pull request; reconciling again for what the merge changed");
          result = await reconcileOnce(false);
          continue;
        }
        const wait =
          heldRounds < ACTIONS_HELD_WRITES_ROUNDS ? heldWritesWait(circuit, key, Date.now(), waited) : null;
        if (wait === null) return result;
        heldRounds++;
        core.info(
          `${circuit.queued(key).length} write(s) held by GitHub's secondary rate limit; reconciling again in ${Math.ceil(wait / 1000)}s`,
        );
        await (options.sleep ?? sleepMs)(wait);
        waited += wait;
        // A session start is decided again only if the state recording it was held too (else it is started).
        const stateHeld = result.report.outcomes.some(
          (o) => o.effect.type === "writeTrackingIssue" && o.status === "queued",
        );
        result = await reconcileOnce(stateHeld);
      }
    };
    /**
     * Every reconcile of this job runs inside the repository's reconcile lock, taken once for all of them (the
     * waits for held writes included, so a round never waits for the lock again). A controller job whose lock
     * GitHub refuses reconciles without it, as before the lock: controller jobs still queue in their concurrency
     * group, and a worker's last step refuses to reconcile without the lock (its run's end then starts a
     * controller job).
     */
    const waitMs = endingRun === null ? RECONCILE_LOCK_WAIT_MS : ENDING_LOCK_WAIT_MS;
    const held = await lock(waitMs);
    if (held.status === "busy") {
      const message = `the reconcile lock of ${owner}/${name} stayed out of reach for ${Math.round(waitMs / 1000)} s: ${held.why}`;
      throw new Error(
        endingRun === null
          ? `${message}. A claim lasts ${RECONCILE_LEASE_MS / 60_000} minutes at most; the next event or the schedule reconciles.`
          : `${message}. This run's end starts a controller run, which reconciles it.`,
      );
    }
    if (held.status === "refused") {
      if (endingRun !== null)
        throw new Error(
          `${held.reason}. Without the reconcile lock this step does not reconcile: this run's end starts a controller run. Let Autopilot create refs under refs/autopilot/ to restore it.`,
        );
      core.warning(`${held.reason}; reconciling without the reconcile lock`);
    }
    // A cancelled job (a person, a timeout, a controller cancelling a worker run whose task is over) gets SIGINT,
    // then SIGTERM, before it is killed: the claim goes with it rather than hold every reconcile out for a lease.
    const onSignal = (signal: NodeJS.Signals) => {
      const exit = () => process.exit(signal === "SIGINT" ? 130 : 143);
      if (held.status !== "held") exit();
      else void held.release().then(exit, exit);
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    let result: Awaited<ReturnType<typeof reconcileOnce>>;
    try {
      result = await reconcileRounds();
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      // A claim left behind (GitHub did not answer its deletion) expires with its lease.
      if (held.status === "held")
        await held
          .release()
          .catch((error) =>
            core.warning(`the reconcile lock stays until it expires: ${describeError(error)}`),
          );
    }
    const circuit = circuitFor(baseUrl);
    const left = circuit.queued(repoKey({ owner, name }));
    // Writes left for the next run need the schedule's next run, whatever this reconcile found.
    await keepWake?.(left.length > 0 ? WAKE_AFTER_FAILURE : wakeVariableValue(result.activity, Date.now()));
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
    const requests = Object.values(requestsByEndpoint).reduce((a, b) => a + b, 0);
    core.setOutput("effects", String(result.decision.effects.length));
    core.setOutput("requests", String(requests));
    await writeRunMetrics(
      runMetrics({
        repository: `${owner}/${name}`,
        now: new Date(),
        event: eventName,
        statistics: result.decision.statistics ?? null,
        reconcileSeconds,
        requests: requestsByEndpoint,
        rates: [...rates.values()],
      }),
      env,
    );
    core.info(`${eventName || "run"}: ${result.decision.effects.length} effect(s), ${requests} request(s)`);
  } catch (error) {
    // A run that could not reconcile leaves the 10-minute schedule on, so the next one tries again.
    await keepWake?.(WAKE_AFTER_FAILURE);
    const where = env.GITHUB_REPOSITORY ? ` ${env.GITHUB_REPOSITORY}` : "";
    const status = statusOf(error);
    core.setFailed(
      status === null
        ? `Autopilot could not reconcile${where}: ${error instanceof Error ? error.message : String(error)}`
        : `Autopilot could not reconcile${where}: GitHub answered ${describeError(error)}`,
    );
  }
}

/**
 * The run's figures (src/core/session/run-metrics.ts) in its job summary, and as a JSON file whose path is the
 * `metrics-file` output: the controller workflow keeps it as an artifact. Neither is worth failing the run for.
 */
async function writeRunMetrics(metrics: RunMetrics, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    const dir = join(env.RUNNER_TEMP || tmpdir(), "autopilot-metrics");
    await mkdir(dir, { recursive: true });
    const file = join(dir, `run-${env.GITHUB_RUN_ID || "local"}-${env.GITHUB_RUN_ATTEMPT || "1"}.json`);
    await writeFile(file, `${JSON.stringify(metrics, null, 2)}\n`);
    core.setOutput("metrics-file", file);
  } catch (error) {
    core.warning(`the run's metrics file could not be written: ${describeError(error)}`);
  }
  // @actions/core writes the summary where the runner's own environment says (a local run has none).
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    await core.summary.addRaw(runMetricsMarkdown(metrics), true).write();
  } catch (error) {
    core.warning(`the job summary could not be written: ${describeError(error)}`);
  }
}

/** `ending-run`: the worker run's own id (`github.run_id`), or empty. */
export function parseEndingRun(text: string): number | null {
  const value = text.trim();
  if (!value) return null;
  if (!/^[1-9]\d{0,15}$/.test(value))
    throw new Error(`ending-run must be the worker run's id (github.run_id), not "${value.slice(0, 40)}".`);
  return Number(value);
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
