/**
 * Red team: an agent process that outlives the end-of-run kill by looking dead. Its main thread calls
 * pthread_exit() while another thread keeps running: the leader then shows as a zombie (`State: Z`) in /proc, and
 * a kill that skips zombies leaves the live thread writing. The helper is a real C program (gcc at test time),
 * started by the "agent" in the background (`setsid`, so its process group's kill does not reach it); the test
 * asserts the thread stops writing once the agent's user has been killed, in both isolation modes:
 * - `namespace`: the kernel ends it with the sandbox's PID 1 when the agent's command exits;
 * - `uid`: only the /proc scan can find it, and it finds it because a zombie leader with live threads is not
 *   skipped (the test checks the scan lists that zombie before the kill).
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentUser, processesOf } from "../../src/worker/isolation/agent-user.js";
import { testAgentUser } from "../worker/fixtures/real.js";

const HELPER = `
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static const char *out;
static void *writer(void *arg) {
  (void)arg;
  for (unsigned long n = 0;; n++) {
    FILE *f = fopen(out, "w");
    if (f) { fprintf(f, "%lu\\n", n); fclose(f); }
    usleep(20000);
  }
  return 0;
}
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  out = argv[1];
  FILE *p = fopen(argv[2], "w");
  if (p) { fprintf(p, "%d\\n", (int)getpid()); fclose(p); }
  pthread_t t;
  pthread_create(&t, 0, writer, 0);
  usleep(100000);
  pthread_exit(0);
}
`;

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A work directory the agent's user owns, with the compiled helper in it. */
async function setUp(user: AgentUser): Promise<{ work: string; helper: string }> {
  const root = await mkdtemp(join(tmpdir(), "autopilot-zombie-"));
  roots.push(root);
  await chmod(root, 0o755);
  const work = join(root, "work");
  await mkdir(work);
  const source = join(root, "helper.c");
  await writeFile(source, HELPER);
  const helper = join(work, "zombie-leader");
  execFileSync("gcc", ["-O0", "-pthread", "-o", helper, source]);
  user.useView({ shared: [], writable: [work], readable: [], hidden: [], openings: [] });
  await user.give([work]);
  return { work, helper };
}

/** Starts the "agent": it leaves the helper behind in a session of its own and exits at once. */
async function runAgent(user: AgentUser, work: string, helper: string): Promise<void> {
  const script = `setsid ${helper} ${work}/count ${work}/pid >/dev/null 2>&1 </dev/null & while [ ! -s ${work}/count ]; do sleep 0.05; done; sleep 0.3`;
  const wrapped = user.wrap("/bin/sh", ["-c", script], { PATH: "/usr/bin:/bin" });
  const child = spawn(wrapped.command, wrapped.args, { cwd: work, env: wrapped.env, stdio: "ignore" });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code).toBe(0);
}

/** True when the counter file still changes over a second. */
async function stillWriting(file: string): Promise<boolean> {
  const before = readFileSync(file, "utf8");
  await delay(1_000);
  return readFileSync(file, "utf8") !== before;
}

/**
 * True once the counter file stops changing over a second, within `withinMs`. The kernel kills what is left in a
 * PID namespace when its PID 1 ends, but after the parent sees that exit: on a busy machine the helper's thread
 * may write once more before the kill lands.
 */
async function stopsWriting(file: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) if (!(await stillWriting(file))) return true;
  return false;
}

/**
 * The threads of `pid` that are not zombies, once the process is gone or only zombies are left. A killed
 * orphan stays in /proc as a zombie until whoever adopted it (init, or a subreaper) reaps it, which on a busy
 * machine may come later than the kill: what must be true at once is that nothing of it still runs.
 */
async function liveThreadsOf(pid: number): Promise<string[]> {
  const live = () => {
    try {
      return readdirSync(`/proc/${pid}/task`).filter(
        (tid) => !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8")),
      );
    } catch {
      return []; // gone (reaped) between the listing and the read, or before it
    }
  };
  // SIGKILL takes effect asynchronously: give the threads a moment to die before judging.
  for (let i = 0; i < 50 && live().length > 0; i++) await delay(100);
  return live();
}

describe("a zombie leader whose thread keeps running", { timeout: 60_000 }, () => {
  it("uid mode: the scan finds the zombie leader and its kill ends the live thread", async () => {
    const user = await testAgentUser("uid");
    const { work, helper } = await setUp(user);
    await runAgent(user, work, helper);
    // The agent's command is gone; the helper's leader is a zombie with a live thread, still writing.
    expect(await stillWriting(join(work, "count"))).toBe(true);
    const leader = Number(readFileSync(join(work, "pid"), "utf8"));
    expect(readFileSync(`/proc/${leader}/status`, "utf8")).toMatch(/^State:\s+Z/m);
    expect(await processesOf(user.uid!)).toContain(leader);

    expect(await user.killAll()).toBeGreaterThan(0);
    expect(await stillWriting(join(work, "count"))).toBe(false);
    expect(await liveThreadsOf(leader)).toEqual([]);
  });

  it("namespace mode: the end of the sandbox ends it, and killAll finds nothing left", async () => {
    const user = await testAgentUser("namespace");
    const { work, helper } = await setUp(user);
    await runAgent(user, work, helper);
    // The sandbox's PID 1 ended with the agent's command, and the kernel killed every process in it.
    expect(await stopsWriting(join(work, "count"), 10_000)).toBe(true);
    expect(await processesOf(user.uid!)).toEqual([]);
    expect(await user.killAll()).toBe(0);
  });
});
