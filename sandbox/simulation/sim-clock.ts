/**
 * Simulated time: a queue of things to do at instants of a virtual clock. Nothing waits for the wall clock; the
 * loop jumps from one instant to the next, so four simulated hours take as long as the work done in them. Ties
 * run in the order they were scheduled, so a seed gives the same order every time.
 */
interface SimTask {
  at: number;
  seq: number;
  label: string;
  run: () => Promise<void> | void;
}

export class SimClock {
  private nowMs: number;
  private seq = 0;
  private readonly queue: SimTask[] = [];

  constructor(startMs: number) {
    this.nowMs = startMs;
  }

  now(): Date {
    return new Date(this.nowMs);
  }

  ms(): number {
    return this.nowMs;
  }

  /** Runs `run` `delayMs` from now (never in the past). */
  after(delayMs: number, label: string, run: SimTask["run"]): void {
    this.at(this.nowMs + Math.max(0, delayMs), label, run);
  }

  at(atMs: number, label: string, run: SimTask["run"]): void {
    const task: SimTask = { at: Math.max(atMs, this.nowMs), seq: this.seq++, label, run };
    // Binary search for the first task later than this one: the queue stays sorted by (at, seq).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const other = this.queue[mid]!;
      if (other.at < task.at || (other.at === task.at && other.seq < task.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, task);
  }

  /** The next task (the clock moves to its instant), or null when nothing is left before `untilMs`. */
  next(untilMs: number): SimTask | null {
    const task = this.queue[0];
    if (!task || task.at > untilMs) return null;
    this.queue.shift();
    this.nowMs = task.at;
    return task;
  }

  /** Whether anything but the periodic ticks (`label` starting with "tick") is still to come. */
  pendingWork(): boolean {
    return this.queue.some((t) => !t.label.startsWith("tick"));
  }

  /** Takes the first task due by `untilMs` that `accept` accepts (to run it now, between two requests). */
  takeWithin(untilMs: number, accept: (task: SimTask) => boolean): SimTask | null {
    const index = this.queue.findIndex((t) => t.at <= untilMs && accept(t));
    if (index < 0) return null;
    const [task] = this.queue.splice(index, 1);
    if (task!.at > this.nowMs) this.nowMs = task!.at;
    return task!;
  }
}
