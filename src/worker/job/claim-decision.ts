/**
 * The claim (docs/ARCHITECTURE.md "Claim"): before touching the branch, the worker reads the progress comment's
 * result marker. A marker for the same issue and attempt with another dispatch id that is `running` and fresh
 * (updated less than the task timeout ago), or `finished`, means another run holds or held this attempt: exit
 * with `claimed_elsewhere` and touch nothing.
 */
import type { WorkerResult } from "../../core/tasks/worker-result.js";

type ClaimDecision = { proceed: true; note: string } | { proceed: false; reason: string };

interface ClaimInput {
  existing: WorkerResult | null;
  issue: number;
  attempt: number;
  dispatchId: string;
  now: number;
  /** A running marker older than this is a dead run (job killed without finishing). */
  staleAfterMs: number;
}

export function decideClaim(input: ClaimInput): ClaimDecision {
  const { existing } = input;
  if (!existing || existing.issue !== input.issue) return { proceed: true, note: "no earlier result" };
  if (existing.attempt !== input.attempt) {
    return { proceed: true, note: `earlier attempt ${existing.attempt} ${existing.status}` };
  }
  if (existing.dispatchId === input.dispatchId) {
    return { proceed: true, note: "a re-run of this dispatch" };
  }
  if (existing.status === "finished") {
    return {
      proceed: false,
      reason: `attempt ${input.attempt} already finished under dispatch ${existing.dispatchId} (${existing.result ?? "no result"})`,
    };
  }
  const updated = Date.parse(existing.updatedAt);
  const age = Number.isNaN(updated) ? Number.POSITIVE_INFINITY : input.now - updated;
  if (age < input.staleAfterMs) {
    return {
      proceed: false,
      reason: `attempt ${input.attempt} is being worked on by dispatch ${existing.dispatchId} (updated ${Math.round(age / 1000)} s ago)`,
    };
  }
  return {
    proceed: true,
    note: `dispatch ${existing.dispatchId} stopped reporting ${Math.round(age / 60_000)} min ago; taking over`,
  };
}
