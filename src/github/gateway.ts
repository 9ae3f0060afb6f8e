/**
 * The gateway: the only code that calls GitHub. One instance per reconcile (it holds that reconcile's
 * snapshot, request counts and operation limit); the circuit breaker and the per-repository memory outlive
 * it and are shared by every gateway in the process.
 *
 * - `snapshot()` observes the world (src/github/snapshot/snapshot.ts).
 * - `execute(effects)` acts: in order, idempotently, dry-run aware, within a per-run operation limit, with
 *   writes held back by an open circuit queued and replayed (before newer effects) once it closes; a write
 *   refused by a secondary rate limit pauses the repository's writes (src/github/transport/circuit.ts `pauseWrites`): it
 *   and every later write of the reconcile are queued the same way, without a request, and replayed by the
 *   first reconcile after the pause.
 * - `requests()` tells what the reconcile cost, per endpoint.
 */
import { readConfigAt } from "./snapshot/config-at-commit.js";
import { readPullDiffs } from "./pull-verification.js";
import { deleteRefsTogether, isRefDeletion } from "./execution/ref-deletions.js";
import { isLabelEffect, moveLabelsTogether } from "./execution/label-batch.js";
import { readBranchActivity } from "./snapshot/branch-activity.js";
import { MAX_DISCARDED_READS, readDiscardedBranches } from "./snapshot/discarded-branches.js";
import { discardedBranches } from "../core/reconcile/commands/rollback.js";
import { sweepCandidates } from "../core/reconcile/pulls/stale-branches.js";
import type { Effect } from "../core/effects.js";
import { describeEffect } from "../core/effects.js";
import type { WorldSnapshot } from "../core/world.js";
import { circuitFor, type GitHubCircuit, type QueuedWrite } from "./transport/circuit.js";
import {
  type GatewayLog,
  type OctokitSurface,
  type RepoRef,
  repoKey,
  silentLog,
} from "./transport/octokit-surface.js";
import { conditionalReadCache, sendReadsConditionally } from "./transport/conditional-reads.js";
import { forgetRepoMemories, memoryFor } from "./repo-memories.js";
import { countRequests, type RequestCounter, type RequestCounts } from "./transport/counter.js";
import {
  CircuitOpenError,
  classifyFailure,
  describeError,
  isCircuitOpen,
  isOutage,
  retryAfterOf,
} from "./transport/errors.js";
import { alreadyDone, effectTarget, executeEffect, isLimitExempt } from "./execution/executor.js";
import { labelBatchOf, recordLabels } from "./execution/label-effects.js";
import type { EffectOutcome, ExecContext } from "./execution/effect-context.js";
import {
  loginOf,
  type RepoMemory,
  type SnapshotFacts,
  type SnapshotOutput,
  type SnapshotRequest,
  type SnapshotSettings,
  takeSnapshot,
} from "./snapshot/snapshot.js";

const DEFAULT_OPERATION_LIMIT = 100;

export interface GatewayOptions {
  client: OctokitSurface;
  repo: RepoRef;
  /** Login of Autopilot's bot (`<app-slug>[bot]`, or `github-actions[bot]` inside Actions). */
  botLogin: string;
  log?: GatewayLog;
  /** Log every write as "would …" and skip it. */
  dryRun?: boolean;
  /** Most effects that write in one run; the rest wait for the next reconcile. */
  operationLimit?: number;
  /** The breaker for this GitHub host; default: the process-wide one for api.github.com. */
  circuit?: GitHubCircuit;
  /** What earlier reconciles of this repository learned; default: process-wide per repository (repo-memories.ts). */
  memory?: RepoMemory;
  /** Reads the revision in a tracking-issue body's state marker (src/core/dashboard/state-block.ts). */
  revisionOf?: (body: string) => number | null;
  now?: () => number;
}

interface ExecuteOptions {
  /** Workflow file of the worker (config `workerWorkflow`). */
  workerWorkflow?: string;
}

export interface ExecuteReport {
  outcomes: EffectOutcome[];
  /** Queued writes from earlier runs carried out (or re-queued) before this run's effects. */
  replayed: EffectOutcome[];
  /** A tracking-issue revision mismatch: the caller re-runs reconcile. */
  conflict: boolean;
  /** The tracking issue after execution (created in this run, or known before). */
  trackingIssue: number | null;
  /** Effects that wrote (or would have, in a dry run), against the budget. */
  operations: number;
}

/** Forgets every repository's memory and the conditional-read cache (tests, benchmarks). */
export function resetMemories(): void {
  forgetRepoMemories();
  conditionalReadCache().clear();
}

export class Gateway {
  readonly repo: RepoRef;
  readonly circuit: GitHubCircuit;
  readonly memory: RepoMemory;
  /** Settable after the snapshot: the config file may ask for a dry run. */
  dryRun: boolean;
  readonly operationLimit: number;
  private readonly client: OctokitSurface;
  private readonly log: GatewayLog;
  private readonly botLogin: string;
  private readonly counter: RequestCounter;
  private readonly countsAtStart: RequestCounts;
  private readonly revisionOf: (body: string) => number | null;
  private readonly now: () => number;
  private operationsUsed = 0;
  private last: SnapshotOutput | null = null;

  constructor(options: GatewayOptions) {
    this.client = options.client;
    this.repo = options.repo;
    this.botLogin = options.botLogin;
    this.log = options.log ?? silentLog;
    this.dryRun = options.dryRun ?? false;
    this.operationLimit = options.operationLimit ?? DEFAULT_OPERATION_LIMIT;
    this.circuit = options.circuit ?? circuitFor("https://api.github.com");
    this.memory = options.memory ?? memoryFor(options.repo);
    this.revisionOf = options.revisionOf ?? (() => null);
    this.now = options.now ?? Date.now;
    this.counter = countRequests(this.client);
    sendReadsConditionally(this.client);
    this.countsAtStart = this.counter.snapshot();
  }

  /** Requests made through this gateway's client since it was created, per endpoint. */
  requests(): RequestCounts {
    return this.counter.since(this.countsAtStart);
  }

  get lastSnapshot(): SnapshotOutput | null {
    return this.last;
  }

  /** A read through the breaker: fails fast with `CircuitOpenError` while it is open. */
  read = <T>(call: () => Promise<T>): Promise<T> => this.circuit.run(call);

  /** A write through the breaker (the executor queues it when the breaker refuses). */
  private write = <T>(call: () => Promise<T>): Promise<T> => this.circuit.run(call);

  /** `.github/autopilot.yml` at a commit (the last good configuration when the state kept only its commit). */
  configAt(commit: string): Promise<string | null> {
    return readConfigAt({ client: this.client, repo: this.repo, read: this.read }, commit);
  }

  async snapshot<S extends SnapshotSettings>(options: SnapshotRequest<S>): Promise<SnapshotOutput<S>> {
    const output = await takeSnapshot(
      {
        client: this.client,
        repo: this.repo,
        botLogin: this.botLogin,
        memory: this.memory,
        log: this.log,
        read: this.read,
        now: this.now,
      },
      options,
    );
    // What the controller verifies itself: the task PRs' diffs.
    const verify = { client: this.client, repo: this.repo, read: this.read };
    output.world.pullDiffs = await readPullDiffs(verify, output.world, {
      branchPrefix: output.facts.settings.branchPrefix,
      reviewLabel: output.facts.settings.reviewLabel ?? null,
      gateDigest: output.facts.settings.gateDigest,
    });
    // Who pushed to the ended tasks' branches, when the stale-branch sweep is on.
    const sweep = output.facts.settings.sweep;
    if (sweep) {
      const tasks = output.facts.dashboardState?.tasks ?? {};
      const branches = sweepCandidates(output.world, sweep, {
        since: (n) => tasks[n]?.since,
        nowMs: this.now(),
      });
      output.world.branchActivity = await readBranchActivity(
        verify,
        branches.map((branch) => ({ branch, oid: output.world.taskBranches?.[branch] ?? "" })),
        this.memory.branchActivity,
      );
    }
    // Whether the branches an unmerged task's rollback is deleting are gone yet (the task waits for it).
    const discarding = discardedBranches(output.world, output.facts.settings.branchPrefix);
    if (discarding.length > 0)
      output.world.branchExists = await readDiscardedBranches(
        verify,
        discarding.slice(0, MAX_DISCARDED_READS),
      );
    this.last = output;
    return output;
  }

  /**
   * Executes effects in order. Before them, writes queued while the breaker was open are replayed (when it is
   * closed again), except those a fresh effect on the same target supersedes.
   */
  async execute(effects: Effect[], options: ExecuteOptions = {}): Promise<ExecuteReport> {
    const world: WorldSnapshot | null = this.last?.world ?? null;
    const facts: SnapshotFacts | null = this.last?.facts ?? null;
    const ctx: ExecContext = {
      client: this.client,
      repo: this.repo,
      log: this.log,
      world,
      facts,
      botLogin: loginOf({ botLogin: this.botLogin, memory: this.memory }),
      workerWorkflow: options.workerWorkflow ?? facts?.settings.workerWorkflow ?? "autopilot-worker.yml",
      revisionOf: this.revisionOf,
      read: this.read,
      write: this.write,
      run: { trackingIssue: world?.trackingIssue?.number ?? null, commentKeys: new Set(), labels: new Map() },
      rememberTracking: (issue) => {
        this.memory.trackingIssue = issue;
      },
    };
    const report: ExecuteReport = {
      outcomes: [],
      replayed: [],
      conflict: false,
      trackingIssue: ctx.run.trackingIssue,
      operations: 0,
    };

    const key = repoKey(this.repo);
    if (
      !this.dryRun &&
      this.circuit.state === "closed" &&
      this.circuit.writePause(key, this.now()) === null &&
      this.circuit.queued(key).length > 0
    ) {
      const fresh = new Set(effects.map(effectTarget));
      const queued = this.circuit.takeQueued(key);
      this.log.info(
        `replaying ${queued.length} write(s) held back while GitHub was unavailable or rate-limited`,
      );
      for (let i = 0; i < queued.length; i++) {
        const item = queued[i]!;
        if (fresh.has(effectTarget(item.effect))) {
          report.replayed.push({
            effect: item.effect,
            status: "skipped",
            detail: "superseded by a newer decision",
          });
          continue;
        }
        // A merge was decided on the reviews and checks of its moment, and the head SHA it is pinned to does not
        // pin them: a changes request since must stop it. It is not replayed; the decision asks again while every
        // gate still holds (src/core/reconcile/pulls/reviews.ts repeats an unanswered merge request).
        if (item.effect.type === "mergePr") {
          report.replayed.push({
            effect: item.effect,
            status: "skipped",
            detail: "a merge is decided again on a fresh read, not replayed",
          });
          continue;
        }
        const outcome = await this.runOne(ctx, item.effect, item);
        report.replayed.push(outcome);
        if (outcome.status === "queued") {
          // The breaker opened again (or a secondary limit paused the writes): this write and the rest go back
          // to the front of the queue, in order.
          this.circuit.requeueFront(key, queued.slice(i));
          break;
        }
      }
    }

    let refsTogether: Map<Effect, EffectOutcome> | null = null;
    let labelsTogether: Map<Effect, EffectOutcome> | null = null;
    // Branches deleted in this batch (or that a dry run would delete): what `afterDeleting` waits for.
    const deleted = new Set<string>();
    for (let i = 0; i < effects.length; i++) {
      const effect = effects[i]!;
      const after = "afterDeleting" in effect ? effect.afterDeleting : undefined;
      if (after !== undefined && !deleted.has(after)) {
        report.outcomes.push({ effect, status: "skipped", detail: `${after} was not deleted` });
        continue;
      }
      // At the first ref deletion (label change), it and the later ones go in one request where they can.
      if (!refsTogether && isRefDeletion(effect))
        refsTogether = await this.deleteTogether(ctx, effects.slice(i));
      if (!labelsTogether && isLabelEffect(effect) && !alreadyDone(ctx, effect))
        labelsTogether = await this.labelTogether(ctx, effects.slice(i));
      const outcome =
        refsTogether?.get(effect) ?? labelsTogether?.get(effect) ?? (await this.runOne(ctx, effect, null));
      report.outcomes.push(outcome);
      if (effect.type === "deleteBranch" && (outcome.status === "done" || outcome.status === "dry-run"))
        deleted.add(effect.branch);
      // The state goes first so that nothing goes out that it does not record. A tracking-issue write held (a 5xx,
      // the breaker open, a secondary-limit pause) holds the rest of this reconcile's writes behind it, in order,
      // as a secondary-limit pause does: a write sent beside a lost state write (a label cleared while the take-out
      // was not recorded) was undone by the next reconcile working from the older state.
      if (effect.type === "writeTrackingIssue" && outcome.status === "queued") {
        const why = new Error(`held behind the tracking issue's write (${outcome.detail ?? "not taken"})`);
        for (const rest of effects.slice(i + 1)) report.outcomes.push(this.hold(rest, why, null));
        break;
      }
      if (outcome.status === "conflict") {
        report.conflict = true;
        for (const rest of effects.slice(i + 1)) {
          report.outcomes.push({
            effect: rest,
            status: "deferred",
            deferredBy: "revision-conflict",
            detail: "after a tracking-issue revision conflict",
          });
        }
        break;
      }
    }
    report.trackingIssue = ctx.run.trackingIssue;
    report.operations = this.operationsUsed;
    const deferred = report.outcomes.filter((x) => x.deferredBy === "operation-budget");
    if (deferred.length > 0) {
      this.log.warn(
        `operation limit of ${this.operationLimit} used up: ${deferred.length} effect(s) deferred to the next reconcile (${deferred
          .map((x) => describeEffect(x.effect))
          .join("; ")})`,
      );
    }
    return report;
  }

  private async runOne(
    ctx: ExecContext,
    effect: Effect,
    replaying: QueuedWrite | null,
  ): Promise<EffectOutcome> {
    const noop = alreadyDone(ctx, effect);
    if (noop) {
      if (effect.type === "writeTrackingIssue" && effect.issue !== null) ctx.run.trackingIssue = effect.issue;
      return { effect, status: "skipped", detail: noop };
    }
    if (this.dryRun) {
      this.log.info(`[dry run] would ${describeEffect(effect)}`);
      return { effect, status: "dry-run" };
    }
    if (!isLimitExempt(effect) && this.operationsUsed >= this.operationLimit) {
      return {
        effect,
        status: "deferred",
        deferredBy: "operation-budget",
        detail: `operation limit of ${this.operationLimit} used up`,
      };
    }
    if (this.circuit.state === "open") {
      return this.hold(
        effect,
        new CircuitOpenError(this.circuit.retryAt, this.circuit.lastFailureMessage),
        replaying,
      );
    }
    const key = repoKey(this.repo);
    const pause = this.circuit.writePause(key, this.now());
    if (pause) {
      return this.hold(
        effect,
        new Error(
          `writes to this repository pause for GitHub's secondary rate limit until ${new Date(pause.until).toISOString()} (${pause.reason})`,
        ),
        replaying,
      );
    }
    if (!isLimitExempt(effect)) this.operationsUsed++;
    try {
      const outcome = await executeEffect(ctx, effect);
      this.circuit.writeWentThrough(key, this.now());
      // A refused merge needs a person (or a change) to go on: it is a warning, not routine.
      const level = outcome.status === "not-mergeable" ? "warn" : "info";
      this.log[level](
        `${outcome.status === "done" ? "did" : outcome.status}: ${describeEffect(effect)}${outcome.detail ? ` (${outcome.detail})` : ""}`,
      );
      return outcome;
    } catch (error) {
      // GitHub: stop writing until retry-after has passed. The rest of this reconcile's writes are held too.
      if (this.pausedBy(error)) return this.hold(effect, error, replaying);
      if (isCircuitOpen(error) || isOutage(error)) return this.hold(effect, error, replaying);
      this.log.warn(`failed to ${describeEffect(effect)}: ${describeError(error)}`);
      return { effect, status: "failed", detail: describeError(error) };
    }
  }

  /**
   * The ref deletions among `effects` in one request (src/github/execution/ref-deletions.ts), under the same rules as
   * `runOne`: not in a dry run, within the operation limit (it counts as one operation), with the breaker
   * closed. Whatever it does not carry out goes through `runOne` as usual.
   */
  private async deleteTogether(ctx: ExecContext, effects: Effect[]): Promise<Map<Effect, EffectOutcome>> {
    const done = new Map<Effect, EffectOutcome>();
    if (!this.mayWriteTogether()) return done;
    const pending = effects.filter(isRefDeletion).filter((e) => !alreadyDone(ctx, e));
    let outcomes: EffectOutcome[] = [];
    try {
      outcomes = await deleteRefsTogether(ctx, pending);
    } catch (error) {
      this.refusedTogether(error, "delete refs");
    }
    if (outcomes.length > 0) this.wroteTogether();
    for (const outcome of outcomes) {
      this.log.info(`did: ${describeEffect(outcome.effect)} (${outcome.detail})`);
      done.set(outcome.effect, outcome);
    }
    return done;
  }

  /**
   * The label changes among `effects` in one request (src/github/execution/label-batch.ts), under the same rules as
   * `runOne` (it counts as one operation); the labels it wrote are recorded as `setLabels` records them.
   */
  private async labelTogether(ctx: ExecContext, effects: Effect[]): Promise<Map<Effect, EffectOutcome>> {
    const done = new Map<Effect, EffectOutcome>();
    if (!this.mayWriteTogether()) return done;
    const pending = effects.filter(isLabelEffect).filter((e) => !alreadyDone(ctx, e));
    let moved: Awaited<ReturnType<typeof moveLabelsTogether>> = [];
    try {
      moved = await moveLabelsTogether(labelBatchOf(ctx), pending);
    } catch (error) {
      this.refusedTogether(error, "change labels");
    }
    if (moved.length > 0) this.wroteTogether();
    for (const { effect, add, remove } of moved) {
      recordLabels(ctx, effect.issue, add, remove);
      const outcome: EffectOutcome = {
        effect,
        status: "done",
        detail: `with ${moved.length - 1} other label change(s) in one request`,
      };
      this.log.info(`did: ${describeEffect(effect)} (${outcome.detail})`);
      done.set(effect, outcome);
    }
    return done;
  }

  /** Whether effects may go together now: what `runOne` asks before any write (each is then asked again). */
  private mayWriteTogether(): boolean {
    if (this.dryRun || this.circuit.state === "open" || this.operationsUsed >= this.operationLimit)
      return false;
    return !this.circuit.writePause(repoKey(this.repo), this.now());
  }

  private wroteTogether(): void {
    this.operationsUsed++;
    this.circuit.writeWentThrough(repoKey(this.repo), this.now());
  }

  /**
   * A request for several effects failed: they go one by one through `runOne`, except after a secondary rate
   * limit, which pauses the repository's writes here as in `runOne` (so they are held, not sent again at once).
   */
  private refusedTogether(error: unknown, what: string): void {
    if (this.pausedBy(error)) return;
    this.log.info(`could not ${what} in one request (${describeError(error)}); one by one instead`);
  }

  /** A secondary rate limit pauses the repository's writes (src/github/transport/circuit.ts `pauseWrites`): true then. */
  private pausedBy(error: unknown): boolean {
    if (classifyFailure(error) !== "secondary-rate-limit") return false;
    const key = repoKey(this.repo);
    const paused = this.circuit.pauseWrites(key, retryAfterOf(error), describeError(error), this.now());
    this.log.warn(
      `GitHub's secondary rate limit: writes to ${key} pause until ${new Date(paused.until).toISOString()} (refusal ${paused.strikes} in a row)`,
    );
    return true;
  }

  private hold(effect: Effect, error: unknown, replaying: QueuedWrite | null): EffectOutcome {
    const reason = describeError(error);
    // A replayed write is put back by the caller together with the rest, keeping the original order.
    if (!replaying) this.circuit.enqueue(repoKey(this.repo), effect, reason, effectTarget(effect));
    this.log.warn(`queued until GitHub takes writes again: ${describeEffect(effect)} (${reason})`);
    return { effect, status: "queued", detail: reason };
  }
}

export function createGateway(options: GatewayOptions): Gateway {
  return new Gateway(options);
}
