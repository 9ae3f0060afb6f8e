/**
 * The reconciles of one controller job in Actions: the first, then those the last one's outcome asks for, each
 * on what the one before left, in one loop so that whatever round a merge happens in (a held write's included)
 * is followed by another:
 * - a worker's last step whose run's finished result does not show yet (written moments ago): the controller
 *   workflow skips this run's end, so no other reconcile follows at once;
 * - a merge this run made: the task is done and its slot free, which the pull request's `closed` event would
 *   start a controller run to act on; the controller workflow skips that event for the bot's own merges;
 * - writes a secondary rate limit holds: this process is their only record, so the pause is waited out and
 *   another reconcile carries them out (it replays them first).
 */
import * as core from "@actions/core";
import { endingResultShown } from "../../core/reconcile/runs/ending-run.js";
import type { GitHubCircuit } from "../../github/transport/circuit.js";
import type { ReconcileResult } from "../reconcile-repo.js";

/**
 * How long in all the controller job waits out write pauses (src/github/transport/circuit.ts `pauseWrites`) for writes it
 * holds. The job's queue is their only record, and some are never decided again (a reply to a command, a
 * notice: the state already says they were sent), so the job waits rather than drop them, within the job's
 * own `timeout-minutes: 10` (templates/workflows/autopilot-controller.yml), leaving 3 minutes for its reconciles
 * and the last minute's alert deliveries (run-ending.ts): past the timeout Actions cancels the job and every
 * held write with it. Actions bills the wait.
 */
export const ACTIONS_HELD_WRITES_WAIT_SECONDS = 6 * 60;
/** Reconciles after the first, at most, to carry out held writes (each pause doubles after a refusal). */
const ACTIONS_HELD_WRITES_ROUNDS = 6;

/** How many more reconciles a worker's last step makes while its run's finished result does not show, and how far apart. */
const ENDING_RESULT_ROUNDS = 2;
const ENDING_RESULT_WAIT_MS = 3000;

/** Reconciles after one that merged a pull request, at most (each may merge another). */
const MERGED_ROUNDS = 3;

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

interface RoundsInput {
  /** One reconcile; `startSession`: it may start the session a `workflow_dispatch` asks for. */
  reconcileOnce: (startSession: boolean) => Promise<ReconcileResult>;
  circuit: GitHubCircuit;
  /** The repository's key in the circuit. */
  key: string;
  endingRun: number | null;
  sleep: (ms: number) => Promise<void>;
}

/** Runs the rounds and returns the last one's result. */
export async function reconcileRounds(input: RoundsInput): Promise<ReconcileResult> {
  const { reconcileOnce, circuit, key, endingRun, sleep } = input;
  let result = await reconcileOnce(true);
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
      await sleep(ENDING_RESULT_WAIT_MS);
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
    await sleep(wait);
    waited += wait;
    // A session start is decided again only if the state recording it was held too (else it is started).
    const stateHeld = result.report.outcomes.some(
      (o) => o.effect.type === "writeTrackingIssue" && o.status === "queued",
    );
    result = await reconcileOnce(stateHeld);
  }
}

/** Whether a reconcile merged a pull request itself (not handed to GitHub's auto-merge or merge queue). */
function mergedDirectly(result: {
  report: { outcomes: { effect: { type: string }; status: string }[] };
}): boolean {
  return result.report.outcomes.some((o) => o.effect.type === "mergePr" && o.status === "done");
}
