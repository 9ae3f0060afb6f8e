/**
 * The replicas' shared work (src/app/hosted/replica-work.ts) on a real Redis server: one reconcile at a time per
 * repository whichever replica asked, no request lost to a run in progress, a killed replica's job run by
 * another, one tick per interval for all, and what ticks choose by seen by every replica.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ReplicaWork, type RepoWork } from "../../src/app/hosted/replica-work.js";
import { type RedisServer, startRedis } from "../../sandbox/scenario/controllers/redis-server.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
let redis: RedisServer;
const open: ReplicaWork[] = [];
const children: ReturnType<typeof spawn>[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(open.splice(0).map((r) => r.close()));
});

function replica(prefix: string, extra: Partial<ConstructorParameters<typeof ReplicaWork>[0]> = {}) {
  const r = new ReplicaWork({ url: redis.url, prefix, log: quiet, ...extra });
  open.push(r);
  return r;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const work = (name: string): RepoWork => ({ owner: "acme", name, installationId: 1, reason: "test" });

describe("replicas sharing the work through Redis", () => {
  it("run one reconcile at a time per repository, and every request gets a run that starts after it", async () => {
    const prefix = `t-${randomUUID()}`;
    const runs: { repo: string; by: string; start: number; end: number }[] = [];
    const running = new Map<string, number>();
    let overlaps = 0;
    const handlers = (by: string) => ({
      reconcile: async (w: RepoWork) => {
        const now = (running.get(w.name) ?? 0) + 1;
        running.set(w.name, now);
        if (now > 1) overlaps++;
        const start = Date.now();
        await sleep(30);
        running.set(w.name, (running.get(w.name) ?? 1) - 1);
        runs.push({ repo: w.name, by, start, end: Date.now() });
      },
      tick: async () => {},
    });
    const a = replica(prefix);
    const b = replica(prefix);
    await a.start(handlers("a"));
    await b.start(handlers("b"));
    const repos = ["api", "web", "docs", "infra"];
    const lastAsked = new Map<string, number>();
    const asked: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      const repo = repos[i % repos.length]!;
      lastAsked.set(repo, Date.now());
      asked.push((i % 2 ? a : b).request(work(repo)));
      if (i % 10 === 0) await sleep(20);
    }
    await Promise.all(asked);
    await a.idle();
    expect(overlaps).toBe(0);
    for (const repo of repos) {
      const mine = runs.filter((r) => r.repo === repo);
      // The burst of 50 requests costs a few reconciles, not one each (a waiting reconcile covers them all).
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.length).toBeLessThan(50);
      // The last request is covered: a run started after it.
      expect(Math.max(...mine.map((r) => r.start))).toBeGreaterThanOrEqual(lastAsked.get(repo)!);
    }
  });

  /**
   * How many reconciles of one repository run when it is asked twice more while its first reconcile runs (from
   * another replica: only Redis is shared), as a delivery (`event`) or as a tick.
   */
  async function runsWhenAskedDuringARun(event: boolean): Promise<number> {
    const prefix = `t-${randomUUID()}`;
    let runs = 0;
    let release!: () => void;
    const first = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = replica(prefix);
    await a.start({
      reconcile: async () => {
        runs++;
        if (runs === 1) await first;
      },
      tick: async () => {},
    });
    await a.request(work("api"), { event });
    while (runs === 0) await sleep(10);
    const b = replica(prefix);
    await b.request(work("api"), { event });
    await b.request(work("api"), { event });
    release();
    await a.idle();
    return runs;
  }

  it("a delivery while the repository's reconcile runs gets one more run after it, however many arrive", async () => {
    expect(await runsWhenAskedDuringARun(true)).toBe(2);
  });

  it("a tick's request while the repository's reconcile runs asks no follow-up (it carries no change)", async () => {
    expect(await runsWhenAskedDuringARun(false)).toBe(1);
  });

  it("a request Redis cannot take fails instead of waiting for Redis (the replica then runs it itself)", async () => {
    const nowhere = replica(`t-${randomUUID()}`, { url: "redis://127.0.0.1:1" });
    await expect(nowhere.request(work("api"))).rejects.toThrow();
  });

  it("a killed replica's reconcile is run by another", async () => {
    const prefix = `t-${randomUUID()}`;
    const fixture = fileURLToPath(new URL("../fixtures/replica/hanging-replica.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", fixture], {
      env: { ...process.env, REDIS_URL: redis.url, PREFIX: prefix, LOCK_MS: "1000" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const waitFor = async (text: string) => {
      for (let i = 0; i < 600 && !output.includes(text); i++) await sleep(50);
      expect(output).toContain(text);
    };
    await waitFor("ready");
    const asker = replica(prefix);
    await asker.request(work("api"));
    await waitFor("took acme/api");
    child.kill("SIGKILL");

    const ran: string[] = [];
    const survivor = replica(prefix, { lockMs: 1000, stalledCheckMs: 500 });
    await survivor.start({
      reconcile: async (w) => {
        ran.push(w.name);
      },
      tick: async () => {},
    });
    for (let i = 0; i < 600 && ran.length === 0; i++) await sleep(50);
    expect(ran).toEqual(["api"]);
  });

  it("run each interval's tick on one replica only", async () => {
    const prefix = `t-${randomUUID()}`;
    const ticks: string[] = [];
    const a = replica(prefix, { tickMs: 400 });
    const b = replica(prefix, { tickMs: 400 });
    await a.start({ reconcile: async () => {}, tick: async () => void ticks.push("a") });
    await b.start({ reconcile: async () => {}, tick: async () => void ticks.push("b") });
    await sleep(4_000);
    // Ten intervals: about ten ticks in all, where each replica ticking on its own would make about twenty.
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks.length).toBeLessThanOrEqual(13);
  });

  it("share what ticks choose by: each repository's standing and each installation's rate reading", async () => {
    const prefix = `t-${randomUUID()}`;
    const a = replica(prefix);
    const b = replica(prefix);
    a.saveStanding("acme/api", { activity: "idle", lastReconciledAt: 1000, wakeAtMs: 5000 });
    a.saveStanding("acme/web", { activity: "active", lastReconciledAt: 2000 });
    a.saveReading(7, { resource: "core", limit: 5000, remaining: 4200, resetAt: 9_000_000 });
    let seen = new Map();
    for (let i = 0; i < 50 && seen.size < 2; i++) {
      seen = await b.standings(["acme/api", "acme/web", "acme/docs"]);
      await sleep(20);
    }
    expect(Object.fromEntries(seen)).toEqual({
      "acme/api": { activity: "idle", lastReconciledAt: 1000, wakeAtMs: 5000 },
      "acme/web": { activity: "active", lastReconciledAt: 2000 },
    });
    expect(await b.readings(7)).toEqual([expect.objectContaining({ resource: "core", remaining: 4200 })]);
    expect(await b.readings(8)).toEqual([]);
    a.saveStanding("acme/web", null);
    for (let i = 0; i < 50 && seen.has("acme/web"); i++) {
      seen = await b.standings(["acme/web"]);
      await sleep(20);
    }
    expect(seen.has("acme/web")).toBe(false);
  });

  it("skip a tick's reconcile another replica ran since the tick chose, unless a delivery asked since", async () => {
    const prefix = `t-${randomUUID()}`;
    const ran: string[] = [];
    const a = replica(prefix);
    const b = replica(prefix);
    const chose = Date.now();
    // Replica b reconciled acme/api after a's tick read the standings (the tick chose from a stale one) and
    // acme/web before; acme/docs was reconciled since too, but a delivery then asked for it.
    b.saveStanding("acme/api", { activity: "idle", lastReconciledAt: chose + 5 });
    b.saveStanding("acme/web", { activity: "idle", lastReconciledAt: chose - 5 });
    b.saveStanding("acme/docs", { activity: "idle", lastReconciledAt: chose + 5 });
    for (let i = 0; i < 50 && (await a.standings(["acme/api", "acme/web", "acme/docs"])).size < 3; i++)
      await sleep(20);
    await a.request({ ...work("api"), decidedAt: chose }, { event: false });
    await a.request({ ...work("web"), decidedAt: chose }, { event: false });
    await a.request({ ...work("docs"), decidedAt: chose }, { event: false });
    await b.request(work("docs"), { event: true });
    await a.start({ reconcile: async (w) => void ran.push(w.name), tick: async () => {} });
    await a.idle();
    expect(ran.sort()).toEqual(["docs", "web"]);
  });
});
