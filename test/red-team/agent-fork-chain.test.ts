/**
 * Red team: an agent process that outruns the end-of-run kill by never staying the same process. A real C program
 * (fixtures/fork-chain.c, gcc at test time) forks its successor and exits, over and over: a kill that reads the
 * pids from /proc and then signals them one by one always aims at a process that has already handed over to its
 * child (and a walk of /proc may not see the chain at all). In `uid` mode only killAll stands between such a
 * chain and the next command; it must end the chain (uid-kill.ts: kill(-1) sent as the agent's uid reaches every
 * process of the uid at once). In `namespace` mode the sandbox's end ends it first. The chain is started in a
 * session of its own by an "agent" command that exits at once, as a daemon would be. The sudo path (a non-root
 * worker) is in agent-sudo.test.ts.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentUser } from "../../src/worker/isolation/agent-user.js";
import { testAgentUser } from "../worker/fixtures/real.js";
import { survivors } from "../helpers/uid-survivors.js";

const CHAIN = join(import.meta.dirname, "fixtures", "fork-chain.c");

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A work directory the agent's user owns, with the compiled chain in it. */
async function setUp(user: AgentUser): Promise<{ work: string; chain: string }> {
  const root = await mkdtemp(join(tmpdir(), "autopilot-fork-chain-"));
  roots.push(root);
  await chmod(root, 0o755);
  const work = join(root, "work");
  await mkdir(work);
  const chain = join(work, "fork-chain");
  execFileSync("gcc", ["-O0", "-o", chain, CHAIN]);
  user.useView({ shared: [], writable: [work], readable: [], hidden: [], openings: [] });
  await user.give([work]);
  return { work, chain };
}

/** The "agent": leaves the chain running in a session of its own and exits once it has started. */
async function runAgent(user: AgentUser, work: string, chain: string): Promise<void> {
  const script = `setsid ${chain} ${work}/count >/dev/null 2>&1 </dev/null & while [ ! -s ${work}/count ]; do sleep 0.05; done`;
  const wrapped = user.wrap("/bin/sh", ["-c", script], { PATH: "/usr/bin:/bin" });
  const child = spawn(wrapped.command, wrapped.args, { cwd: work, env: wrapped.env, stdio: "ignore" });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code).toBe(0);
}

/** Whether the counter file changes within `ms` (a running chain rewrites it many times a second). */
async function moves(file: string, ms: number): Promise<boolean> {
  const first = readFileSync(file, "utf8");
  for (let waited = 0; waited < ms; waited += 50) {
    await delay(50);
    if (readFileSync(file, "utf8") !== first) return true;
  }
  return false;
}

describe("a fork chain (each process forks its successor and exits)", { timeout: 120_000 }, () => {
  it("uid mode: killAll ends it, and no process of the agent's uid is left", async () => {
    const user = await testAgentUser("uid");
    const { work, chain } = await setUp(user);
    try {
      await runAgent(user, work, chain);
      // The agent's command is gone; the chain still runs on its own.
      expect(await moves(join(work, "count"), 5_000)).toBe(true);

      await user.killAll();
      expect(await survivors(user.uid!)).toEqual([]);
      expect(await moves(join(work, "count"), 1_000)).toBe(false);
    } finally {
      // Whatever the outcome, the chain must not outlive the test: end it the way that works.
      const killer = `setpriv --reuid=${user.uid} --regid=${user.uid} --clear-groups kill -KILL -- -1`;
      execFileSync("sh", ["-c", `for i in 1 2 3 4 5; do ${killer} 2>/dev/null; sleep 0.1; done; true`]);
    }
  });

  it("namespace mode: the end of the sandbox ends it, and killAll finds nothing left", async () => {
    const user = await testAgentUser("namespace");
    const { work, chain } = await setUp(user);
    await runAgent(user, work, chain);
    // The command's exit can be reported while the kernel is still ending the sandbox's other processes (a loaded
    // machine showed it once): they leave with no kill of ours, and then the chain writes no more.
    expect(await survivors(user.uid!)).toEqual([]);
    expect(await moves(join(work, "count"), 1_000)).toBe(false);
    expect(await user.killAll()).toBe(0);
  });
});
