/**
 * Red team: two jobs on one host. Without AUTOPILOT_AGENT_USER each worker takes an agent user no other running
 * worker holds (agent-slots.ts), so one job's end-of-run kill never reaches the other's agent, and a dead job's
 * slot is taken over.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processesOf, setupAgentUser } from "../../src/worker/isolation/agent-user.js";
import { claimAgentSlot } from "../../src/worker/isolation/agent-slots.js";

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe("two concurrent jobs on one host", { timeout: 60_000 }, () => {
  it("get different agent users, and one job's killAll leaves the other's agent running", async () => {
    const slots = await mkdtemp(join(tmpdir(), "autopilot-slots-"));
    roots.push(slots);
    const first = await setupAgentUser({ isolation: "namespace", env: {}, slotsDir: slots });
    const second = await setupAgentUser({ isolation: "namespace", env: {}, slotsDir: slots });
    expect(first.name).toMatch(/^autopilot-agent-\d+$/);
    expect(second.name).not.toBe(first.name);
    expect(second.uid).not.toBe(first.uid);

    // The first job's agent is running (in its sandbox) when the second job's run ends.
    const wrapped = first.wrap("/bin/sleep", ["600"], { PATH: "/usr/bin:/bin" });
    const child = spawn(wrapped.command, wrapped.args, { env: wrapped.env, stdio: "ignore", detached: true });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    for (let i = 0; i < 100 && (await processesOf(first.uid!)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await processesOf(first.uid!)).length).toBeGreaterThan(0);

    expect(await second.killAll()).toBe(0);
    expect((await processesOf(first.uid!)).length).toBeGreaterThan(0);

    // Its own job's end does end it.
    expect(await first.killAll()).toBeGreaterThan(0);
    await exited;
    expect(await processesOf(first.uid!)).toEqual([]);
  });

  it("a slot whose job died is taken over", async () => {
    const slots = await mkdtemp(join(tmpdir(), "autopilot-slots-"));
    roots.push(slots);
    // A lock left by a process that is gone: its pid no longer runs.
    const gone = spawn("/bin/true");
    await new Promise((resolve) => gone.once("exit", resolve));
    await rm(join(slots, "0"), { recursive: true, force: true });
    await mkdir(join(slots, "0"), { recursive: true });
    await writeFile(join(slots, "0", "pid"), String(gone.pid));
    const claimed = claimAgentSlot(slots);
    expect(claimed?.name).toBe("autopilot-agent-0");
    claimed?.release();
  });
});
