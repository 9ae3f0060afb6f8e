/**
 * What a world snapshot (src/github/snapshot/snapshot.ts) is given and gives back: the settings it reads with, the
 * per-repository memory it carries between reconciles, its context and its output.
 */
import type { AutopilotConfig } from "../../core/config/index.js";
import { humanGateDigest } from "../../core/gates/diff-gate.js";
import type { DashboardState } from "../../core/dashboard/index.js";
import type { BranchActivity, CommentNode, Permission, WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";

/** What the snapshot needs from the configuration; derived from the config text the query returns. */
export interface SnapshotSettings {
  /** An open issue with any of these labels is in the pool. */
  poolLabels: string[];
  readyLabel: string;
  /** Task PRs whose issue carries it get their diff read (src/github/pull-verification.ts). */
  reviewLabel?: string;
  /** humanGateDigest of the configuration: a kept diff verdict under other settings is read again. */
  gateDigest?: string;
  /** Comments on issues with this label may answer a question, however long ago they were first seen. */
  needsHumanLabel: string;
  branchPrefix: string;
  workerWorkflow: string;
  /** The stale-branch sweep's settings when it is on (src/core/reconcile/pulls/stale-branches.ts); absent: off. */
  sweep?: Pick<AutopilotConfig, "cleanup" | "labels" | "branchPrefix">;
  /** Best of N's label when it is on: who added it is read, since only a writer's asks for a round. */
  bestOfLabel?: string;
}

/** The settings from a configuration: the pool is every open issue with one of the state labels. */
export function snapshotSettings(
  config: Pick<AutopilotConfig, "labels" | "branchPrefix" | "workerWorkflow" | "humanGate"> &
    Partial<Pick<AutopilotConfig, "cleanup" | "bestOf">>,
): SnapshotSettings {
  const l = config.labels;
  return {
    poolLabels: [l.ready, l.inProgress, l.review, l.blocked, l.needsHuman, l.timeout, l.failed],
    readyLabel: l.ready,
    reviewLabel: l.review,
    gateDigest: humanGateDigest(config.humanGate),
    needsHumanLabel: l.needsHuman,
    branchPrefix: config.branchPrefix,
    workerWorkflow: config.workerWorkflow,
    ...(config.cleanup && config.cleanup.staleBranchDays !== "off"
      ? { sweep: { cleanup: config.cleanup, labels: config.labels, branchPrefix: config.branchPrefix } }
      : {}),
    ...(config.bestOf && config.bestOf.candidates.length >= 2 ? { bestOfLabel: config.bestOf.label } : {}),
  };
}

/** Per repository, per process: what the next snapshot can assume (never required for correctness). */
export interface RepoMemory {
  trackingIssue: number | null;
  /**
   * Younger open tracking issues the last search found beside `trackingIssue` (src/github/snapshot/tracking-pick.ts):
   * while there are, every snapshot searches again, so they are seen until a reconcile has closed them.
   */
  trackingDuplicates: number[];
  poolLabels: string[] | null;
  /** False once the server rejected `Issue.blockedBy` (an older GitHub Enterprise Server). */
  blockedByField: boolean;
  /**
   * Permissions looked up recently (epoch ms of the lookup). Every reconcile would otherwise spend one request
   * per person who applied a ready label; a revoked permission is noticed within PERMISSION_CACHE_MS.
   */
  permissions: Map<string, { permission: Permission; at: number }>;
  /** The worker workflow the last snapshot used: the runs are listed with it before the query (see takeSnapshot). */
  workerWorkflow: string | null;
  /** The branch prefix the last snapshot listed task branches with (the query lists them before the config is read). */
  branchPrefix: string | null;
  /**
   * GitHub's record of who pushed to a task branch, read by the stale-branch sweep, with the commit the branch
   * was at: while the branch stays at that commit nobody pushed to it since, so the record is not read again
   * (src/github/gateway.ts). Pruned to the branches that still exist.
   */
  branchActivity: Map<string, { oid: string; activity: BranchActivity }>;
  /**
   * Account id (databaseId) of the token's own identity (`viewer`): Autopilot's markers, tracking issue and
   * status labels count only when GitHub names this account as their author or actor.
   */
  appAccountId: number | null;
  /**
   * Login of the same identity (GraphQL `viewer.login`, `<app-slug>[bot]`): the login Autopilot's decisions
   * compare with (its own ready label, comments and reviews to leave out). Read from the token, not taken from
   * the caller's `botLogin`, which is only a hint for the first query and may be wrong (a misconfigured
   * `bot-login` input, or the hosted app's fallback when `GET /app` failed).
   */
  appLogin: string | null;
  /**
   * Label node ids by name, as snapshots and label writes have named them (a label's id never changes): a
   * state label no pool issue carries at the moment (every running task already in review) still moves in one
   * request.
   */
  labelIds: Map<string, string>;
}

/** How long a looked-up repository permission is trusted. */
export const PERMISSION_CACHE_MS = 5 * 60_000;

export function newRepoMemory(): RepoMemory {
  return {
    trackingIssue: null,
    trackingDuplicates: [],
    poolLabels: null,
    blockedByField: true,
    permissions: new Map(),
    workerWorkflow: null,
    branchPrefix: null,
    branchActivity: new Map(),
    appAccountId: null,
    appLogin: null,
    labelIds: new Map(),
  };
}

/**
 * Facts the executor needs that the pure core does not: every comment (bots included) and node ids. `S` is what
 * the caller's `settingsFor` returned (see SnapshotRequest).
 */
export interface SnapshotFacts<S extends SnapshotSettings = SnapshotSettings> {
  /** Every fetched comment, Autopilot's own included, for the comment-key idempotency check. */
  allComments: CommentNode[];
  issueNodeIds: Map<number, string>;
  /**
   * Node ids of labels by name (the repository memory's `labelIds`, with those the snapshot saw on pool issues
   * and pulls): with the issue's node id they let a state label move in one GraphQL request
   * (src/github/execution/executor.ts, `setLabels`), and the executor adds the ids its label writes learn.
   */
  labelIds?: Map<string, string>;
  trackingNodeId: string | null;
  /** The default branch's head commit when the snapshot was taken: what a dispatch lock ref points at. */
  defaultBranchSha: string | null;
  /** The repository's node id (GraphQL mutations on refs name the repository by it). */
  repositoryNodeId?: string | null;
  /** What `settingsFor` returned for the config file's text and the tracking issue: the settings read with. */
  settings: S;
  /**
   * GraphQL points: `cost` is the sum of every snapshot query page of this reconcile (their `rateLimit.cost`),
   * `remaining` and `resetAt` the last answer's. Null when no answer carried it.
   */
  rateLimit: { cost: number; remaining: number; resetAt: string } | null;
  /** The dashboard state the tracking issue's body holds (parsed once, here); null without one. */
  dashboardState?: DashboardState | null;
}

export interface SnapshotOutput<S extends SnapshotSettings = SnapshotSettings> {
  world: WorldSnapshot;
  facts: SnapshotFacts<S>;
}

export interface SnapshotContext {
  client: OctokitSurface;
  repo: RepoRef;
  /** The caller's idea of Autopilot's login: a hint until the snapshot query has named the token's identity. */
  botLogin: string;
  memory: RepoMemory;
  log: GatewayLog;
  /** Every GitHub call goes through this (the circuit breaker). */
  read: <T>(call: () => Promise<T>) => Promise<T>;
  now: () => number;
}

/** What the caller decides while the snapshot reads: the settings it reads with, the logins that matter. */
export interface SnapshotRequest<S extends SnapshotSettings = SnapshotSettings> {
  /**
   * Settings from the config file's text and the tracking issue's body (which may carry overrides and the last
   * good configuration, which the caller may have to read at its commit first). It may return more than the
   * settings — what it chose on the way (the configuration in force, the tracking issue's state) — and gets it
   * back, from its call with the file's text, as `facts.settings` and in `permissionsFor`. Called first with
   * nulls when the repository's memory cannot say which labels and workflow to read with.
   */
  settingsFor: (configText: string | null, trackingBody: string | null) => S | Promise<S>;
  /**
   * Logins whose repository permission the decisions need (default: every login that may matter, see
   * `relevantLogins`). Each is looked up once per snapshot.
   */
  permissionsFor?: (world: WorldSnapshot, settings: S) => string[];
}
