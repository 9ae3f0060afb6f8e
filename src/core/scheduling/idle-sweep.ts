/**
 * When an idle repository's safety sweep is due. Each repository has its own moment in every sweep interval,
 * its phase, from a stable hash of its name: the sweeps of many repositories fall evenly across the interval
 * instead of all at once, and the same repository keeps its moment across restarts. A repository is due once
 * its latest moment has passed since it was last reconciled (by anything: a webhook's reconcile counts too), so
 * the sweep reconciles it at most once per interval.
 */

/** FNV-1a (32 bits) of the text: stable, cheap, and spread well enough for phases. */
function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The repository's latest sweep moment at or before `nowMs` (epoch ms). */
export function latestSweepMoment(key: string, nowMs: number, intervalMs: number): number {
  const phase = stableHash(key) % intervalMs;
  return nowMs - ((((nowMs - phase) % intervalMs) + intervalMs) % intervalMs);
}

/** Whether the repository's sweep is due: its latest moment came after its last reconcile (or it had none). */
export function sweepDue(
  key: string,
  lastReconciledAt: number | null,
  nowMs: number,
  intervalMs: number,
): boolean {
  if (lastReconciledAt === null) return true;
  return lastReconciledAt < latestSweepMoment(key, nowMs, intervalMs);
}
