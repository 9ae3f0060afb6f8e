/**
 * Red team, controller: what the sandbox must model for the attacks to be real — a fork's pull request on a
 * branch named like a task branch, a symlink in a PR's tree, and a merge refused once the head moved past the
 * SHA the controller checked.
 */
import { describe, expect, it } from "vitest";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";
import { forkBranchRef, StoreError } from "../../sandbox/emulator/store.js";
import { startGitHost } from "../sandbox/git-host.js";

describe("sandbox support for the controller's verifications", () => {
  it("opens a fork PR from `user:branch` whose head lives in the fork, apart from the task branch of the same name", async () => {
    const host = await startGitHost();
    try {
      host.store.addUser("alice", { permission: "admin" });
      host.store.addUser("mallory", { permission: "read" });
      await host.git.seedRepo("demo", "shop", { "README.md": "# shop\n" });
      const main = (await host.store.resolveRef("demo/shop", "main"))!;
      await host.store.createRef("demo/shop", "refs/heads/autopilot/issue-1", main, "alice");
      const real = await host.git.seedRepo(
        "demo",
        "shop",
        { "a.js": "ok\n" },
        { branch: "autopilot/issue-1" },
      );
      const own = await host.store.createPull("demo/shop", {
        title: "Real",
        head: "autopilot/issue-1",
        base: "main",
        author: "alice",
      });

      // Without a branch in her fork, GitHub refuses the head.
      await expect(
        host.store.createPull("demo/shop", {
          title: "Evil",
          head: "mallory:autopilot/issue-1",
          base: "main",
          author: "mallory",
        }),
      ).rejects.toBeInstanceOf(StoreError);

      const ref = forkBranchRef("mallory", "autopilot/issue-1");
      await host.git.remote.createRef("demo", "shop", ref, main);
      const evil = await host.git.remote.seedRepo("demo", "shop", { "a.js": "evil\n" }, { branch: ref });
      const forked = await host.store.createPull("demo/shop", {
        title: "Evil",
        head: "mallory:autopilot/issue-1",
        base: "main",
        author: "mallory",
      });
      expect(forked.pull).toMatchObject({
        headRepo: "mallory/shop",
        head: { ref: "autopilot/issue-1", sha: evil },
      });
      expect(host.store.getPull("demo/shop", own.number)?.pull?.head.sha).toBe(real);
      await host.store.refreshPull("demo/shop", forked.number);
      expect(host.store.getPull("demo/shop", forked.number)?.pull?.head.sha).toBe(evil);
    } finally {
      await host.stop();
    }
  });

  it("lists a symlink with mode 120000 in the head tree, and refuses a merge at a SHA the head moved past", async () => {
    const host = await startGitHost();
    try {
      host.store.addUser("alice", { permission: "admin" });
      await host.git.seedRepo("demo", "shop", { "README.md": "# shop\n" });
      const main = (await host.store.resolveRef("demo/shop", "main"))!;
      await host.store.createRef("demo/shop", "refs/heads/topic", main, "alice");
      const checked = await host.git.seedRepo("demo", "shop", { "a.js": "a\n" }, { branch: "topic" });
      const pull = await host.store.createPull("demo/shop", {
        title: "T",
        head: "topic",
        base: "main",
        author: "alice",
      });

      // A push after the check adds a symlink (git plumbing: the sandbox's helpers only write plain files).
      const cwd = host.git.remote.repoPath("demo", "shop");
      const g = async (args: string[], input?: string) => {
        const r = await run("git", args, { cwd, env: gitEnv(), ...(input !== undefined ? { input } : {}) });
        return r.stdout.trim();
      };
      const blob = await g(["hash-object", "-w", "--stdin"], "/etc/passwd");
      const index = `${cwd}/tmp-index`;
      const env = { ...gitEnv(), GIT_INDEX_FILE: index };
      await run("git", ["read-tree", checked], { cwd, env });
      await run("git", ["update-index", "--add", "--cacheinfo", `120000,${blob},link`], { cwd, env });
      const tree = (await run("git", ["write-tree"], { cwd, env })).stdout.trim();
      const moved = await g(["commit-tree", tree, "-p", checked, "-m", "link"]);
      await g(["update-ref", "refs/heads/topic", moved, checked]);
      await run("rm", ["-f", index], { cwd });

      const entries = await host.store.treeEntries("demo/shop", moved);
      expect(entries?.find((e) => e.path === "link")).toMatchObject({ mode: "120000", type: "blob" });
      expect(entries?.find((e) => e.path === "a.js")).toMatchObject({ mode: "100644" });

      await expect(
        host.store.mergePull("demo/shop", pull.number, { method: "squash", sha: checked }, "alice"),
      ).rejects.toMatchObject({ status: 409 });
      expect(host.store.getPull("demo/shop", pull.number)?.pull?.merged).toBe(false);
    } finally {
      await host.stop();
    }
  });
});
