/**
 * The reconcile lock (src/github/reconcile-lock.ts) against the sandbox's git refs: contenders racing for it
 * never hold it at the same time, a claim whose holder died is cleared once it expires, a live claim keeps a
 * contender out for its whole wait, and a commit that is gone is replaced by the default branch's head.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { RECONCILE_LOCK_PREFIX, reconcileLockRef } from "../../src/core/contract.js";
import { takeReconcileLock } from "../../src/github/reconcile-lock.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function repoWithCommit(name: string): Promise<{ repo: { owner: string; name: string }; sha: string }> {
  const repo = { owner: "acme", name };
  suite.sandbox.store.createRepo(repo);
  const sha = await suite.sandbox.store.resolveRef(`acme/${name}`, "main");
  if (!sha) throw new Error("the sandbox repository has no main");
  return { repo, sha };
}

async function claims(name: string): Promise<string[]> {
  return (await suite.sandbox.store.listRefs(`acme/${name}`))
    .map((r) => r.ref)
    .filter((r) => r.startsWith(RECONCILE_LOCK_PREFIX));
}

/** The real waits, 40 times shorter: the protocol's pauses stay random, the test stays quick. */
const shortSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms / 40));

describe("the reconcile lock", () => {
  it("lets one of six racing contenders in at a time, and every one of them in the end", async () => {
    const { repo, sha } = await repoWithCommit("race");
    let inside = 0;
    let most = 0;
    const entered: string[] = [];
    await Promise.all(
      ["a", "b", "c", "d", "e", "f"].map(async (holder) => {
        const lock = await takeReconcileLock({
          octokit: suite.octokit(),
          repo,
          holder,
          sha,
          leaseMs: 60_000,
          waitMs: 60_000,
          log: quiet,
          sleep: shortSleep,
        });
        expect(lock.status).toBe("held");
        if (lock.status !== "held") return;
        inside++;
        most = Math.max(most, inside);
        entered.push(holder);
        // The critical section spans several of GitHub's round trips, as a reconcile does.
        await new Promise((resolve) => setTimeout(resolve, 30));
        inside--;
        await lock.release();
      }),
    );
    expect(most).toBe(1);
    expect(entered.sort()).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(await claims("race")).toEqual([]);
  });

  it("clears a claim whose holder died once it expires, and keeps a contender out of a live one", async () => {
    const { repo, sha } = await repoWithCommit("stale");
    const t0 = Date.parse("2026-11-27T10:00:00Z");
    let clock = t0;
    // A holder that names no workflow run: only its expiry ends its claim.
    const dead = reconcileLockRef(t0 + 180_000, "pushed-by-hand");
    await suite.sandbox.store.createRef("acme/stale", dead, sha, "autopilot[bot]");
    const options = {
      octokit: suite.octokit(),
      repo,
      holder: "run-2-1-next",
      sha,
      leaseMs: 180_000,
      log: quiet,
      now: () => clock,
      // Each pause moves the clock on by what it would wait.
      sleep: async (ms: number) => {
        clock += ms;
      },
    };
    // Within its lease the dead holder's claim counts: a minute's wait is not enough.
    const early = await takeReconcileLock({ ...options, waitMs: 60_000 });
    expect(early).toMatchObject({ status: "busy", holders: [dead] });
    expect(await claims("stale")).toEqual([dead]);
    // Waiting past its expiry: the claim is deleted and the lock taken.
    const later = await takeReconcileLock({ ...options, waitMs: 180_000 });
    expect(later.status).toBe("held");
    const mine = await claims("stale");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(/-run-2-1-next$/);
    if (later.status === "held") await later.release();
    expect(await claims("stale")).toEqual([]);
  });

  it("clears a live claim at once when the workflow run its holder named is gone", async () => {
    const { repo, sha } = await repoWithCommit("gone-run");
    const orphan = reconcileLockRef(Date.now() + 600_000, "run-424242-1-0a1b2c3d");
    await suite.sandbox.store.createRef("acme/gone-run", orphan, sha, "autopilot[bot]");
    const lock = await takeReconcileLock({
      octokit: suite.octokit(),
      repo,
      holder: "run-7-1-x",
      sha,
      leaseMs: 600_000,
      waitMs: 0,
      log: quiet,
    });
    expect(lock.status).toBe("held");
    const left = await claims("gone-run");
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/-run-7-1-x$/);
    if (lock.status === "held") await lock.release();
  });

  it("waits out GitHub's content-creation limit on its claim and its release instead of failing", async () => {
    const { repo, sha } = await repoWithCommit("limited");
    // A "minute" of 2 s with one write, used up by a write of the same account.
    suite.sandbox.faults.set({ contentLimit: { perMinute: 1, perHour: 500, minuteSeconds: 2 } });
    try {
      suite.sandbox.store.createIssue(repo, { title: "Task", body: "Do it.", author: "maintainer" });
      await suite.octokit().request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        owner: "acme",
        repo: "limited",
        issue_number: 1,
        body: "Uses up the minute.",
      });
      const waits: number[] = [];
      const lock = await takeReconcileLock({
        octokit: suite.octokit(),
        repo,
        holder: "run-5-1-x",
        sha,
        leaseMs: 60_000,
        waitMs: 60_000,
        log: quiet,
        sleep: async (ms) => {
          waits.push(ms);
          await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 2_500)));
        },
      });
      expect(lock.status).toBe("held");
      // It waited what GitHub's retry-after said, at least once, before its claim went through.
      expect(waits.length).toBeGreaterThan(0);
      expect(suite.sandbox.faults.stats.contentLimited).toBeGreaterThan(0);
      if (lock.status === "held") await lock.release();
      expect(await claims("limited")).toEqual([]);
    } finally {
      suite.sandbox.faults.clear();
    }
  });

  it("points its claim at the default branch's head when the job's commit is not in the repository", async () => {
    const { repo, sha } = await repoWithCommit("gone");
    const lock = await takeReconcileLock({
      octokit: suite.octokit(),
      repo,
      holder: "run-3-1-x",
      sha: "e".repeat(40),
      leaseMs: 60_000,
      waitMs: 0,
      log: quiet,
    });
    expect(lock.status).toBe("held");
    const [claim] = await suite.sandbox.store
      .listRefs("acme/gone")
      .then((refs) => refs.filter((r) => r.ref.startsWith(RECONCILE_LOCK_PREFIX)));
    expect(claim?.sha).toBe(sha);
    if (lock.status === "held") await lock.release();
  });

  it("says GitHub refused the claim (a ruleset restricting ref creation) rather than reconcile unguarded", async () => {
    const api = "https://api.github.test";
    const refusal = {
      message: "Repository rule violations found\n\nCannot create ref due to creations being restricted.",
    };
    // Refused at the job's commit, then (in case that commit was the trouble) at the default branch's head.
    const scope = nock(api)
      .get("/repos/acme/ruled/git/matching-refs/autopilot%2Freconcile")
      .reply(200, [])
      .post("/repos/acme/ruled/git/refs")
      .reply(422, refusal)
      .get("/repos/acme/ruled")
      .reply(200, { default_branch: "trunk" })
      .get("/repos/acme/ruled/git/ref/heads%2Ftrunk")
      .reply(200, { ref: "refs/heads/trunk", object: { sha: "a".repeat(40), type: "commit" } })
      .post("/repos/acme/ruled/git/refs", (body: { sha: string }) => body.sha === "a".repeat(40))
      .reply(422, refusal);
    const { createOctokit } = await import("../../src/github/transport/octokit.js");
    const lock = await takeReconcileLock({
      octokit: createOctokit({ auth: "t", baseUrl: api, retry: false, throttle: false }),
      repo: { owner: "acme", name: "ruled" },
      holder: "run-4-1-x",
      sha: "f".repeat(40),
      leaseMs: 60_000,
      waitMs: 0,
      log: quiet,
    });
    expect(lock.status).toBe("refused");
    if (lock.status === "refused") expect(lock.reason).toContain("creations being restricted");
    expect(scope.isDone()).toBe(true);
    nock.cleanAll();
  });
});
