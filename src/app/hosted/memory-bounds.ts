/**
 * How much a long-lived controller (`autopilot serve`) keeps between reconciles, and where each bound comes
 * from: every cache that grows with the repositories a process has seen is bounded here, least recently used
 * out first, and what it drops costs a read, never a decision (docs/ARCHITECTURE.md, "Bounded memory").
 *
 * - `repositories`: each repository's memory of earlier reconciles (src/github/repo-memories.ts);
 * - `graphs`: each repository's latest task graph, reused by the next build (src/core/tasks/graph.ts);
 * - `readCacheEntries`, `readCacheMb`: the conditional-read cache of ETags and answers
 *   (src/github/transport/conditional-reads.ts), by count and by approximate size.
 *
 * Held writes, write pauses and per-repository locks are not caches: they are kept until drained or released
 * (src/github/transport/circuit.ts, src/app/scheduler.ts).
 */
import { DEFAULT_KEPT_GRAPHS, keepGraphsBetweenBuilds } from "../../core/tasks/graph.js";
import { boundRepoMemories, DEFAULT_REPO_MEMORIES } from "../../github/repo-memories.js";
import { conditionalReadCache, DEFAULT_READ_CACHE_BOUNDS } from "../../github/transport/conditional-reads.js";

export interface MemoryBounds {
  /** Repositories whose memory of earlier reconciles is kept. */
  repositories: number;
  /** Repositories whose latest task graph is kept. */
  graphs: number;
  /** Answers the conditional-read cache keeps. */
  readCacheEntries: number;
  /** Megabytes (MiB) of answers it keeps, approximately. */
  readCacheMb: number;
}

export const DEFAULT_MEMORY_BOUNDS: Readonly<MemoryBounds> = Object.freeze({
  repositories: DEFAULT_REPO_MEMORIES,
  graphs: DEFAULT_KEPT_GRAPHS,
  readCacheEntries: DEFAULT_READ_CACHE_BOUNDS.entries,
  readCacheMb: DEFAULT_READ_CACHE_BOUNDS.bytes / (1024 * 1024),
});

/** The environment variable of each bound (docs/CONTROLLER.md lists them). */
const MEMORY_BOUND_VARIABLES: Readonly<Record<keyof MemoryBounds, string>> = Object.freeze({
  repositories: "AUTOPILOT_KEPT_REPOSITORIES",
  graphs: "AUTOPILOT_KEPT_GRAPHS",
  readCacheEntries: "AUTOPILOT_READ_CACHE_ENTRIES",
  readCacheMb: "AUTOPILOT_READ_CACHE_MB",
});

/** The bounds the environment sets, the defaults for the rest; throws naming a variable that is not a whole number ≥ 1. */
export function memoryBoundsFromEnv(env: Record<string, string | undefined>): MemoryBounds {
  const bounds = { ...DEFAULT_MEMORY_BOUNDS };
  for (const [name, variable] of Object.entries(MEMORY_BOUND_VARIABLES) as [keyof MemoryBounds, string][]) {
    const raw = env[variable]?.trim();
    if (!raw) continue;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
      throw new Error(`${variable} must be a whole number of at least 1, not "${raw}"`);
    bounds[name] = value;
  }
  return bounds;
}

/** Sizes the process-wide caches (and keeps task graphs between builds); what exceeds a smaller bound goes. */
export function applyMemoryBounds(bounds: Partial<MemoryBounds> = {}): MemoryBounds {
  const all = { ...DEFAULT_MEMORY_BOUNDS, ...bounds };
  keepGraphsBetweenBuilds(true, all.graphs);
  boundRepoMemories(all.repositories);
  conditionalReadCache().bound({ entries: all.readCacheEntries, bytes: all.readCacheMb * 1024 * 1024 });
  return all;
}
