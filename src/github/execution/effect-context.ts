import type { Effect } from "../../core/effects.js";
import type { WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import type { SnapshotFacts } from "../snapshot/snapshot.js";

export type OutcomeStatus =
  /** Done now. */
  | "done"
  /** Nothing to do: GitHub already looks the way the effect wants. */
  | "skipped"
  /** Dry run: logged as "would …". */
  | "dry-run"
  /** Over the per-run operation limit: left for the next reconcile. */
  | "deferred"
  /** Held back by the open circuit breaker; replayed when it closes. */
  | "queued"
  /** GitHub said no (a 4xx other than the expected ones). */
  | "failed"
  /** The tracking issue changed since the snapshot (revision mismatch): re-run reconcile. */
  | "conflict"
  /** The merge was refused (405/409/422: not mergeable, or the head moved). */
  | "not-mergeable"
  /** The merge was refused and handed to GitHub's own mechanism (auto-merge, merge queue, branch update). */
  | "handed-to-github";

export interface EffectOutcome {
  effect: Effect;
  status: OutcomeStatus;
  detail?: string;
  /** Why a `deferred` effect was left for the next reconcile. */
  deferredBy?: "revision-conflict" | "operation-budget";
  /** The tracking issue created or updated. */
  issue?: number;
  /** The workflow run GitHub reported for a dispatch, when it does. */
  runId?: number;
}

export interface ExecContext {
  client: OctokitSurface;
  repo: RepoRef;
  log: GatewayLog;
  world: WorldSnapshot | null;
  facts: SnapshotFacts | null;
  botLogin: string;
  workerWorkflow: string;
  /** Reads the revision from a tracking-issue body's state marker; null when it has none (or it is corrupt). */
  revisionOf: (body: string) => number | null;
  /** Calls that change GitHub (counted by the breaker). */
  write: <T>(call: () => Promise<T>) => Promise<T>;
  /** Calls that only read. */
  read: <T>(call: () => Promise<T>) => Promise<T>;
  /** Mutable within one execute(): the tracking issue number (set when created) and keys written. */
  run: { trackingIssue: number | null; commentKeys: Set<string>; labels: Map<number, Set<string>> };
  /** Remember the tracking issue number for the next snapshot. */
  rememberTracking: (issue: number) => void;
}

/** The owner and repo parameters of a REST call on the context's repository. */
export const repoParams = (ctx: ExecContext) => ({ owner: ctx.repo.owner, repo: ctx.repo.name });

/** The branch prefix the snapshot read with (revert branches are named after task branches). */
export const branchPrefixOf = (ctx: ExecContext) => ctx.facts?.settings?.branchPrefix ?? "autopilot/";
