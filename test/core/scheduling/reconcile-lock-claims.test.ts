/**
 * Who holds the reconcile lock, from one listing of the claims (src/core/scheduling/reconcile-lock-claims.ts).
 */
import { describe, expect, it } from "vitest";
import { holderRun, reconcileLockRef } from "../../../src/core/contract.js";
import { claimStanding } from "../../../src/core/scheduling/reconcile-lock-claims.js";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const LEASE = 180_000;

describe("the reconcile lock's claims", () => {
  it("is held by a contender whose claim is the only live one", () => {
    const mine = reconcileLockRef(NOW + LEASE, "run-1-1-a");
    expect(claimStanding([mine], mine, NOW, LEASE)).toEqual({ held: true, others: [], expired: [] });
  });

  it("is held by nobody when two live claims see each other", () => {
    const mine = reconcileLockRef(NOW + LEASE, "run-1-1-a");
    const theirs = reconcileLockRef(NOW + LEASE - 1, "run-2-1-b");
    expect(claimStanding([theirs, mine], mine, NOW, LEASE)).toEqual({
      held: false,
      others: [theirs],
      expired: [],
    });
    expect(claimStanding([theirs, mine], theirs, NOW, LEASE).held).toBe(false);
  });

  it("counts a claim past its expiry, or one claiming more than a lease, for no one", () => {
    const mine = reconcileLockRef(NOW + LEASE, "run-1-1-a");
    const dead = reconcileLockRef(NOW - 1, "run-0-1-dead");
    // A ref pushed by hand that would hold every reconcile out for years.
    const forever = reconcileLockRef(NOW + 365 * 86_400_000, "by-hand");
    expect(claimStanding([dead, forever, mine], mine, NOW, LEASE)).toEqual({
      held: true,
      others: [],
      expired: [dead, forever],
    });
  });

  it("counts a live claim of a holder whose run is over for no one, even when it could not be deleted", () => {
    const mine = reconcileLockRef(NOW + LEASE, "run-1-1-a");
    const lost = reconcileLockRef(NOW + LEASE, "run-9-1-0b");
    expect(claimStanding([lost, mine], mine, NOW, LEASE).held).toBe(false);
    expect(claimStanding([lost, mine], mine, NOW, LEASE, new Set([lost])).held).toBe(true);
  });

  it("reads the workflow run a holder named itself after, and nothing from other names", () => {
    expect(holderRun("run-1015-2-2451745a")).toEqual({ runId: 1015, attempt: 2 });
    expect(holderRun("pushed-by-hand")).toBeNull();
    expect(holderRun("run-local-1-2451745a")).toBeNull();
  });

  it("ignores refs under the prefix that are no claim", () => {
    const mine = reconcileLockRef(NOW + LEASE, "run-1-1-a");
    expect(claimStanding(["refs/autopilot/reconcile/notes", mine], mine, NOW, LEASE).held).toBe(true);
  });
});
