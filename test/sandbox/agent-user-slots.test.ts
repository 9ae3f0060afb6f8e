import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimAgentUser } from "../../src/sandbox/github/agent-user-slots.js";

// A pool of this test's own: the machine-wide one is shared with every sandbox running alongside.
let locks: string;
beforeEach(() => {
  locks = mkdtempSync(join(tmpdir(), "autopilot-agent-users-test-"));
});
afterEach(() => rmSync(locks, { recursive: true, force: true }));

/** Marks `slot` as claimed by process `pid`, as a claim left on disk does. */
function claimedBy(slot: number, pid: number): void {
  mkdirSync(join(locks, String(slot)), { recursive: true });
  writeFileSync(join(locks, String(slot), "pid"), String(pid));
}

describe("the sandbox's agent users for concurrent jobs", () => {
  it("never hands one user to two running jobs, and reuses a released one", () => {
    const first = claimAgentUser(locks);
    const second = claimAgentUser(locks);
    expect(second.name).not.toBe(first.name);
    first.release();
    const third = claimAgentUser(locks);
    expect(third.name).toBe(first.name);
    second.release();
    third.release();
  });

  it("takes over a user whose claiming process is gone, and not one whose process lives", () => {
    claimedBy(0, 2147483646);
    expect(claimAgentUser(locks).name).toBe("ap-sbx-0");

    claimedBy(1, process.pid);
    claimedBy(2, 2147483646);
    expect(claimAgentUser(locks).name).toBe("ap-sbx-2");
  });
});
