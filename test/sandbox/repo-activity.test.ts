/**
 * The sandbox's "List repository activities" (https://docs.github.com/rest/repos/repos#list-repository-activities)
 * as GitHub documents it: a merge is `pr_merge` (or `merge_queue_merge`), not a push; an activity's `id` is the
 * same in every listing; pages go by `before`/`after` cursors from the Link header, not by page number (the
 * sandbox refuses `page`, which this endpoint does not take); an activity type outside the documented ones is
 * refused.
 */
import { describe, expect, it } from "vitest";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const SHA = (c: string) => c.repeat(40);

interface Activity {
  id: number;
  ref: string;
  activity_type: string;
  actor: { login: string } | null;
}

async function repoWithHistory(name: string) {
  const repo = { owner: "acme", name };
  const full = `acme/${name}`;
  const store = suite.sandbox.store;
  store.createRepo(repo);
  await store.createRef(full, "refs/heads/feature", SHA("1"), "maintainer");
  await store.updateRef(full, "refs/heads/feature", SHA("2"), false, "maintainer");
  await store.updateRef(full, "refs/heads/feature", SHA("3"), true, "maintainer");
  const pr = await store.createPull(full, {
    title: "Feature",
    head: "feature",
    base: "main",
    author: "maintainer",
  });
  await store.mergePull(full, pr.number, { method: "merge" }, "maintainer");
  return { octokit: suite.octokit(), repo };
}

describe("List repository activities on the sandbox", () => {
  it("reports a merge as pr_merge, and each activity under one id whatever the filter", async () => {
    const { octokit, repo } = await repoWithHistory("types");
    const all = (
      await octokit.request("GET /repos/{owner}/{repo}/activity", { owner: repo.owner, repo: repo.name })
    ).data as Activity[];
    const onMain = all.filter((a) => a.ref === "refs/heads/main");
    expect(onMain.map((a) => a.activity_type)).toContain("pr_merge");
    expect(all.filter((a) => a.ref === "refs/heads/feature").map((a) => a.activity_type)).toEqual([
      "force_push",
      "push",
      "branch_creation",
    ]);
    const merges = (
      await octokit.request("GET /repos/{owner}/{repo}/activity", {
        owner: repo.owner,
        repo: repo.name,
        activity_type: "pr_merge",
      })
    ).data as Activity[];
    expect(merges.map((a) => a.id)).toEqual(
      onMain.filter((a) => a.activity_type === "pr_merge").map((a) => a.id),
    );
    const ids = all.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("pages by before/after cursors, and refuses a page number", async () => {
    const { octokit, repo } = await repoWithHistory("pages");
    const ask = (query: Record<string, string | number>) =>
      octokit.request("GET /repos/{owner}/{repo}/activity", {
        owner: repo.owner,
        repo: repo.name,
        ref: "feature",
        per_page: 2,
        ...query,
      });
    const first = await ask({});
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? "")?.[1];
    expect(next).toBeDefined();
    const after = new URL(next!).searchParams.get("after");
    expect(after).toBeTruthy();
    expect(new URL(next!).searchParams.has("page")).toBe(false);
    const second = await ask({ after: after! });
    const types = [...(first.data as Activity[]), ...(second.data as Activity[])].map((a) => a.activity_type);
    expect(types).toEqual(["force_push", "push", "branch_creation"]);
    // `page` is not a parameter of this endpoint: the sandbox refuses it, so a client paging by number fails
    // here rather than on GitHub.
    await expect(ask({ page: 2 })).rejects.toMatchObject({ status: 422 });
    const prev = /<([^>]+)>; rel="prev"/.exec(second.headers.link ?? "")?.[1];
    const before = new URL(prev!).searchParams.get("before");
    const back = await ask({ before: before! });
    expect((back.data as Activity[]).map((a) => a.id)).toEqual((first.data as Activity[]).map((a) => a.id));
  });

  it("refuses an activity type GitHub does not document", async () => {
    const { octokit, repo } = await repoWithHistory("strict");
    await expect(
      octokit.request("GET /repos/{owner}/{repo}/activity", {
        owner: repo.owner,
        repo: repo.name,
        activity_type: "merge",
      } as never),
    ).rejects.toMatchObject({ status: 422 });
  });
});
