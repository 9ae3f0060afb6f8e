/**
 * What the hosted controller knows of each repository between reconciles, in this process: the activity its
 * last reconcile found (src/core/scheduling/repo-activity.ts) and when it was last reconciled. Ticks choose by it
 * (src/core/scheduling/tick-choice.ts); a restart forgets it, and every repository is then unknown until a
 * reconcile learns it again. With several replicas the entries are also kept in Redis (replica-work.ts), and
 * the replica that runs a tick adopts them first.
 */
import type { RepoActivity } from "../../core/scheduling/repo-activity.js";
import type { ActivityKind, RepoStanding } from "../../core/scheduling/tick-choice.js";

export interface BookEntry {
  activity: ActivityKind;
  lastReconciledAt: number | null;
  /** An idle repository's next step that time brings (RepoActivity's `wakeAtMs`). */
  wakeAtMs?: number;
}

export class RepoActivityBook {
  private readonly entries = new Map<string, BookEntry>();

  standing(key: string): RepoStanding {
    const entry = this.entries.get(key);
    return {
      key,
      activity: entry?.activity ?? "unknown",
      lastReconciledAt: entry?.lastReconciledAt ?? null,
      ...(entry?.wakeAtMs !== undefined ? { wakeAtMs: entry.wakeAtMs } : {}),
    };
  }

  /**
   * A reconcile ended at `at`: with the activity it found, or none (it failed, or said nothing) — the activity
   * known before stays. It counts as reconciled either way: it spent requests.
   */
  reconciled(key: string, at: number, found: RepoActivity | null): void {
    const before = this.entries.get(key);
    const activity = found?.kind ?? before?.activity ?? "unknown";
    const wakeAtMs = found ? (found.kind === "idle" ? found.wakeAtMs : undefined) : before?.wakeAtMs;
    this.entries.set(key, {
      activity,
      lastReconciledAt: at,
      ...(wakeAtMs !== undefined ? { wakeAtMs } : {}),
    });
  }

  /** An event that may start work: active until a reconcile says otherwise. */
  markActive(key: string): void {
    this.entries.set(key, {
      activity: "active",
      lastReconciledAt: this.entries.get(key)?.lastReconciledAt ?? null,
    });
  }

  /** What is known of the repository (null: unknown), as replicas share it. */
  entry(key: string): BookEntry | null {
    return this.entries.get(key) ?? null;
  }

  /** Takes what the replicas recorded (each of this replica's own changes is recorded there as it happens). */
  adopt(entries: ReadonlyMap<string, BookEntry>): void {
    for (const [key, entry] of entries) this.entries.set(key, entry);
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
