/**
 * GraphQL `revertPullRequest` on the in-memory store (what the seeded simulation runs on, no git remote): the
 * revert is made as GitHub makes it — a commit on `revert-<number>-<head branch>` on top of the base branch, a
 * pull request from it authored by the caller, `Revert "<title>"` and `Reverts <repo>#<number>` — with the same
 * refusals but a conflict, which only the git remote can find (sandbox/emulator/graphql/pull-revert.ts).
 */
import { describe, expect, it } from "vitest";
import { revertPullRequest } from "../../sandbox/emulator/graphql/pull-revert.js";
import { SandboxStore } from "../../sandbox/emulator/store.js";

async function mergedPull() {
  const store = new SandboxStore();
  const repo = store.createRepo({ owner: "demo", name: "shop" });
  store.addUser("alice", { permission: "admin" });
  await store.createRef(repo.fullName, "refs/heads/autopilot/issue-1", "b".repeat(40), "alice");
  const pull = await store.createPull(repo.fullName, {
    title: "Task one (#1)",
    head: "autopilot/issue-1",
    base: "main",
    author: "alice",
  });
  await store.mergePull(repo.fullName, pull.number, {}, "alice");
  return { store, repo, pull: store.requirePull(repo.fullName, pull.number) };
}

describe("revertPullRequest without the git remote", () => {
  it("opens the revert pull request GitHub would, on a revert branch on top of the base", async () => {
    const { store, repo, pull } = await mergedPull();
    const revert = await revertPullRequest(store, repo, pull, "alice", {});
    expect(revert.title).toBe('Revert "Task one (#1)"');
    expect(revert.body).toBe(`Reverts demo/shop#${pull.number}`);
    expect(revert.pull).toMatchObject({
      head: { ref: `revert-${pull.number}-autopilot/issue-1` },
      base: { ref: "main" },
    });
    const head = await store.resolveRef(repo.fullName, `refs/heads/revert-${pull.number}-autopilot/issue-1`);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(head).not.toBe(await store.resolveRef(repo.fullName, "refs/heads/main"));
  });

  it("refuses a second revert while the revert branch exists, and a pull request not merged", async () => {
    const { store, repo, pull } = await mergedPull();
    await revertPullRequest(store, repo, pull, "alice", {});
    await expect(revertPullRequest(store, repo, pull, "alice", {})).rejects.toThrow(/already exists/);
    await store.createRef(repo.fullName, "refs/heads/autopilot/issue-2", "c".repeat(40), "alice");
    const open = await store.createPull(repo.fullName, {
      title: "Open",
      head: "autopilot/issue-2",
      base: "main",
      author: "alice",
    });
    await expect(
      revertPullRequest(store, repo, store.requirePull(repo.fullName, open.number), "alice", {}),
    ).rejects.toThrow(/is not merged/);
  });
});
