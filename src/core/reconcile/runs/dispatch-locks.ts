/**
 * The dispatch locks (one ref per task attempt, taken by src/github/execution/executor.ts before each dispatch), as the
 * snapshot lists them: a dispatched attempt whose lock ref does not exist means GitHub refused to create it
 * (the executor then dispatches without it), which the dashboard says; the locks of tasks that left the state
 * (a failed deletion, or refs from before locks were deleted) are deleted, a few per reconcile.
 */
import { DISPATCH_LOCK_PREFIX, dispatchLockRef, parseDispatchLock } from "../../contract.js";
import { note, type Reconciling } from "../context.js";
import { incidentOnce } from "../messages.js";
import { statusOf } from "../task-labels.js";

/** Leftover tasks whose locks one reconcile deletes at most (each attempt's ref is one request). */
const LOCK_RELEASES_PER_RECONCILE = 5;

export const LOCK_REFUSED_INCIDENT =
  "GitHub refused to create a dispatch lock (a ref under refs/autopilot/dispatch/; a ruleset restricting ref " +
  "creation does that, and the controller's log has GitHub's words). Workers are dispatched without it: the " +
  "tracking issue's revision check and the worker's claim still keep two controllers from running one attempt " +
  "twice. Let Autopilot create refs under refs/autopilot/ to restore the lock.";

export function checkDispatchLocks(ctx: Reconciling): void {
  const listed = ctx.snapshot.dispatchLocks;
  if (!listed) return;
  const names = new Set(listed);
  // A lock missing from a cut list is not a refused lock; leftovers are deleted from any list.
  for (const [key, record] of ctx.snapshot.dispatchLocksComplete ? Object.entries(ctx.state.tasks) : []) {
    if (!record.dispatchId || record.attempt === 0) continue;
    // Only once its run shows was the dispatch sent, and the lock (taken before it) tried.
    if (!ctx.snapshot.runs.some((r) => r.dispatchId === record.dispatchId)) continue;
    const ref = dispatchLockRef(Number(key), record.attempt);
    if (names.has(ref.slice(DISPATCH_LOCK_PREFIX.length))) continue;
    note(ctx, `#${key}: attempt ${record.attempt} runs without its dispatch lock (${ref} does not exist)`);
    incidentOnce(ctx, "dispatch_lock", LOCK_REFUSED_INCIDENT);
  }

  const leftovers = new Map<number, number>();
  for (const name of listed) {
    const lock = parseDispatchLock(name);
    if (!lock || ctx.state.tasks[lock.issue]) continue;
    const n = lock.issue;
    const live = ctx.snapshot.runs.some((r) => r.issue === n && r.status !== "completed");
    if (live || statusOf(ctx, n) === "in-progress") continue;
    if (ctx.effects.some((e) => e.type === "releaseDispatchLocks" && e.issue === n)) continue;
    leftovers.set(n, Math.max(leftovers.get(n) ?? 0, lock.attempt));
  }
  for (const [issue, attempts] of [...leftovers].slice(0, LOCK_RELEASES_PER_RECONCILE)) {
    ctx.effects.push({ type: "releaseDispatchLocks", issue, attempts });
  }
}
