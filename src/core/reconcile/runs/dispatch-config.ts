/** The configuration a dispatched worker must run under. */
import type { TaskRecord } from "../../dashboard/index.js";
import type { Effect } from "../../effects.js";
import type { Reconciling } from "../context.js";
import { candidateOfDispatch } from "./best-of.js";

/**
 * Hands the worker the digest of the configuration this reconcile decided with: the worker refuses to run
 * under any other (src/worker/settings/worker-config.ts), so it is never looser than the controller.
 */
export function withConfigDigest(
  ctx: Reconciling,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): void {
  const digest = ctx.state.lastGoodConfig?.digest;
  if (digest) effect.inputs = { ...(effect.inputs ?? {}), "config-digest": digest };
}

/**
 * Hands the worker its `config` input: the session's overrides, the task's own iteration limit
 * (`/autopilot retry #N --iterations M`), which the worker applies over the file's (src/worker/settings/config-input.ts),
 * what the plan gate asks of this job (`plan`: a planning run, or the approved plan's digest), and which candidate
 * of a best-of round it is (`candidate`, src/core/reconcile/runs/best-of.ts).
 */
export function withJobOverrides(
  ctx: Reconciling,
  record: Pick<TaskRecord, "maxIterations" | "bestOf" | "dispatchId">,
  plan: string | null,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): void {
  const candidate = candidateOfDispatch(record);
  const overrides = {
    ...(ctx.state.overrides ?? {}),
    ...(record.maxIterations ? { maxIterations: record.maxIterations } : {}),
    ...(plan ? { plan } : {}),
    ...(candidate ? { candidate } : {}),
  };
  if (Object.keys(overrides).length > 0 || ctx.state.overrides)
    effect.inputs = { ...(effect.inputs ?? {}), config: JSON.stringify(overrides) };
}
