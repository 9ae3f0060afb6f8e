/**
 * The end of a controller job in Actions: the writes it leaves to the next run, its alert deliveries given a
 * bounded time, its outputs, and its figures (src/core/session/run-metrics.ts) in the job summary and a file.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as core from "@actions/core";
import { describeEffect } from "../../core/effects.js";
import { type RunMetrics, runMetricsMarkdown } from "../../core/session/run-metrics.js";
import type { GitHubCircuit } from "../../github/transport/circuit.js";
import { describeError } from "../../github/transport/errors.js";
import type { AlertWebhook } from "../alert-webhook.js";

/** How long the job waits for its alert deliveries before it ends. */
const ALERT_DELIVERY_MS = 60_000;

/** Warns of the writes a secondary rate limit still holds: the next run decides them again. */
export function warnOfWritesLeft(circuit: GitHubCircuit, key: string): void {
  const left = circuit.queued(key);
  if (left.length === 0) return;
  core.warning(
    `${left.length} write(s) not carried out (${left[0]!.reason}); the next run decides them again: ${left
      .map((q) => describeEffect(q.effect))
      .join("; ")}`,
  );
}

/** The job ends with this process: alert deliveries get a bounded time to go out (retries included). */
export async function deliverAlerts(alerts: AlertWebhook): Promise<void> {
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
}

/**
 * The run's figures in its job summary, and as a JSON file whose path is the `metrics-file` output: the
 * controller workflow keeps it as an artifact. Neither is worth failing the run for.
 */
export async function writeRunMetrics(metrics: RunMetrics, env: NodeJS.ProcessEnv): Promise<void> {
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
