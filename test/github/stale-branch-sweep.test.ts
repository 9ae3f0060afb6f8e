/**
 * What the stale-branch sweep (`cleanup.staleBranchDays`) reads and deletes, on the sandbox: the snapshot lists
 * the task branches that exist with their commits (no request of its own), a skipped task (only the exclude
 * label, outside the pool) is seen, GitHub's record of pushes is read only for ended tasks' branches that exist
 * and only once per commit, and a branch someone pushed to after the snapshot is kept.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { deleteBranchAt } from "../../src/github/execution/ref-deletions.js";
import { createGateway, resetMemories } from "../../src/github/gateway.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const SHA = "a".repeat(40);
const OTHER = "b".repeat(40);
const ACTIVITY = "GET /repos/{owner}/{repo}/activity";
const L = DEFAULT_CONFIG.labels;
const sweepOn = { ...DEFAULT_CONFIG, cleanup: { ...DEFAULT_CONFIG.cleanup, staleBranchDays: 1 } };
const request = { settingsFor: () => snapshotSettings(sweepOn), permissionsFor: () => [] };

function endpointsSince(start: number): string[] {
  return suite.sandbox.requests.records
    .slice(start)
    .filter((r) => r.tokenKind !== "user")
    .map((r) => r.endpoint);
}

/** #1 timed out, #2 skipped (the exclude label only), #3 failed with its branch gone; #1's and #2's branches exist. */
async function endedTasks(name: string) {
  resetMemories();
  resetCircuits();
  const repo = { owner: "acme", name };
  const full = `acme/${name}`;
  const store = suite.sandbox.store;
  store.createRepo(repo);
  const bot = `${suite.sandbox.app.slug}[bot]`;
  for (const [n, label] of [
    [1, L.timeout],
    [2, L.exclude],
    [3, L.failed],
  ] as const) {
    store.createIssue(repo, { title: `Task ${n}`, body: "Do it.", author: "maintainer", labels: [label] });
  }
  for (const n of [1, 2]) await store.createRef(full, `refs/heads/autopilot/issue-${n}`, SHA, bot);
  await store.createRef(full, "refs/heads/unrelated", SHA, "maintainer");
  const gateway = createGateway({ client: suite.octokit(), repo, botLogin: bot });
  return { full, gateway, store };
}

describe("the stale-branch sweep's reads", () => {
  it("list the task branches with the snapshot, and see a skipped task outside the pool", async () => {
    const { gateway } = await endedTasks("listing");
    const { world } = await gateway.snapshot(request);
    expect(world.taskBranches).toEqual({ "autopilot/issue-1": SHA, "autopilot/issue-2": SHA });
    const skipped = world.issues.find((i) => i.number === 2);
    expect(skipped).toMatchObject({ state: "open", labels: [L.exclude] });
  });

  it("read the record only of existing branches, and not again while a branch stays at its commit", async () => {
    const { full, gateway, store } = await endedTasks("reads");
    let start = suite.sandbox.requests.records.length;
    const { world } = await gateway.snapshot(request);
    // #1 and #2 have branches; #3's is gone, so nothing is read for it.
    expect(endpointsSince(start).filter((e) => e === ACTIVITY)).toHaveLength(2);
    expect(Object.keys(world.branchActivity ?? {}).sort()).toEqual([
      "autopilot/issue-1",
      "autopilot/issue-2",
    ]);

    start = suite.sandbox.requests.records.length;
    const again = await gateway.snapshot(request);
    expect(endpointsSince(start).filter((e) => e === ACTIVITY)).toHaveLength(0);
    expect(again.world.branchActivity?.["autopilot/issue-1"]?.entries).toHaveLength(1);

    // A push moves #1's branch: its record is read again, and names the pusher.
    await store.updateRef(full, "refs/heads/autopilot/issue-1", OTHER, true, "maintainer");
    start = suite.sandbox.requests.records.length;
    const third = await gateway.snapshot(request);
    expect(endpointsSince(start).filter((e) => e === ACTIVITY)).toHaveLength(1);
    expect(third.world.branchActivity?.["autopilot/issue-1"]?.entries).toHaveLength(2);
  });
});

describe("the sweep's deletion", () => {
  it("keeps a branch someone pushed to after the snapshot (and says nothing), and deletes one still where it was", async () => {
    const { full, gateway, store } = await endedTasks("race");
    await gateway.snapshot(request);
    // Between the snapshot and the deletion, a person pushes to #1's branch.
    await store.updateRef(full, "refs/heads/autopilot/issue-1", OTHER, false, "maintainer");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([
      { type: "deleteBranch", branch: "autopilot/issue-1", expectOid: SHA },
      { type: "comment", issue: 1, body: "Deleted.", afterDeleting: "autopilot/issue-1" },
      { type: "deleteBranch", branch: "autopilot/issue-2", expectOid: SHA },
      { type: "comment", issue: 2, body: "Deleted.", afterDeleting: "autopilot/issue-2" },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["skipped", "skipped", "done", "done"]);
    // Never the unconditional REST delete; no comment on the task whose branch was kept.
    expect(endpointsSince(start)).toEqual([
      "POST /graphql",
      "POST /graphql",
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    ]);
    const refs = (await store.listRefs(full)).map((r) => `${r.ref}@${r.sha}`);
    expect(refs).toContain(`refs/heads/autopilot/issue-1@${OTHER}`);
    expect(refs.some((r) => r.startsWith("refs/heads/autopilot/issue-2@"))).toBe(false);
  });
});

describe("the sweep's deletion without the repository's node id", () => {
  it("reads the branch first over REST and deletes it only at the judged commit", async () => {
    const { full, store } = await endedTasks("rest");
    const ctx = {
      client: suite.octokit(),
      repo: { owner: "acme", name: "rest" },
      log: { info() {}, warn() {}, error() {}, debug() {} } as never,
      world: null,
      facts: null,
      write: <T>(call: () => Promise<T>) => call(),
      read: <T>(call: () => Promise<T>) => call(),
    };
    await store.updateRef(full, "refs/heads/autopilot/issue-1", OTHER, false, "maintainer");
    expect(await deleteBranchAt(ctx, "autopilot/issue-1", SHA)).toEqual({
      deleted: false,
      kept: "not at aaaaaaa any more",
    });
    expect(await deleteBranchAt(ctx, "autopilot/issue-2", SHA)).toEqual({ deleted: true });
    expect(await deleteBranchAt(ctx, "autopilot/issue-3", SHA)).toEqual({
      deleted: false,
      kept: "already gone",
    });
    const refs = (await store.listRefs(full)).map((r) => r.ref);
    expect(refs).toContain("refs/heads/autopilot/issue-1");
    expect(refs).not.toContain("refs/heads/autopilot/issue-2");
  });
});
