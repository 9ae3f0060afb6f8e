/**
 * The simulation's randomness: one seeded stream per world. It draws from the sandbox's own seeded PRNG (the
 * mulberry32 of sandbox/emulator/server/faults.ts, which the injected faults already use), so a seed names one
 * world and one run of it; no second PRNG library is added for the same job.
 */
import { seededRandom } from "../emulator/server/faults.js";

export class SimRandom {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    if (!items.length) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A sub-seed for a part of the world that must not shift when another part draws more or less. */
  fork(): SimRandom {
    return new SimRandom(Math.floor(this.next() * 0x7fffffff));
  }
}
