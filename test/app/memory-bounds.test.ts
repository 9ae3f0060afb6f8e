/**
 * Bounded memory (src/app/hosted/memory-bounds.ts): the caches a long-lived controller keeps drop their least recently
 * used entries past their bounds, a dropped entry costs a read and never a decision, and what must not be lost
 * (writes held for a secondary rate limit, a pause in force, a waiting run) survives any pressure.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  applyMemoryBounds,
  DEFAULT_MEMORY_BOUNDS,
  memoryBoundsFromEnv,
} from "../../src/app/hosted/memory-bounds.js";
import { reconcile } from "../../src/app/reconcile-repo.js";
import { RepoScheduler } from "../../src/app/scheduler.js";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { buildTaskGraph, keepGraphsBetweenBuilds, keptGraphs } from "../../src/core/tasks/graph.js";
import { resetMemories } from "../../src/github/gateway.js";
import { boundRepoMemories, keptRepoMemories, memoryFor } from "../../src/github/repo-memories.js";
import { GitHubCircuit, resetCircuits } from "../../src/github/transport/circuit.js";
import { conditionalReadCache } from "../../src/github/transport/conditional-reads.js";
import { totalOf } from "../../src/github/transport/counter.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();

const answer = (data: unknown) => ({ status: 200, headers: { etag: '"x"' }, data });

beforeEach(() => {
  resetMemories();
  resetCircuits();
  applyMemoryBounds(DEFAULT_MEMORY_BOUNDS);
});

afterAll(() => {
  applyMemoryBounds(DEFAULT_MEMORY_BOUNDS);
  keepGraphsBetweenBuilds(false);
  resetMemories();
});

describe("the conditional-read cache", () => {
  it("past its entry bound drops the least recently used answer", () => {
    applyMemoryBounds({ readCacheEntries: 2 });
    const cache = conditionalReadCache();
    cache.set("a", answer(1));
    cache.set("b", answer(2));
    cache.get("a"); // a is now the most recently used: b goes first
    cache.set("c", answer(3));
    expect([cache.get("a")?.data, cache.get("b"), cache.get("c")?.data]).toEqual([1, undefined, 3]);
    expect(cache.size).toBe(2);
  });

  it("past its size bound drops least recently used answers until the new one fits", () => {
    applyMemoryBounds({ readCacheEntries: 100, readCacheMb: 1 });
    const cache = conditionalReadCache();
    const page = "x".repeat(300 * 1024); // three fit in 1 MiB, four do not
    for (const key of ["a", "b", "c"]) cache.set(key, answer(page));
    cache.get("a");
    cache.set("d", answer(page));
    expect(["a", "b", "c", "d"].filter((k) => cache.get(k) !== undefined)).toEqual(["a", "c", "d"]);
    expect(cache.bytes).toBeLessThanOrEqual(1024 * 1024);
  });

  it("keeps the most recently used answers when its bounds shrink", () => {
    const cache = conditionalReadCache();
    for (const key of ["a", "b", "c", "d"]) cache.set(key, answer(key));
    cache.get("a");
    applyMemoryBounds({ readCacheEntries: 2 });
    expect(["a", "b", "c", "d"].filter((k) => cache.get(k) !== undefined)).toEqual(["a", "d"]);
  });
});

describe("the kept per-repository state", () => {
  it("keeps the memory of the most recently reconciled repositories only", () => {
    boundRepoMemories(2);
    const a = memoryFor({ owner: "acme", name: "a" });
    const b = memoryFor({ owner: "acme", name: "b" });
    memoryFor({ owner: "acme", name: "a" });
    memoryFor({ owner: "acme", name: "c" });
    expect(keptRepoMemories()).toBe(2);
    expect(memoryFor({ owner: "acme", name: "a" })).toBe(a);
    expect(memoryFor({ owner: "acme", name: "b" })).not.toBe(b);
  });

  it("keeps the task graphs of the most recently built repositories only", () => {
    applyMemoryBounds({ graphs: 2 });
    for (const name of ["a", "b", "c", "d"]) buildTaskGraph([], { owner: "acme", name });
    expect(keptGraphs()).toBe(2);
  });

  it("rebuilds an evicted repository's memory on its next reconcile: a fuller read, the same decision", async () => {
    applyMemoryBounds({ repositories: 1 });
    const { sandbox } = suite;
    const seed = (name: string) => {
      const repo = { owner: "acme", name };
      sandbox.store.createRepo(repo);
      sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
      sandbox.store.createIssue(repo, {
        title: "Parked",
        body: "Waits for a person.",
        labels: ["autopilot:blocked"],
        author: "maintainer",
      });
      sandbox.store.createIssue(repo, {
        title: "Waiting",
        body: "Depends on #1",
        labels: ["autopilot:ready"],
        author: "maintainer",
      });
      return { octokit: suite.octokit(), repo, botLogin: `${sandbox.app.slug}[bot]`, baseUrl: sandbox.url };
    };
    const first = seed("first");
    const second = seed("second");
    for (let i = 0; i < 3; i++) await reconcile(first);
    const warm = await reconcile(first);
    const remembered = memoryFor(first.repo);
    expect(remembered.trackingIssue).not.toBeNull();

    await reconcile(second); // the bound is one repository: the first one's memory goes
    const cold = await reconcile(first);

    expect(memoryFor(first.repo)).not.toBe(remembered);
    expect(memoryFor(first.repo).trackingIssue).toBe(remembered.trackingIssue);
    expect(cold.decision.effects).toEqual(warm.decision.effects);
    expect(cold.decision.state.tasks).toEqual(warm.decision.state.tasks);
    expect(totalOf(cold.requests)).toBeGreaterThan(totalOf(warm.requests));
    const trackingIssues = sandbox.store
      .listIssues(first.repo)
      .filter((i) => (i.body ?? "").includes(TRACKING_MARKER));
    expect(trackingIssues).toHaveLength(1);
  });
});

describe("what is not a cache", () => {
  it("a circuit keeps a repository's held writes and pauses in force under pressure, and forgets only ended, empty pauses", () => {
    const circuit = new GitHubCircuit();
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const hour = 60 * 60_000;
    circuit.pauseWrites("acme/held", 60, "secondary rate limit", t0);
    const effect = { type: "comment", issue: 1, body: "Hello", key: "reply-1" } as const;
    circuit.enqueue("acme/held", effect, "secondary rate limit", "comment:1:reply-1");

    // Pressure: the caches at their smallest, a hundred other repositories reconciled and paused.
    applyMemoryBounds({ repositories: 1, graphs: 1, readCacheEntries: 1, readCacheMb: 1 });
    for (let i = 0; i < 100; i++) {
      memoryFor({ owner: "acme", name: `other-${i}` });
      circuit.pauseWrites(`acme/other-${i}`, 60, "secondary rate limit", t0);
    }
    circuit.pauseWrites("acme/late", 600, "secondary rate limit", t0 + 2 * hour);

    expect(circuit.pausedRepos().sort()).toEqual(["acme/held", "acme/late"]);
    expect(circuit.writePause("acme/late", t0 + 2 * hour)).not.toBeNull();
    expect(circuit.reposWithQueuedWrites()).toEqual(["acme/held"]);
    expect(circuit.takeQueued("acme/held").map((q) => q.effect)).toEqual([effect]);
  });

  it("a scheduler keeps nothing of a repository once its runs are over, and runs the latest waiting task", async () => {
    const scheduler = new RepoScheduler();
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = scheduler.request("acme/a", () => gate);
    const later = [1, 2, 3].map((n) =>
      scheduler.request("acme/a", async () => {
        ran.push(`a${n}`);
      }),
    );
    for (const name of ["b", "c"]) void scheduler.request(`acme/${name}`, async () => void ran.push(name));
    expect(scheduler.busy).toBe(3);
    release();
    await Promise.all([first, ...later]);
    await scheduler.idle();
    expect(ran.sort()).toEqual(["a3", "b", "c"]);
    expect(scheduler.busy).toBe(0);
  });
});

describe("the bounds from the environment", () => {
  it("reads each variable, keeps the defaults for the rest, and refuses what is not a whole number ≥ 1", () => {
    expect(memoryBoundsFromEnv({})).toEqual(DEFAULT_MEMORY_BOUNDS);
    expect(
      memoryBoundsFromEnv({
        AUTOPILOT_KEPT_REPOSITORIES: "50",
        AUTOPILOT_KEPT_GRAPHS: " 20 ",
        AUTOPILOT_READ_CACHE_ENTRIES: "300",
        AUTOPILOT_READ_CACHE_MB: "8",
      }),
    ).toEqual({ repositories: 50, graphs: 20, readCacheEntries: 300, readCacheMb: 8 });
    for (const bad of ["0", "-3", "1.5", "lots", "1e3"])
      expect(() => memoryBoundsFromEnv({ AUTOPILOT_KEPT_GRAPHS: bad })).toThrow(/AUTOPILOT_KEPT_GRAPHS/);
  });
});
