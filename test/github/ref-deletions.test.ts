/**
 * The refs one reconcile deletes (merged task branches, ended tasks' dispatch locks) go in one GraphQL
 * `updateRefs` request (src/github/execution/ref-deletions.ts), which GitHub applies wholly or not at all; when it is
 * refused, each goes by REST as before and nothing is left behind. On the sandbox, which models `updateRefs`.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import type { Effect } from "../../src/core/effects.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { createGateway, resetMemories } from "../../src/github/gateway.js";
import { readDiscardedBranches } from "../../src/github/snapshot/discarded-branches.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const SHA = "a".repeat(40);

function since(start: number) {
  return suite.sandbox.requests.records.slice(start).filter((r) => r.tokenKind !== "user");
}

async function refsOf(repo: { owner: string; name: string }): Promise<string[]> {
  return (await suite.sandbox.store.listRefs(`${repo.owner}/${repo.name}`))
    .map((r) => r.ref)
    .filter((r) => r !== "refs/heads/main")
    .sort();
}

/** Two tasks whose PRs were closed, with their branches and dispatch locks, and a gateway that took its snapshot. */
async function twoEndedTasks(name: string) {
  resetMemories();
  resetCircuits();
  const repo = { owner: "acme", name };
  const full = `acme/${name}`;
  const store = suite.sandbox.store;
  store.createRepo(repo);
  for (const n of [1, 2]) {
    store.createIssue(repo, { title: `Task ${n}`, body: "Do it.", author: "maintainer" });
  }
  for (const n of [1, 2]) {
    await store.createRef(full, `refs/heads/autopilot/issue-${n}`, SHA, "maintainer");
    await store.createRef(full, `refs/autopilot/dispatch/issue-${n}-attempt-1`, SHA, "maintainer");
    const pr = await store.createPull(full, {
      title: `Task ${n} (#${n})`,
      head: `autopilot/issue-${n}`,
      base: "main",
      author: "maintainer",
    });
    store.closeIssue(full, pr.number, "maintainer", "completed");
  }
  const gateway = createGateway({
    client: suite.octokit(),
    repo,
    botLogin: `${suite.sandbox.app.slug}[bot]`,
  });
  await gateway.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  const effects: Effect[] = [
    { type: "deleteBranch", branch: "autopilot/issue-1" },
    { type: "releaseDispatchLocks", issue: 1, attempts: 1 },
    { type: "deleteBranch", branch: "autopilot/issue-2" },
    { type: "releaseDispatchLocks", issue: 2, attempts: 1 },
  ];
  return { repo, full, gateway, effects };
}

describe("the refs a reconcile deletes", () => {
  it("go in one request when the snapshot saw each of them", async () => {
    const { repo, gateway, effects } = await twoEndedTasks("together");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute(effects);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "done", "done"]);
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(await refsOf(repo)).toEqual([]);
  });

  it("go one by one when GitHub refuses them together (one was deleted since the snapshot), and none is left", async () => {
    const { repo, full, gateway, effects } = await twoEndedTasks("refused");
    // A person deletes a branch after the snapshot: updateRefs is atomic, so GitHub deletes none of them.
    await suite.sandbox.store.deleteRef(full, "refs/heads/autopilot/issue-2", "maintainer");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute(effects);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "skipped", "done"]);
    expect(since(start).map((r) => r.endpoint)).toEqual([
      "POST /graphql",
      "DELETE /repos/{owner}/{repo}/git/refs/{ref}",
      "DELETE /repos/{owner}/{repo}/git/refs/{ref}",
      "DELETE /repos/{owner}/{repo}/git/refs/{ref}",
      "DELETE /repos/{owner}/{repo}/git/refs/{ref}",
    ]);
    expect(await refsOf(repo)).toEqual([]);
  });

  it("keep a merged branch someone pushed to after the merge, in the batch and alone", async () => {
    const { repo, full, gateway } = await twoEndedTasks("pushed-after");
    const guarded: Effect[] = [
      { type: "deleteBranch", branch: "autopilot/issue-1", expectOid: SHA },
      { type: "releaseDispatchLocks", issue: 1, attempts: 1 },
      { type: "deleteBranch", branch: "autopilot/issue-2", expectOid: SHA },
      { type: "releaseDispatchLocks", issue: 2, attempts: 1 },
    ];
    // A person pushes a commit of their own to #2's branch after the snapshot: it was never merged.
    const later = "b".repeat(40);
    await suite.sandbox.store.updateRef(full, "refs/heads/autopilot/issue-2", later, true, "maintainer");
    const report = await gateway.execute(guarded);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "skipped", "done"]);
    expect(await refsOf(repo)).toEqual(["refs/heads/autopilot/issue-2"]);
    expect(await suite.sandbox.store.resolveRef(full, "refs/heads/autopilot/issue-2")).toBe(later);
  });

  it("still go in one request with their conditions when no branch moved", async () => {
    const { repo, gateway } = await twoEndedTasks("guarded-together");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([
      { type: "deleteBranch", branch: "autopilot/issue-1", expectOid: SHA },
      { type: "releaseDispatchLocks", issue: 1, attempts: 1 },
      { type: "deleteBranch", branch: "autopilot/issue-2", expectOid: SHA },
      { type: "releaseDispatchLocks", issue: 2, attempts: 1 },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "done", "done"]);
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(await refsOf(repo)).toEqual([]);
  });

  it("are all or nothing on the sandbox, as GitHub documents updateRefs: one refused update changes no ref", async () => {
    const { repo } = await twoEndedTasks("atomic");
    const before = await refsOf(repo);
    const node = suite.sandbox.store.getRepo(repo)!.nodeId;
    await expect(
      suite.octokit().graphql(
        `mutation($repository: ID!, $refs: [RefUpdate!]!) {
          updateRefs(input: { repositoryId: $repository, refUpdates: $refs }) { clientMutationId }
        }`,
        {
          repository: node,
          refs: [
            { name: "refs/heads/autopilot/issue-1", afterOid: "0".repeat(40) },
            { name: "refs/heads/autopilot/issue-9", afterOid: "0".repeat(40) },
          ],
        },
      ),
    ).rejects.toMatchObject({ errors: expect.any(Array) });
    expect(await refsOf(repo)).toEqual(before);
  });

  it("skip a lock the complete lock list does not hold, without a request", async () => {
    const { repo, full, gateway } = await twoEndedTasks("no-lock");
    await suite.sandbox.store.deleteRef(full, "refs/autopilot/dispatch/issue-1-attempt-1", "maintainer");
    await gateway.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([{ type: "releaseDispatchLocks", issue: 1, attempts: 1 }]);
    expect(report.outcomes[0]).toMatchObject({ status: "skipped", detail: "no lock left" });
    expect(since(start)).toEqual([]);
    expect(await refsOf(repo)).toContain("refs/autopilot/dispatch/issue-2-attempt-1");
  });

  it("leave out a branch GitHub already deleted: the snapshot says the merged PR's head is gone", async () => {
    const { full, gateway } = await twoEndedTasks("gone");
    await suite.sandbox.store.deleteRef(full, "refs/heads/autopilot/issue-1", "maintainer");
    const { world } = await gateway.snapshot({
      settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
      permissionsFor: () => [],
    });
    const heads = Object.fromEntries(world.pulls.map((p) => [p.headRef, p.headBranchExists]));
    expect(heads).toEqual({ "autopilot/issue-1": false, "autopilot/issue-2": true });
  });
});

describe("the branches an unmerged task's rollback is deleting", () => {
  it("are read as there or gone (GitHub's 404 for a missing ref), so the task waits until its branch is gone", async () => {
    const repo = { owner: "acme", name: "discarded" };
    const full = "acme/discarded";
    suite.sandbox.store.createRepo(repo);
    await suite.sandbox.store.createRef(full, "refs/heads/autopilot/issue-1", SHA, "maintainer");
    const read = <T>(call: () => Promise<T>) => call();
    const exists = await readDiscardedBranches({ client: suite.octokit(), repo, read }, [
      "autopilot/issue-1",
      "autopilot/issue-2",
    ]);
    expect(exists).toEqual({ "autopilot/issue-1": true, "autopilot/issue-2": false });
  });
});
