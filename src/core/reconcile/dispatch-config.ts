/** The configuration a dispatched worker must run under. */
import type { Effect } from "../effects.js";
import type { Reconciling } from "./context.js";

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
