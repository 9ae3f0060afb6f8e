/**
 * A count and its noun in the right number ("1 iteration", "3 iterations", "0 tasks"), the one way every text
 * Autopilot writes counts things. English's plural rule comes from `Intl.PluralRules` (one for exactly 1, other
 * for the rest, fractions included); the number is written as `formatCount` writes it (thousands separators,
 * whatever the host's locale), or as it is when it is not whole (`0.5 days`).
 */
import { formatCount } from "./markdown.js";

const english = new Intl.PluralRules("en-US");

/** `counted(1, "iteration")` → "1 iteration"; an irregular plural is passed: `counted(2, "retry", "retries")`. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${Number.isInteger(n) ? formatCount(n) : String(n)} ${nounFor(n, singular, plural)}`;
}

/** Just the noun, for a count written apart from it: `nounFor(1, "task")` → "task". */
export function nounFor(n: number, singular: string, plural = `${singular}s`): string {
  return english.select(n) === "one" ? singular : plural;
}
