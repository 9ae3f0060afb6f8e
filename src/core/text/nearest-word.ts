/**
 * The known word a typo most likely meant ("did you mean …?"): for configuration keys (config/key-suggestions.ts)
 * and for `/autopilot` commands (tasks/commands.ts). Levenshtein distance over at most a few dozen short words;
 * small enough that a dependency would weigh more than the loop.
 */

/** Edits (insert, delete, replace) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** How many edits a typo of a word this long may hold and still be taken for it. */
export function typoLimit(word: string): number {
  return word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
}

/** The candidate nearest to `word` within its typo limit (the first of equals), or null. */
export function nearestWord(word: string, candidates: readonly string[]): string | null {
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance > typoLimit(candidate)) continue;
    if (best === null || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate ?? null;
}
