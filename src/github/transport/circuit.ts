/**
 * The circuit breaker in front of GitHub (docs/CONTROLLER.md, "When GitHub is unavailable": 3 consecutive
 * failures open it, a trial call is allowed 60 s later, 2 successes close it again) plus the queue of writes it
 * held back.
 *
 * Built on cockatiel's `CircuitBreakerPolicy`. Cockatiel closes the circuit after ONE successful half-open
 * trial; Autopilot wants two, so one lucky call does not replay every queued write into a flapping GitHub.
 * The difference is composed with cockatiel's own `IBreaker` extension point:
 * `ProbationBreaker` is told about every success and failure together with cockatiel's state, so after the
 * trial succeeds (cockatiel: closed) it keeps the circuit on probation until `successThreshold - 1` further
 * successes, and asks cockatiel to re-open on the first failure during probation. To the outside a circuit on
 * probation reports "half-open"; it only reports "closed" (and replays queued writes) after both successes.
 *
 * Only outages count (5xx, network errors, rate limits: see `isOutage`); every other answer from GitHub — a
 * 404, a 422 — is GitHub working and counts as a success.
 *
 * A controller job inside Actions is a new process each time: it would start every circuit closed, three outages
 * from opening, however recently the last job saw GitHub fail. So the last opening is kept in the tracking issue's
 * state (`circuit`, written by the reconcile that follows it), and a job that reads an opening less than
 * `RECENT_OPENING_MS` old starts on probation (`recallOpening`): its first outage opens the circuit at once, and
 * it is closed only after `successThreshold` successes (design document 003's persisted breaker states).
 *
 * One circuit per GitHub host, shared by every gateway in the process; the write queue is kept per repository,
 * in memory and in order (a controller run inside Actions ends with it, and the next reconcile re-derives the
 * same effects from the world: level-triggered).
 *
 * Beside the breaker, a per-repository PAUSE of writes for GitHub's secondary rate limit (the content-creation
 * limit among them): a write it refuses pauses that repository's writes until `retry-after` has passed (60 s
 * without one, doubled for each refusal in a row, at most 5 minutes unless GitHub asks for more:
 * `secondaryLimitWait` in octokit.ts). While paused, the gateway sends no write to that repository and holds
 * them in the same queue; reads, and other repositories, go on. The first write after the pause is the trial:
 * a success ends the run of refusals.
 *
 * Bounded without dropping anything that matters: a repository's queue is removed when it is taken (replayed),
 * so the queues hold only repositories with writes waiting, none of which may be lost; a pause that ended over
 * an hour ago with nothing held is forgotten when a new pause is noted (its run of refusals ends as a write
 * getting through would end it), and a pause in force, or one holding writes, never is.
 */
import { type CircuitBreakerPolicy, CircuitState, circuitBreaker, handleAll, type IBreaker } from "cockatiel";
import type { Effect } from "../../core/effects.js";
import { CircuitOpenError, describeError, isOutage } from "./errors.js";
import { SECONDARY_LIMIT_DEFAULT_WAIT_SECONDS, secondaryLimitWait } from "./octokit.js";

type CircuitStateName = "closed" | "open" | "half-open";

interface CircuitOptions {
  /** Consecutive outages that open the circuit. */
  failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through. */
  resetMs?: number;
  /** Successes in the half-open state needed to close the circuit again. */
  successThreshold?: number;
}

const GITHUB_CIRCUIT_DEFAULTS: Required<CircuitOptions> = Object.freeze({
  failureThreshold: 3,
  resetMs: 60_000,
  successThreshold: 2,
});

export interface QueuedWrite {
  effect: Effect;
  /** What the write acts on; a newer write on the same target replaces an older queued one. */
  target: string;
  queuedAt: number;
  reason: string;
}

/** A repository's writes held back for a secondary rate limit. */
interface WritePause {
  /** When the first refusal of this run of refusals came (epoch ms). */
  since: number;
  /** When writes may go out again (epoch ms). */
  until: number;
  /** GitHub's refusal, as logged. */
  reason: string;
  /** Refusals in a row without a write getting through (1 for the first). */
  strikes: number;
}

/**
 * How recent a persisted opening must be for a new process to start on probation: a controller job in Actions
 * follows the last one within minutes while there is work (the wake variable's schedule), and an outage GitHub
 * had a quarter of an hour ago is still likely to flap.
 */
const RECENT_OPENING_MS = 15 * 60_000;

/** How long after its end a pause with nothing held is still remembered (for its run of refusals). */
const ENDED_PAUSE_KEPT_MS = 60 * 60_000;

interface ProbationState {
  failures: number;
  probation: number;
}

/** Consecutive-failure breaker with a probation period after the half-open trial (see the file comment). */
class ProbationBreaker implements IBreaker {
  state: ProbationState = { failures: 0, probation: 0 };

  constructor(
    private readonly failureThreshold: number,
    private readonly successThreshold: number,
  ) {}

  get onProbation(): boolean {
    return this.state.probation > 0;
  }

  success(circuit: CircuitState): void {
    if (circuit === CircuitState.HalfOpen) {
      this.state = { failures: 0, probation: Math.max(0, this.successThreshold - 1) };
      return;
    }
    this.state = { failures: 0, probation: Math.max(0, this.state.probation - 1) };
  }

  failure(circuit: CircuitState): boolean {
    if (circuit === CircuitState.HalfOpen || this.state.probation > 0) {
      this.state = { failures: 0, probation: 0 };
      return true;
    }
    const failures = this.state.failures + 1;
    if (failures >= this.failureThreshold) {
      this.state = { failures: 0, probation: 0 };
      return true;
    }
    this.state = { failures, probation: 0 };
    return false;
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export class GitHubCircuit {
  readonly options: Required<CircuitOptions>;
  private readonly breaker: ProbationBreaker;
  private readonly policy: CircuitBreakerPolicy;
  private openedAt: number | null = null;
  private lastFailure: string | null = null;
  private readonly queues = new Map<string, QueuedWrite[]>();
  private readonly pauses = new Map<string, WritePause>();
  private readonly listeners = new Set<(state: CircuitStateName) => void>();
  private reported: CircuitStateName = "closed";

  constructor(options: CircuitOptions = {}) {
    this.options = { ...GITHUB_CIRCUIT_DEFAULTS, ...options };
    this.breaker = new ProbationBreaker(this.options.failureThreshold, this.options.successThreshold);
    this.policy = circuitBreaker(handleAll, { halfOpenAfter: this.options.resetMs, breaker: this.breaker });
    this.policy.onBreak(() => {
      this.openedAt = Date.now();
    });
  }

  /** closed / open / half-open (a trial is due or running, or the circuit is on probation). */
  get state(): CircuitStateName {
    switch (this.policy.state) {
      case CircuitState.Closed:
        return this.breaker.onProbation ? "half-open" : "closed";
      case CircuitState.HalfOpen:
        return "half-open";
      default:
        return this.openedAt !== null && Date.now() - this.openedAt >= this.options.resetMs
          ? "half-open"
          : "open";
    }
  }

  /** When an open circuit lets the next trial call through; null unless open. */
  get retryAt(): Date | null {
    if (this.policy.state !== CircuitState.Open || this.openedAt === null) return null;
    return new Date(this.openedAt + this.options.resetMs);
  }

  get lastFailureMessage(): string | null {
    return this.lastFailure;
  }

  /** When this process saw the circuit open last, and on what failure; null if it never opened here. */
  get lastOpening(): { at: number; failure: string | null } | null {
    return this.openedAt === null ? null : { at: this.openedAt, failure: this.lastFailure };
  }

  /**
   * A persisted opening (the tracking issue's state) from before this process: less than `RECENT_OPENING_MS`
   * ago, and with no opening seen here, the circuit goes on probation — its next failure opens it, and
   * `successThreshold` successes close it. Returns whether it did.
   */
  recallOpening(opening: { at: number; failure: string | null }, now = Date.now()): boolean {
    if (this.openedAt !== null || this.breaker.onProbation) return false;
    if (!(now - opening.at >= 0 && now - opening.at < RECENT_OPENING_MS)) return false;
    this.breaker.state = { failures: 0, probation: this.options.successThreshold };
    this.lastFailure ??= opening.failure;
    this.notify();
    return true;
  }

  /** Called with the new reported state whenever it changes (after a call). */
  onStateChange(listener: (state: CircuitStateName) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs one call through the breaker. Throws `CircuitOpenError` without calling while open; otherwise returns
   * or rethrows the call's own result. Non-outage errors pass through without counting as failures.
   */
  async run<T>(call: () => Promise<T>): Promise<T> {
    let outcome: Outcome<T>;
    try {
      outcome = await this.policy.execute(async () => {
        try {
          return { ok: true, value: await call() } as Outcome<T>;
        } catch (error) {
          if (isOutage(error)) {
            this.lastFailure = describeError(error);
            throw error;
          }
          return { ok: false, error } as Outcome<T>;
        }
      });
    } catch (error) {
      this.notify();
      if (isBrokenCircuit(error)) throw new CircuitOpenError(this.retryAt, this.lastFailure);
      throw error;
    }
    this.notify();
    if (outcome.ok) return outcome.value;
    throw outcome.error;
  }

  /** Holds a write back until the circuit closes. */
  enqueue(repo: string, effect: Effect, reason: string, target: string): void {
    const queue = (this.queues.get(repo) ?? []).filter((q) => q.target !== target);
    queue.push({ effect, target, queuedAt: Date.now(), reason });
    this.queues.set(repo, queue);
  }

  queued(repo: string): readonly QueuedWrite[] {
    return this.queues.get(repo) ?? [];
  }

  /** Removes and returns a repository's queued writes, oldest first. */
  takeQueued(repo: string): QueuedWrite[] {
    const queue = this.queues.get(repo) ?? [];
    this.queues.delete(repo);
    return queue;
  }

  /** Puts writes back at the front (a replay interrupted by the circuit opening again). */
  requeueFront(repo: string, writes: QueuedWrite[]): void {
    if (writes.length === 0) return;
    this.queues.set(repo, [...writes, ...(this.queues.get(repo) ?? [])]);
  }

  /**
   * Pauses a repository's writes after GitHub refused one with a secondary rate limit: until `retryAfterSeconds`
   * (GitHub's `retry-after`; null: none given, a minute) has passed, longer for each refusal in a row.
   */
  pauseWrites(repo: string, retryAfterSeconds: number | null, reason: string, now = Date.now()): WritePause {
    this.forgetEndedPauses(now);
    const known = this.pauses.get(repo);
    const strikes = (known?.strikes ?? 0) + 1;
    const wait = secondaryLimitWait(retryAfterSeconds ?? SECONDARY_LIMIT_DEFAULT_WAIT_SECONDS, strikes - 1);
    const pause: WritePause = {
      since: known?.since ?? now,
      until: Math.max(known?.until ?? 0, now + wait * 1000),
      reason,
      strikes,
    };
    this.pauses.set(repo, pause);
    return pause;
  }

  /** Drops the pauses that ended over `ENDED_PAUSE_KEPT_MS` ago and hold no writes. */
  private forgetEndedPauses(now: number): void {
    for (const [repo, pause] of this.pauses) {
      if (now - pause.until > ENDED_PAUSE_KEPT_MS && this.queued(repo).length === 0) this.pauses.delete(repo);
    }
  }

  /** Repositories whose pause is remembered (in force, ended recently, or holding writes). */
  pausedRepos(): string[] {
    return [...this.pauses.keys()];
  }

  /** The repository's pause while it lasts; null when its writes may go out. */
  writePause(repo: string, now = Date.now()): WritePause | null {
    const pause = this.pauses.get(repo);
    return pause && now < pause.until ? pause : null;
  }

  /** The latest pause of a repository, over or not (the dashboard says a minute after it ends); null if none. */
  lastWritePause(repo: string): WritePause | null {
    return this.pauses.get(repo) ?? null;
  }

  /** A write to the repository went through: the run of refusals is over. */
  writeWentThrough(repo: string, now = Date.now()): void {
    const pause = this.pauses.get(repo);
    if (pause && now >= pause.until) this.pauses.delete(repo);
  }

  /** Repositories with writes waiting. */
  reposWithQueuedWrites(): string[] {
    return [...this.queues.entries()].filter(([, q]) => q.length > 0).map(([repo]) => repo);
  }

  private notify(): void {
    const state = this.state;
    if (state === this.reported) return;
    this.reported = state;
    for (const listener of this.listeners) listener(state);
  }
}

function isBrokenCircuit(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    ((error as { name?: unknown }).name === "BrokenCircuitError" ||
      (error as { isBrokenCircuitError?: unknown }).isBrokenCircuitError === true)
  );
}

const circuits = new Map<string, GitHubCircuit>();

/** The process-wide circuit for a GitHub host (keyed by API base URL). */
export function circuitFor(baseUrl: string, options?: CircuitOptions): GitHubCircuit {
  const key = baseUrl.replace(/\/+$/, "").toLowerCase();
  let circuit = circuits.get(key);
  if (!circuit) {
    circuit = new GitHubCircuit(options);
    circuits.set(key, circuit);
  }
  return circuit;
}

/** Forgets every process-wide circuit (tests). */
export function resetCircuits(): void {
  circuits.clear();
}
