/**
 * The dispatch of a worker run (executor.ts's `dispatchWorker`): the dispatch lock taken first (a ref per
 * dispatch id, so two controllers never send the same one), the workflow dispatched, the run that carries it
 * found, and the locks of runs that ended released.
 */
import { dispatchLockRef } from "../../core/contract.js";
import { fetchWorkerRuns } from "../snapshot/worker-run-listing.js";
import type { Effect } from "../../core/effects.js";
import { classifyFailure, messageOf, statusOf } from "../transport/errors.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { repoParams } from "./effect-context.js";

export async function dispatch(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): Promise<EffectOutcome> {
  if (effect.resend) {
    // A resend goes without the lock (its first send may have taken it), so it is the one dispatch that can
    // start a second run: read the runs again first, as the snapshot that decided it may be older than the run.
    const run = await runCarrying(ctx, effect.dispatchId);
    if (run !== null)
      return {
        effect,
        status: "skipped",
        detail: `run ${run} already carries dispatch ${effect.dispatchId}`,
      };
  }
  const lock = effect.resend ? "taken" : await takeDispatchLock(ctx, effect);
  if (lock === "lost") {
    return {
      effect,
      status: "skipped",
      detail: `another controller already dispatched #${effect.issue} attempt ${effect.attempt}`,
    };
  }
  const inputs: Record<string, string> = {
    ...(effect.inputs ?? {}),
    issue: String(effect.issue),
    attempt: String(effect.attempt),
    "dispatch-id": effect.dispatchId,
    "tracking-issue": ctx.run.trackingIssue === null ? "" : String(ctx.run.trackingIssue),
  };
  const send = (withInputs: Record<string, string>) =>
    ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...repoParams(ctx),
        workflow_id: ctx.workerWorkflow,
        ref: ctx.world?.repo.defaultBranch ?? "main",
        inputs: withInputs,
        return_run_details: true,
      }),
    );
  const notes: string[] = [];
  if (typeof lock === "object") notes.push(`without its dispatch lock: ${lock.refused}`);
  let response: Awaited<ReturnType<typeof send>>;
  try {
    response = await send(inputs);
  } catch (error) {
    if (!undeclaredConfigDigest(error, inputs)) throw error;
    // A worker workflow written before `config-digest` existed: GitHub refuses the undeclared input. Such a
    // worker still never falls back to the defaults (it takes the default branch's file, or the dashboard's
    // last good configuration while that file is bad, or refuses), so the task goes on, and the log says how
    // to get the stricter check.
    const { "config-digest": _dropped, ...older } = inputs;
    const note =
      `${ctx.workerWorkflow} does not declare the \`config-digest\` input, so its worker cannot check that it runs ` +
      "under the configuration the controller decided with: add the input as templates/workflows/autopilot-worker.yml does";
    ctx.log.warn(note);
    notes.push(note);
    response = await send(older);
  }
  const data = response.data as { workflow_run_id?: number } | undefined;
  const outcome: EffectOutcome = { effect, status: "done" };
  if (notes.length > 0) outcome.detail = notes.join("; ");
  if (data && typeof data.workflow_run_id === "number") outcome.runId = data.workflow_run_id;
  return outcome;
}

/**
 * The worker run (the dispatched runs the snapshot would list) whose title carries this dispatch id; null when
 * none does, or when the read fails for another reason than a rate limit (the resend then goes: a lost run costs
 * the task more than a duplicate, which the next reconcile cancels). A rate limit goes up to the gateway, which
 * holds the dispatch for the next reconcile rather than resend it blind.
 */
async function runCarrying(ctx: ExecContext, dispatchId: string): Promise<number | null> {
  try {
    const runs = await fetchWorkerRuns(ctx, ctx.workerWorkflow);
    return runs.find((r) => r.dispatchId === dispatchId)?.id ?? null;
  } catch (error) {
    const kind = classifyFailure(error);
    if (kind === "rate-limit" || kind === "secondary-rate-limit") throw error;
    return null;
  }
}

/** GitHub's 422 for a dispatch input the workflow does not declare, when that input is `config-digest`. */
function undeclaredConfigDigest(error: unknown, inputs: Record<string, string>): boolean {
  return (
    "config-digest" in inputs &&
    statusOf(error) === 422 &&
    /unexpected inputs provided/i.test(messageOf(error)) &&
    messageOf(error).includes("config-digest")
  );
}

type DispatchLock = "taken" | "lost" | { refused: string };

/**
 * GitHub has no compare-and-swap for issue bodies, so the dashboard's revision check cannot stop two controllers
 * from dispatching the same task attempt. Creating a git ref is atomic: exactly one creator of
 * `refs/autopilot/dispatch/issue-N-attempt-A` succeeds and every other gets 422. The ref points at the default
 * branch's head as the snapshot saw it (any commit of the repository would do), so it costs one request a
 * dispatch; the head is read only when the snapshot did not give it.
 *
 * GitHub also answers 422 when it refuses the ref for another reason (a ruleset restricting ref creation, for
 * one), so a 422 is checked by reading the ref: there → another controller took it (`lost`); absent → the
 * refusal is something else (`refused`, with GitHub's words). Then the dispatch goes on without the lock, as
 * it did before locks existed: the tracking issue's revision check (its write comes before every dispatch and a
 * stale controller's write is refused) and the worker's claim of the task keep two controllers from running one
 * attempt twice, and the dashboard says the lock is missing (src/core/reconcile/runs/dispatch-locks.ts).
 */
async function takeDispatchLock(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): Promise<DispatchLock> {
  const branch = ctx.world?.repo.defaultBranch ?? "main";
  let sha = ctx.facts?.defaultBranchSha ?? null;
  if (!sha) {
    const head = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
        ...repoParams(ctx),
        ref: `heads/${branch}`,
      }),
    );
    sha = (head.data as { object?: { sha?: string } }).object?.sha ?? null;
  }
  if (!sha) throw new Error(`cannot read the head of ${branch} to take the dispatch lock`);
  const ref = dispatchLockRef(effect.issue, effect.attempt);
  try {
    await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/git/refs", { ...repoParams(ctx), ref, sha }),
    );
    return "taken";
  } catch (error) {
    if (statusOf(error) !== 422) throw error;
    try {
      await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
          ...repoParams(ctx),
          ref: ref.slice("refs/".length),
        }),
      );
      return "lost";
    } catch (readError) {
      if (statusOf(readError) !== 404) throw readError;
      // GitHub puts a ruleset's reason after the first line ("Repository rule violations found\n\n…").
      const words = messageOf(error).replace(/\s+/g, " ").trim().slice(0, 200);
      const refused = `GitHub refused to create ${ref} (422 ${words})`;
      ctx.log.warn(`${refused}; dispatching #${effect.issue} attempt ${effect.attempt} without the lock`);
      return { refused };
    }
  }
}

/** Deletes an ended task's dispatch lock refs; one already gone (or never created) is fine. */
export async function releaseDispatchLocks(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "releaseDispatchLocks" }>,
): Promise<EffectOutcome> {
  let deleted = 0;
  for (let attempt = 1; attempt <= effect.attempts; attempt++) {
    try {
      await ctx.write(() =>
        ctx.client.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", {
          ...repoParams(ctx),
          ref: dispatchLockRef(effect.issue, attempt).slice("refs/".length),
        }),
      );
      deleted++;
    } catch (error) {
      const status = statusOf(error);
      if (status !== 404 && status !== 422) throw error;
    }
  }
  return deleted > 0 ? { effect, status: "done" } : { effect, status: "skipped", detail: "no lock left" };
}
