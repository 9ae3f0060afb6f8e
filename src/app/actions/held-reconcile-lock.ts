/**
 * Every reconcile of a controller job in Actions runs inside the repository's reconcile lock
 * (src/github/reconcile-lock.ts), taken once for all of them (the waits for held writes included, so a round
 * never waits for the lock again). A controller job whose lock GitHub refuses reconciles without it, as before
 * the lock: controller jobs still queue in their concurrency group, and a worker's last step refuses to reconcile
 * without the lock (its run's end then starts a controller job).
 *
 * A claim lasts RECONCILE_LEASE_MS, the controller job's own `timeout-minutes: 10`, longer than a job holds it
 * (held-write waits stop after 6 minutes); a cancelled job deletes its claim on the way out; only a lost runner
 * leaves one behind, cleared once its run is over. A controller job waits RECONCILE_LOCK_WAIT_MS for the lock (a
 * worker's last step usually holds it for seconds), then fails with the holder's name, leaving the reconcile to
 * the next event or the schedule. A worker's last step waits ENDING_LOCK_WAIT_MS, then fails: its run's end then
 * starts a controller job.
 */
import * as core from "@actions/core";
import { type ReconcileLock, takeReconcileLock } from "../../github/reconcile-lock.js";
import { describeError } from "../../github/transport/errors.js";
import type { GatewayLog, OctokitSurface } from "../../github/transport/octokit-surface.js";

const RECONCILE_LEASE_MS = 10 * 60_000;
const RECONCILE_LOCK_WAIT_MS = 3 * 60_000;
const ENDING_LOCK_WAIT_MS = 60_000;

interface LockInput {
  octokit: OctokitSurface;
  owner: string;
  name: string;
  holder: string;
  sha: string | null;
  endingRun: number | null;
  log: GatewayLog;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** Runs `body` inside the reconcile lock; throws (and runs nothing) when the lock stays out of reach. */
export async function withReconcileLock<T>(input: LockInput, body: () => Promise<T>): Promise<T> {
  const { owner, name, endingRun } = input;
  const waitMs = endingRun === null ? RECONCILE_LOCK_WAIT_MS : ENDING_LOCK_WAIT_MS;
  const held: ReconcileLock = await takeReconcileLock({
    octokit: input.octokit,
    repo: { owner, name },
    holder: input.holder,
    sha: input.sha,
    leaseMs: RECONCILE_LEASE_MS,
    waitMs,
    log: input.log,
    ...(input.sleep ? { sleep: input.sleep } : {}),
  });
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
  try {
    return await body();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    // A claim left behind (GitHub did not answer its deletion) expires with its lease.
    if (held.status === "held")
      await held
        .release()
        .catch((error) => core.warning(`the reconcile lock stays until it expires: ${describeError(error)}`));
  }
}
