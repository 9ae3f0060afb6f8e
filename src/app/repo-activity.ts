/**
 * What the hosted controller knows of each repository between reconciles, in this process: the activity its
 * last reconcile found (src/core/scheduling/repo-activity.ts) and when it was last reconciled. Ticks choose by it
 * (src/core/scheduling/tick-choice.ts); a restart forgets it, and every repository is then unknown until a
 * reconcile learns it again.
 */
import type { ActivityKind, RepoStanding } from "../core/scheduling/tick-choice.js";

interface Entry {
  activity: ActivityKind;
  reason: string | null;
  lastReconciledAt: number | null;
}

export class RepoActivityBook {
  private readonly entries = new Map<string, Entry>();

  standing(key: string): RepoStanding {
    const entry = this.entries.get(key);
    return {
      key,
      activity: entry?.activity ?? "unknown",
      lastReconciledAt: entry?.lastReconciledAt ?? null,
    };
  }

  /** Why the repository counts as active (its last verdict's reason, or the event that marked it). */
  reason(key: string): string | null {
    return this.entries.get(key)?.reason ?? null;
  }

  /**
   * A reconcile ended at `at`: with the activity it found, or none (it failed, or said nothing) — the activity
   * known before stays. It counts as reconciled either way: it spent requests.
   */
  reconciled(
    key: string,
    at: number,
    found: { kind: "active"; reason: string } | { kind: "idle" } | null,
  ): void {
    const known = this.entries.get(key);
    const activity = found?.kind ?? known?.activity ?? "unknown";
    const reason = found ? (found.kind === "active" ? found.reason : null) : (known?.reason ?? null);
    this.entries.set(key, { activity, reason, lastReconciledAt: at });
  }

  /** An event that may start work: active until a reconcile says otherwise. */
  markActive(key: string, reason: string): void {
    const known = this.entries.get(key);
    this.entries.set(key, { activity: "active", reason, lastReconciledAt: known?.lastReconciledAt ?? null });
  }

  /** Forgets the repository: unknown again (added to an installation anew). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every repository not in `keys` (no longer installed). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.entries.keys()) if (!keys.has(key)) this.entries.delete(key);
  }
}
