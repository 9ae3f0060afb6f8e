/**
 * What earlier reconciles of each repository learned (src/github/snapshot/snapshot-context.ts `RepoMemory`:
 * the tracking issue's number, the pool labels, the worker workflow, the token's own account, label node ids,
 * recent permission lookups), process-wide and shared by every gateway.
 *
 * Bounded by repository count, least recently used out first (lru-cache): an App installed on a whole
 * organization keeps the memory of the repositories it reconciles often. Everything in a memory is learned
 * again from GitHub, so a repository whose memory was dropped costs its next reconcile a fuller read (the
 * tracking issue looked up, permissions asked again), never a different decision. Nothing that must not be
 * lost lives here: held writes and write pauses are the circuit's (src/github/transport/circuit.ts).
 */
import { LRUCache } from "lru-cache";
import { newRepoMemory, type RepoMemory } from "./snapshot/snapshot-context.js";
import { type RepoRef, repoKey } from "./transport/octokit-surface.js";

/** Repositories whose memory is kept unless configured otherwise. */
export const DEFAULT_REPO_MEMORIES = 1_000;

let memories = new LRUCache<string, RepoMemory>({ max: DEFAULT_REPO_MEMORIES });

/** The process-wide memory of one repository (made the most recently used; a fresh one when none is kept). */
export function memoryFor(repo: RepoRef): RepoMemory {
  const key = repoKey(repo);
  let memory = memories.get(key);
  if (!memory) {
    memory = newRepoMemory();
    memories.set(key, memory);
  }
  return memory;
}

/** Keeps at most `repositories` memories from now on (the most recently used ones stay). */
export function boundRepoMemories(repositories: number): void {
  if (repositories === memories.max) return;
  const previous = memories;
  memories = new LRUCache<string, RepoMemory>({ max: repositories });
  for (const key of previous.rkeys()) memories.set(key, previous.peek(key)!);
}

/** How many repositories' memories are kept now. */
export function keptRepoMemories(): number {
  return memories.size;
}

/** Forgets every repository's memory (tests, benchmarks). */
export function forgetRepoMemories(): void {
  memories.clear();
}
