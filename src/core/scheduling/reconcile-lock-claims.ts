/**
 * Who holds the reconcile lock, from the claims (refs under RECONCILE_LOCK_PREFIX) one listing shows. GitHub
 * has no lock, but creating a ref and listing refs are each atomic, so: a contender creates its own claim, then
 * lists the claims, and holds the lock only when its claim is the only live one. Two contenders cannot both
 * hold it: each listed after creating its claim, so the later of the two listings shows both claims. Two that
 * see each other both withdraw and try again after a random wait. A claim past its expiry (its holder died
 * without deleting it) counts for no one and anyone may delete it, as does one that claims to last longer than
 * a lease.
 *
 * Pure: the listing and the time are passed in.
 */
import { parseReconcileLock } from "../contract.js";

interface ClaimStanding {
  /** The listing shows `mine` and no other live claim. */
  held: boolean;
  /** Live claims of other holders (full ref names). */
  others: string[];
  /** Claims past their expiry, mine included (full ref names): anyone may delete them. */
  expired: string[];
}

/** Clock skew between runners tolerated in a claim's expiry. */
const CLAIM_SKEW_MS = 60_000;

/**
 * `leaseMs` is how long a claim may last: a claim that says it lasts longer (beyond CLAIM_SKEW_MS of clock
 * skew) was not made by this protocol, e.g. a ref pushed by hand with a far-off expiry, and would hold every
 * reconcile out until then: it counts as expired.
 */
export function claimStanding(
  listed: readonly string[],
  mine: string | null,
  nowMs: number,
  leaseMs: number,
  /** Claims known to count for no one before their expiry: their holder's workflow run is over. */
  dead: ReadonlySet<string> = new Set(),
): ClaimStanding {
  const others: string[] = [];
  const expired: string[] = [];
  let mineLive = false;
  for (const ref of listed) {
    const claim = parseReconcileLock(ref);
    // A ref under the prefix that is no claim of ours was made by someone else: it holds nobody out.
    if (!claim || dead.has(ref)) continue;
    if (claim.expiresAtMs <= nowMs || claim.expiresAtMs > nowMs + leaseMs + CLAIM_SKEW_MS) expired.push(ref);
    else if (ref === mine) mineLive = true;
    else others.push(ref);
  }
  return { held: mineLive && others.length === 0, others, expired };
}
