/**
 * `commits: signed` on the worker's side (src/worker/checkout/publish-plan.ts): what GitHub is asked to make is
 * read from the worker's own objects — the commits the remote lacks, each with its exact bytes — and the branch
 * moves onto GitHub's copy only when that copy holds the same tree.
 */
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Git } from "../../src/worker/checkout/private-git.js";
import { adoptPublished, publishPlan } from "../../src/worker/checkout/publish-plan.js";
import { git, remoteAndClone } from "./fixtures/real.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const BRANCH = "autopilot/issue-7";
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]);

/** A workspace on the task branch with two commits the remote lacks, and the worker's git over its `.git`. */
async function twoCommits() {
  const { root, remote, workspace } = await remoteAndClone({ "README.md": "hi\n", "old.txt": "old\n" });
  roots.push(root);
  git(workspace, "checkout", "-q", "-b", BRANCH);
  await mkdir(join(workspace, "src"));
  await writeFile(join(workspace, "src", "a.txt"), "\ufeffhéllo\n");
  await writeFile(join(workspace, "logo.png"), BINARY);
  await writeFile(join(workspace, "run.sh"), "#!/bin/sh\n");
  await chmod(join(workspace, "run.sh"), 0o755);
  git(workspace, "add", "-A");
  git(workspace, "commit", "-qm", "first\n\nAutopilot-Task: #7");
  const first = git(workspace, "rev-parse", "HEAD");
  await writeFile(join(workspace, "src", "a.txt"), "changed\n");
  git(workspace, "rm", "-q", "old.txt");
  git(workspace, "commit", "-qam", "second");
  const second = git(workspace, "rev-parse", "HEAD");
  const worker = new Git({ gitDir: join(workspace, ".git"), stateDir: join(root, "state") });
  return { root, remote, workspace, worker, first, second };
}

describe("what commits: signed publishes", { timeout: 60_000 }, () => {
  it("lists every commit the remote lacks, oldest first, with each changed entry's exact bytes", async () => {
    const { worker, first, second, workspace } = await twoCommits();
    const plan = await publishPlan(worker, BRANCH, second);
    expect(plan.remoteHead).toBeNull();
    expect(plan.commits.map((c) => c.sha)).toEqual([first, second]);
    const [one, two] = plan.commits;
    expect(one?.message).toBe("first\n\nAutopilot-Task: #7\n");
    expect(one?.parents).toEqual([git(workspace, "rev-parse", "main")]);
    expect(one?.baseTree).toBe(git(workspace, "rev-parse", "main^{tree}"));
    expect(one?.tree).toBe(git(workspace, "rev-parse", `${first}^{tree}`));
    const byPath = new Map(one?.entries.map((e) => [e.path, e]));
    expect(Buffer.from(byPath.get("logo.png")?.base64 ?? "", "base64")).toEqual(BINARY);
    expect(Buffer.from(byPath.get("src/a.txt")?.base64 ?? "", "base64").toString("utf8")).toBe(
      "\ufeffhéllo\n",
    );
    expect(byPath.get("run.sh")?.mode).toBe("100755");
    expect(byPath.get("logo.png")?.sha).toBe(git(workspace, "rev-parse", `${first}:logo.png`));
    expect(two?.parents).toEqual([first]);
    expect(two?.entries.find((e) => e.path === "old.txt")).toEqual({
      path: "old.txt",
      mode: "100644",
      type: "blob",
      sha: null,
    });
  });

  it("starts after what the remote already has, and names the remote's head", async () => {
    const { worker, first, second, workspace, remote } = await twoCommits();
    git(workspace, "push", "-q", remote, `${first}:refs/heads/${BRANCH}`);
    await worker.fetchBranch(BRANCH);
    const plan = await publishPlan(worker, BRANCH, second);
    expect(plan.remoteHead).toBe(first);
    expect(plan.commits.map((c) => c.sha)).toEqual([second]);
  });

  it("moves the branch onto GitHub's copy of the same tree, and refuses a copy of another", async () => {
    const { worker, first, second, workspace, remote } = await twoCommits();
    git(workspace, "push", "-q", remote, `${first}:refs/heads/${BRANCH}`);
    // GitHub's copy of `second`: the same tree (its objects brought under a scratch ref), another id.
    git(workspace, "push", "-q", remote, `${second}:refs/scratch/objects`);
    const copy = git(remote, "commit-tree", `${second}^{tree}`, "-p", first, "-m", "second");
    git(remote, "update-ref", `refs/heads/${BRANCH}`, copy);
    await adoptPublished(worker, { branch: BRANCH, published: copy, local: second });
    expect(git(workspace, "rev-parse", `refs/heads/${BRANCH}`)).toBe(copy);

    const other = git(remote, "commit-tree", `${first}^{tree}`, "-p", copy, "-m", "other");
    git(remote, "update-ref", `refs/heads/${BRANCH}`, other);
    await expect(adoptPublished(worker, { branch: BRANCH, published: other, local: second })).rejects.toThrow(
      /does not hold the tree the worker committed/,
    );
    expect(git(workspace, "rev-parse", `refs/heads/${BRANCH}`)).toBe(copy);
  });
});
