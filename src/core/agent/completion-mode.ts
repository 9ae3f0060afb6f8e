/**
 * The completion modes (`completion` in .github/autopilot.yml): what counts as the agent's claim that the task is
 * done. Either way the quality commands must pass as well (decideAfterIteration in iteration.ts).
 *
 * - `promise` (the default): `<promise>COMPLETE</promise>`. The objective marker also counts: it is the same
 *   claim with a statement attached.
 * - `objective`: only the objective marker `<promise>OBJECTIVE_MET: …</promise>`, whose statement names each
 *   requirement of the issue and how the work meets it (the prompt says so: signalProtocolText in signals.ts).
 *   A plain COMPLETE, or the marker with a blank statement, is not a claim here: the iteration goes on as if the agent had not signalled, with a
 *   warning, and the next prompt repeats the protocol.
 */
import type { Signal } from "./signals.js";

export type CompletionMode = "promise" | "objective";

interface CompletionClaim {
  /** The signal the iteration decisions take. */
  signal: Signal;
  /** Why a completion signal did not count, when it did not. */
  ignored?: string;
}

/** The agent's signal as the repository's completion mode reads it. */
export function completionClaim(signal: Signal, mode: CompletionMode): CompletionClaim {
  if (mode === "objective" && signal.kind === "complete" && !signal.objective?.trim()) {
    const what = signal.objective === undefined ? "COMPLETE" : "the objective marker with no statement";
    return {
      signal: { kind: "none" },
      ignored:
        `the agent signalled ${what}, but \`completion\` is \`objective\`: only the objective marker ` +
        "(OBJECTIVE_MET with how each requirement is met) ends the task; the next iteration continues",
    };
  }
  return { signal };
}
