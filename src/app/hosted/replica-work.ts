/**
 * The hosted app's work shared by several replicas through Redis, with BullMQ as the engine (docs/INSTALL.md,
 * "Several replicas", says why this one). One replica alone keeps its work in process (scheduler.ts); with
 * `AUTOPILOT_REDIS_URL` every replica puts its reconciles on one queue instead:
 *
 * - **One reconcile at a time per repository, across replicas.** A repository's reconcile is one job whose id is
 *   the repository: while it waits, asking again adds nothing (the waiting job will see what the new event saw);
 *   while it runs, asking again leaves a mark, and the replica that ran it queues the repository once more when
 *   it ends (reconcile is level-triggered: one follow-up covers every event that came during the run).
 * - **Whichever replica received a delivery, any replica may do the work**: a job carries the repository and
 *   its installation, and the replica that takes it authenticates as that installation itself.
 * - **A replica that dies hands its work over.** A running job holds a lock the replica renews; when it stops
 *   renewing (killed, cut off), another replica's stalled-job check puts the job back within `lockMs` plus
 *   `stalledCheckMs`, and someone runs it again from the start (a reconcile cut off half-way is safe to run
 *   again: it decides from what it reads, and the tracking issue's revision check keeps two writers apart).
 * - **One tick for all.** The periodic tick is a job scheduler on its own queue: each interval one replica
 *   runs it, and it only queues the repositories it chose.
 * - **What ticks choose by is shared**: each repository's last activity and each installation's rate reading
 *   (activity-book.ts, installation-rate-limits.ts) are kept in Redis beside the queue, so whichever replica runs
 *   the tick chooses from what every replica learned.
 */
import { type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { RateReading } from "../../github/transport/rate-headers.js";
import { type GatewayLog, repoKey } from "../../github/transport/octokit-surface.js";
import type { BookEntry } from "./activity-book.js";
import { ReplicaStopping } from "./replica-stopping.js";

/** One repository's reconcile, as a job carries it from the replica that asked to the one that runs it. */
export interface RepoWork {
  owner: string;
  name: string;
  installationId: number;
  /** Why it was asked (the event's name, "tick", …): logged by the replica that runs it. */
  reason: string;
  /**
   * A tick's: when the tick read what it chose by (epoch ms). If a replica reconciled the repository since, and
   * no delivery asked since, the job is covered and skipped (the tick chose from a standing that was stale).
   */
  decidedAt?: number;
}

interface ReplicaWorkOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** Namespace of every key, so several Autopilot apps (or test runs) share one Redis (default "autopilot"). */
  prefix?: string;
  /** Reconciles this replica runs at once (default 8). */
  concurrency?: number;
  /** How long a running job's lock lasts without renewal: a dead replica's job is free again after it (30 s). */
  lockMs?: number;
  /** How often each replica looks for jobs whose lock expired (30 s). */
  stalledCheckMs?: number;
  /** Milliseconds between ticks; 0: no periodic tick. */
  tickMs?: number;
  log: GatewayLog;
}

interface Handlers {
  /** Runs one repository's reconcile on this replica. */
  reconcile: (work: RepoWork) => Promise<void>;
  /** Runs the tick (on the one replica that took this interval's tick job). */
  tick: () => Promise<void>;
}

const RECONCILE_QUEUE = "reconcile";
const TICK_QUEUE = "tick";
const TICK_SCHEDULER = "tick";
/** A job stalled this many times is given up (a repository whose reconcile kills its replica each time). */
const MAX_STALLS = 5;
/** Rate readings kept in Redis expire: an hour's window is over by then. */
const READING_TTL_S = 2 * 3600;

/** The job id of a repository's reconcile (BullMQ refuses ids with ':' or only digits; GitHub names have neither ':' nor '/'). */
function jobIdOf(work: Pick<RepoWork, "owner" | "name">): string {
  return `repo/${work.owner.toLowerCase()}/${work.name.toLowerCase()}`;
}

export class ReplicaWork {
  private readonly prefix: string;
  private readonly redis: Redis;
  private readonly queue: Queue<RepoWork>;
  private readonly tickQueue: Queue;
  private worker: Worker<RepoWork> | null = null;
  private tickWorker: Worker | null = null;
  /** Follow-ups this replica is queueing (idle() waits for them). */
  private readonly followUps = new Set<Promise<void>>();
  /** When this replica last saved each installation's reading of each resource. */
  private readonly savedReadings = new Map<string, number>();

  constructor(private readonly options: ReplicaWorkOptions) {
    this.prefix = options.prefix ?? "autopilot";
    this.redis = new Redis(options.url, { maxRetriesPerRequest: 1 });
    this.redis.on("error", (error: Error) => options.log.warn(`redis: ${error.message}`));
    this.queue = new Queue<RepoWork>(RECONCILE_QUEUE, { connection: this.connection(), prefix: this.prefix });
    this.tickQueue = new Queue(TICK_QUEUE, { connection: this.connection(), prefix: this.prefix });
    for (const q of [this.queue, this.tickQueue])
      q.on("error", (error) => options.log.warn(`shared queue: ${error.message}`));
  }

  /** Starts taking jobs: reconciles with `handlers.reconcile`, this replica's share of ticks with `handlers.tick`. */
  async start(handlers: Handlers): Promise<void> {
    const { log } = this.options;
    const lockDuration = this.options.lockMs ?? 30_000;
    const stalledInterval = this.options.stalledCheckMs ?? 30_000;
    this.worker = new Worker<RepoWork>(
      RECONCILE_QUEUE,
      async (job: Job<RepoWork>) => {
        // Taken before the reconcile reads anything: a mark left after this is a change it may not have seen.
        const marked = await this.redis.getdel(this.dirtyKey(job.data));
        if (marked === null && (await this.coveredSince(job.data))) {
          log.debug(`shared queue: ${jobIdOf(job.data)} was reconciled since the tick chose it; skipped`);
          return;
        }
        try {
          await handlers.reconcile(job.data);
        } catch (error) {
          // Not run here: marked again, so the follow-up queues it for another replica.
          if (error instanceof ReplicaStopping) await this.redis.set(this.dirtyKey(job.data), "1");
          throw error;
        }
      },
      {
        connection: this.connection(true),
        prefix: this.prefix,
        concurrency: this.options.concurrency ?? 8,
        lockDuration,
        stalledInterval,
        maxStalledCount: MAX_STALLS,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      },
    );
    const after = (job: Job<RepoWork> | undefined) => {
      if (job) this.followUp(job.data);
    };
    this.worker.on("completed", after);
    this.worker.on("failed", (job, error) => {
      if (!(error instanceof ReplicaStopping))
        log.warn(
          `shared queue: reconcile of ${job ? jobIdOf(job.data) : "a repository"} failed: ${error.message}`,
        );
      after(job);
    });
    this.worker.on("stalled", (id) =>
      log.warn(`shared queue: ${id} stalled (its replica stopped); it runs again`),
    );
    this.worker.on("error", (error) => log.warn(`shared queue: ${error.message}`));

    const tickMs = this.options.tickMs ?? 0;
    if (tickMs > 0) {
      await this.tickQueue.upsertJobScheduler(TICK_SCHEDULER, { every: tickMs }, { name: "tick" });
      this.tickWorker = new Worker(TICK_QUEUE, () => handlers.tick(), {
        connection: this.connection(true),
        prefix: this.prefix,
        concurrency: 1,
        lockDuration,
        stalledInterval,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      });
      this.tickWorker.on("error", (error) => log.warn(`shared tick: ${error.message}`));
    } else {
      await this.tickQueue.removeJobScheduler(TICK_SCHEDULER);
    }
  }

  /**
   * Asks for a reconcile of the repository by whichever replica is free; resolves once it is queued or marked.
   * A replica that is stopping still queues what it receives: the others run it. `event` false (a tick, a pause
   * that ended) asks for no follow-up of a reconcile already running: it carries no change that reconcile may
   * have read too early, and the next tick comes anyway.
   */
  async request(work: RepoWork, { event = true }: { event?: boolean } = {}): Promise<void> {
    if (event) await this.redis.set(this.dirtyKey(work), "1");
    await this.queue.add("reconcile", work, {
      jobId: jobIdOf(work),
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  /** Resolves when the shared queue has nothing waiting or running and this replica queues no follow-up. */
  async idle(pollMs = 100): Promise<void> {
    for (;;) {
      await Promise.all([...this.followUps]);
      const counts = await this.queue.getJobCounts("waiting", "active", "delayed", "prioritized");
      if (Object.values(counts).every((n) => n === 0) && this.followUps.size === 0) return;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** Each repository's standing as replicas recorded it (activity-book.ts), for the keys asked. */
  async standings(keys: readonly string[]): Promise<Map<string, BookEntry>> {
    const out = new Map<string, BookEntry>();
    if (keys.length === 0) return out;
    const values = await this.redis.hmget(this.key("standings"), ...keys);
    keys.forEach((key, i) => {
      const value = values[i];
      if (!value) return;
      try {
        out.set(key, JSON.parse(value) as BookEntry);
      } catch {
        // A value another version wrote: unknown, as if never reconciled.
      }
    });
    return out;
  }

  /** Records a repository's standing for every replica (null: forgotten). */
  saveStanding(key: string, entry: BookEntry | null): void {
    const write =
      entry === null
        ? this.redis.hdel(this.key("standings"), key)
        : this.redis.hset(this.key("standings"), key, JSON.stringify(entry));
    write.catch((error: Error) => this.options.log.warn(`shared standings: ${error.message}`));
  }

  /**
   * Records GitHub's latest rate reading of an installation for every replica: at most one write a second per
   * installation and resource (every answer carries one; the tick needs the latest, not each).
   */
  saveReading(installationId: number, reading: RateReading): void {
    const field = `${installationId}:${reading.resource}`;
    const now = Date.now();
    if (now - (this.savedReadings.get(field) ?? 0) < 1_000) return;
    this.savedReadings.set(field, now);
    const key = this.key(`rate:${installationId}`);
    this.redis
      .multi()
      .hset(key, reading.resource, JSON.stringify(reading))
      .expire(key, READING_TTL_S)
      .exec()
      .catch((error: Error) => this.options.log.warn(`shared rate readings: ${error.message}`));
  }

  /** The rate readings replicas recorded for an installation, one per resource. */
  async readings(installationId: number): Promise<RateReading[]> {
    const values = await this.redis.hvals(this.key(`rate:${installationId}`));
    return values.flatMap((v) => {
      try {
        return [JSON.parse(v) as RateReading];
      } catch {
        return [];
      }
    });
  }

  /**
   * Stops taking jobs and waits for the ones this replica runs to end; queued work stays for the others (and
   * the tick's scheduler too: it is the replicas', not this one's).
   */
  async close(): Promise<void> {
    await Promise.all([this.worker?.close(), this.tickWorker?.close()]);
    await Promise.all([...this.followUps]);
    await Promise.all([this.queue.close(), this.tickQueue.close()]);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Whether a tick's job is covered: the repository's shared standing says it was reconciled since the tick chose. */
  private async coveredSince(work: RepoWork): Promise<boolean> {
    if (work.decidedAt === undefined) return false;
    const key = repoKey({ owner: work.owner, name: work.name });
    const standing = (await this.standings([key])).get(key);
    return (standing?.lastReconciledAt ?? Number.NEGATIVE_INFINITY) >= work.decidedAt;
  }

  private followUp(work: RepoWork): void {
    const done: Promise<void> = (async () => {
      try {
        if (await this.redis.get(this.dirtyKey(work))) await this.request(work);
      } catch (error) {
        // The mark stays: the repository's next event or tick queues it.
        this.options.log.warn(`shared queue: follow-up of ${jobIdOf(work)}: ${(error as Error).message}`);
      }
    })().finally(() => this.followUps.delete(done));
    this.followUps.add(done);
  }

  private dirtyKey(work: Pick<RepoWork, "owner" | "name">): string {
    return this.key(`dirty:${jobIdOf(work)}`);
  }

  private key(name: string): string {
    return `${this.prefix}:autopilot:${name}`;
  }

  /**
   * How BullMQ connects: it opens and closes its own connections (one it was handed and that is closed under it
   * while it still waits for Redis makes it report that end with no listener left: an unhandled rejection).
   * Workers block on Redis and need requests that never give up (`blocking`; BullMQ sets that itself); every
   * other request gives up after one reconnection, so a delivery Redis cannot take is run by the replica that
   * received it (app.ts `schedule`) instead of waiting for Redis forever.
   */
  private connection(blocking = false): { url: string; maxRetriesPerRequest: number | null } {
    return { url: this.options.url, maxRetriesPerRequest: blocking ? null : 1 };
  }
}
