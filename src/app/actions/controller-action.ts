/**
 * The controller inside a GitHub Actions job (our own entry instead of @probot/adapter-github-actions, which
 * pins an older Probot, ignores GITHUB_API_URL and exits 0 on errors): read the event and the inputs, run the
 * reconciles of this repository, and fail the job (`core.setFailed`) when it could not run. Its phases, in
 * order: the inputs (run-inputs.ts) → the reconcile lock (held-reconcile-lock.ts) around the rounds of
 * reconciles (reconcile-rounds.ts) → the ending (run-ending.ts).
 *
 * A `workflow_dispatch` of the controller workflow starts a session with overrides taken from the dispatch's
 * inputs (`max-parallel`, `labels`, `dry-run`) or the action's inputs of the same names.
 */
import { randomBytes } from "node:crypto";
import * as core from "@actions/core";
import { WAKE_AFTER_FAILURE, wakeVariableValue } from "../../core/scheduling/wake-variable.js";
import { runMetrics } from "../../core/session/run-metrics.js";
import { circuitFor } from "../../github/transport/circuit.js";
import { describeError, statusOf } from "../../github/transport/errors.js";
import { type GatewayLog, repoKey } from "../../github/transport/octokit-surface.js";
import { createOctokit } from "../../github/transport/octokit.js";
import { keepWakeVariable } from "../../github/wake-variable-write.js";
import { type RateReading, watchRateHeaders } from "../../github/transport/rate-headers.js";
import { AlertWebhook } from "../alert-webhook.js";
import { GITHUB_ACTIONS_BOT, type ReconcileResult, reconcile } from "../reconcile-repo.js";
import { withReconcileLock } from "./held-reconcile-lock.js";
import { reconcileRounds } from "./reconcile-rounds.js";
import { type RunInputs, readRunInputs } from "./run-inputs.js";
import { deliverAlerts, warnOfWritesLeft, writeRunMetrics } from "./run-ending.js";

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

export async function runController(options: RunOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  /** Sets the wake variable once the client exists (src/core/scheduling/wake-variable.ts); a dry run sets none. */
  let keepWake: ((value: string) => Promise<unknown>) | null = null;
  try {
    const inputs = await readRunInputs(env);
    const { owner, name, baseUrl, endingRun, eventName } = inputs;
    const alerts = new AlertWebhook({ env, log: coreLog });
    // GitHub's last reading of each rate-limit resource, for the run's metrics.
    const rates = new Map<string, RateReading>();
    const client = () => {
      const octokit = createOctokit({
        auth: inputs.token,
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
    if (inputs.overrides.dryRun !== true)
      keepWake = (value) =>
        keepWakeVariable({ octokit: client(), repo: { owner, name }, value, log: coreLog });
    const reconcileSeconds: number[] = [];
    const requestsByEndpoint: Record<string, number> = {};
    const reconcileOnce = async (startSession: boolean): Promise<ReconcileResult> => {
      const started = Date.now();
      const result = await reconcile({
        octokit: client(),
        repo: { owner, name },
        log: coreLog,
        baseUrl,
        botLogin: core.getInput("bot-login") || GITHUB_ACTIONS_BOT,
        dryRun: inputs.overrides.dryRun === true,
        alerts,
        persistCircuit: true,
        endingRunId: endingRun,
        ...(inputs.operationLimit !== null ? { operationLimit: inputs.operationLimit } : {}),
        start: startSession ? sessionStart(inputs) : null,
      });
      reconcileSeconds.push((Date.now() - started) / 1000);
      for (const [endpoint, n] of Object.entries(result.requests))
        requestsByEndpoint[endpoint] = (requestsByEndpoint[endpoint] ?? 0) + n;
      return result;
    };
    const circuit = circuitFor(baseUrl);
    const key = repoKey({ owner, name });
    const holder = `run-${env.GITHUB_RUN_ID || "local"}-${env.GITHUB_RUN_ATTEMPT || "1"}-${randomBytes(4).toString("hex")}`;
    const lock = {
      octokit: client(),
      owner,
      name,
      holder,
      sha: env.GITHUB_SHA || null,
      endingRun,
      log: coreLog,
    };
    const result = await withReconcileLock({ ...lock, sleep: options.sleep }, () =>
      reconcileRounds({ reconcileOnce, circuit, key, endingRun, sleep: options.sleep ?? sleepMs }),
    );
    warnOfWritesLeft(circuit, key);
    // Writes left for the next run need the schedule's next run, whatever this reconcile found.
    await keepWake?.(
      circuit.queued(key).length > 0 ? WAKE_AFTER_FAILURE : wakeVariableValue(result.activity, Date.now()),
    );
    await deliverAlerts(alerts);
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

/** The session a `workflow_dispatch` of the controller workflow starts, with its overrides. */
function sessionStart(inputs: RunInputs) {
  return inputs.eventName === "workflow_dispatch"
    ? { actor: inputs.actor, overrides: inputs.overrides }
    : null;
}
