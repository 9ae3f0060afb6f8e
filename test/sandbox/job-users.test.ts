import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimJobUser } from "../../sandbox/scenario/autopilot-action.js";

// A lock directory of this test's own: the machine-wide one is shared with the jobs of test files running
// beside this one, whose claims a test must neither take nor overwrite.
let locks: string;
beforeEach(() => {
  locks = mkdtempSync(join(tmpdir(), "job-users-"));
});
afterEach(() => rmSync(locks, { recursive: true, force: true }));

/** Marks slot `n` as claimed by a process that no longer exists. */
function staleSlot(n: number): void {
  mkdirSync(join(locks, String(n)), { recursive: true });
  writeFileSync(join(locks, String(n), "pid"), "2147483646");
}

describe("the sandbox's agent users for concurrent jobs", () => {
  it("never hands one user to two running jobs, and reuses a released one", () => {
    const first = claimJobUser(locks);
    const second = claimJobUser(locks);
    expect(second.name).not.toBe(first.name);
    first.release();
    const third = claimJobUser(locks);
    expect(third.name).toBe(first.name);
    second.release();
    third.release();
  });

  it("takes over a user whose claiming process is gone, and not one whose process lives", () => {
    staleSlot(0);
    const taken = claimJobUser(locks);
    expect(taken.name).toBe("ap-sbx-0");

    // Slot 1 is held by a live process (this one), slot 2 by a dead one: the claim skips 1 and takes 2.
    mkdirSync(join(locks, "1"), { recursive: true });
    writeFileSync(join(locks, "1", "pid"), String(process.pid));
    staleSlot(2);
    expect(claimJobUser(locks).name).toBe("ap-sbx-2");
    taken.release();
  });

  it("leaves a stale user alone while another process is taking it over", () => {
    // Two processes finding the same stale lock: the one that holds the takeover lock removes and re-creates
    // the claim; the other must move on rather than remove that fresh claim and take the user as well.
    staleSlot(0);
    mkdirSync(join(locks, "0.takeover"));
    const claim = claimJobUser(locks);
    expect(claim.name).toBe("ap-sbx-1");
    claim.release();
  });
});
