/**
 * One reconcile at a time per repository, in this process. Events that arrive while a reconcile runs are
 * coalesced into ONE follow-up run (reconcile is level-triggered: the follow-up sees everything they saw), so
 * a burst of webhooks — many caused by Autopilot's own writes — costs two reconciles, not one per event.
 * Two controllers in different processes are kept apart by the tracking issue's revision check instead.
 * Every map here holds a repository only while a run of it is running or waiting, so an App serving a whole
 * organization keeps nothing (no task, and no client a task holds) for the repositories it is not reconciling.
 */
export class RepoScheduler {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Map<string, Promise<void>>();
  /** The task a waiting run will run (the latest requested); taken when the run starts. */
  private readonly tasks = new Map<string, () => Promise<void>>();
  private closed = false;

  /**
   * Runs nothing new from now on: later requests resolve at once and a follow-up that has not started is
   * dropped (a stopping controller's next reconcile — any controller's — sees the same world). A run in
   * progress finishes; `idle()` waits for it.
   */
  close(): void {
    this.closed = true;
  }

  /**
   * Runs `task` for `key` now, or once after the current run when one is in progress (the latest task wins).
   * The promise settles when a run that started after this call has finished; it never rejects (the task
   * handles its own errors).
   */
  request(key: string, task: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.tasks.set(key, task);
    const pending = this.again.get(key);
    if (pending) return pending;
    const current = this.running.get(key);
    if (!current) return this.start(key);
    const next = current.then(() => {
      this.again.delete(key);
      return this.closed ? undefined : this.start(key);
    });
    this.again.set(key, next);
    return next;
  }

  /** Repositories with a run running or waiting. */
  get busy(): number {
    return new Set([...this.running.keys(), ...this.again.keys(), ...this.tasks.keys()]).size;
  }

  /** Resolves when nothing is running or waiting. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.again.size > 0) {
      await Promise.all([...this.running.values(), ...this.again.values()]);
    }
  }

  private start(key: string): Promise<void> {
    const task = this.tasks.get(key)!;
    this.tasks.delete(key);
    const run: Promise<void> = Promise.resolve()
      .then(task)
      .catch(() => {
        // The task logs its own failures; a failed run must not block the next one.
      })
      .finally(() => {
        if (this.running.get(key) === run) this.running.delete(key);
      });
    this.running.set(key, run);
    return run;
  }
}

/** A plain mutex per key: callers run one after another, in arrival order. */
export async function withLock<T>(
  locks: Map<string, Promise<unknown>>,
  key: string,
  fn: () => Promise<T>,
): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const chained = previous.catch(() => undefined).then(() => gate);
  locks.set(key, chained);
  await previous.catch(() => undefined);
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(key) === chained) locks.delete(key);
  }
}
