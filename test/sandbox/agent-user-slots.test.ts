import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claimAgentUser } from "../../src/sandbox/github/agent-user-slots.js";

describe("the sandbox's agent users for concurrent jobs", () => {
  it("never hands one user to two running jobs, and reuses a released one", () => {
    const first = claimAgentUser();
    const second = claimAgentUser();
    expect(second.name).not.toBe(first.name);
    first.release();
    const third = claimAgentUser();
    expect(third.name).not.toBe(second.name);
    second.release();
    third.release();
  });

  it("takes over a user whose claiming process is gone", () => {
    const held: ReturnType<typeof claimAgentUser>[] = [];
    // Fill the slots below a free one, then mark the free one as claimed by a process that no longer exists.
    const probe = claimAgentUser();
    const slot = probe.name.replace("ap-sbx-", "");
    probe.release();
    const dir = join(tmpdir(), "autopilot-sandbox-agent-users", slot);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "pid"), "2147483646");
    const taken = claimAgentUser();
    held.push(taken);
    expect(taken.name).toBe(probe.name);
    for (const claim of held) claim.release();
  });
});
