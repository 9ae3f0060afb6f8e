/**
 * GitHub's own merge mechanisms in the sandbox: auto-merge (refused when the repository does not allow it or the
 * pull request could merge now; merging once an approval arrives), the merge queue (refused on a branch without
 * one; merging only once the required check passes on the merge group's commit; dequeuing when it fails), and
 * "Update branch" bringing a strict-policy pull request up to date.
 */
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, repoSettings, startSandbox } from "../../sandbox/emulator/index.js";
import { mergeAutomationIdle } from "../../sandbox/emulator/merge/merge-automation.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { rejection, silent } from "./rest-fixture.js";

const owner = "acme";
let sandbox: Sandbox;
let git: SandboxGit;
let api: Octokit;
let alice: Octokit;
let repoCount = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ validateResponses: true });
  git = await attachGit(sandbox);
  sandbox.store.addUser("alice", { permission: "write" });
  sandbox.store.addUser("bob", { permission: "write" });
  sandbox.store.addUser("mallory", { permission: "read" });
  api = new Octokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url, log: silent });
  alice = new Octokit({ auth: sandbox.userToken("alice"), baseUrl: sandbox.url, log: silent });
});

afterAll(async () => {
  await git?.stop();
  await sandbox?.stop();
});

/** A fresh repository with one open pull request from `feature`. */
async function repoWithPull(): Promise<{
  repo: string;
  full: string;
  number: number;
  head: string;
  id: string;
}> {
  const repo = `m${++repoCount}`;
  const full = `${owner}/${repo}`;
  sandbox.store.createRepo({ owner, name: repo });
  for (const [login, permission] of [
    ["alice", "write"],
    ["bob", "write"],
    ["mallory", "read"],
  ] as const)
    sandbox.store.setPermission(full, login, permission);
  const base = await git.seedRepo(owner, repo, { "README.md": "hello\n" });
  await api.git.createRef({ owner, repo, ref: "refs/heads/feature", sha: base });
  const head = await git.seedRepo(owner, repo, { "src/a.ts": "export {};\n" }, { branch: "feature" });
  const pr = await api.pulls.create({ owner, repo, title: "Work", head: "feature", base: "main" });
  return { repo, full, number: pr.data.number, head, id: pr.data.node_id };
}

async function graphqlError(
  client: Octokit,
  query: string,
  variables: Record<string, unknown>,
): Promise<string> {
  try {
    await client.graphql(query, variables);
  } catch (error) {
    return ((error as { errors?: { message: string }[] }).errors ?? []).map((e) => e.message).join("; ");
  }
  throw new Error("expected the mutation to fail");
}

const ENABLE = `mutation($id: ID!, $mm: PullRequestMergeMethod, $oid: GitObjectID) {
  enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mm, expectedHeadOid: $oid }) {
    pullRequest { number autoMergeRequest { enabledAt enabledBy { login } mergeMethod } }
  }
}`;

const ENQUEUE = `mutation($id: ID!, $oid: GitObjectID) {
  enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $oid }) {
    mergeQueueEntry { id position state pullRequest { number isInMergeQueue } }
  }
}`;

/** The webhooks of one event and action about a repository's pull request (any merge group of the repository). */
function deliveries(event: string, action: string, number: number, full: string) {
  return sandbox.webhooks.deliveries.filter(
    (d) =>
      d.event === event &&
      d.action === action &&
      (d.payload.repository as { full_name: string }).full_name === full &&
      (d.payload.number === number || event === "merge_group"),
  );
}

describe("auto-merge", () => {
  it("is refused while the repository does not allow it", async () => {
    const { repo, id } = await repoWithPull();
    repoSettings.setBranchProtection(sandbox.store, `${owner}/${repo}`, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    expect(await graphqlError(alice, ENABLE, { id })).toBe("Auto merge is not allowed for this repository");
    expect((await api.repos.get({ owner, repo })).data.allow_auto_merge).toBe(false);
  });

  it("is refused on a pull request that could merge now (clean status)", async () => {
    const { repo, full, id } = await repoWithPull();
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    expect((await api.repos.get({ owner, repo })).data.allow_auto_merge).toBe(true);
    expect(await graphqlError(alice, ENABLE, { id })).toBe("Pull request Pull request is in clean status");
  });

  it("is refused to a reader and on a head other than the expected one", async () => {
    const { full, id } = await repoWithPull();
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    repoSettings.setBranchProtection(sandbox.store, full, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    const mallory = new Octokit({ auth: sandbox.userToken("mallory"), baseUrl: sandbox.url, log: silent });
    expect(await graphqlError(mallory, ENABLE, { id })).toContain("does not have the correct permissions");
    expect(await graphqlError(alice, ENABLE, { id, oid: "0".repeat(40) })).toContain("expected head OID");
  });

  it("merges, as the person who enabled it and with their method, once an approval arrives — not before", async () => {
    const { repo, full, number, id } = await repoWithPull();
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    repoSettings.setBranchProtection(sandbox.store, full, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    const enabled = (await alice.graphql(ENABLE, { id, mm: "SQUASH" })) as {
      enablePullRequestAutoMerge: {
        pullRequest: { autoMergeRequest: { enabledBy: { login: string }; mergeMethod: string } };
      };
    };
    expect(enabled.enablePullRequestAutoMerge.pullRequest.autoMergeRequest).toMatchObject({
      enabledBy: { login: "alice" },
      mergeMethod: "SQUASH",
    });
    const rest = await api.pulls.get({ owner, repo, pull_number: number });
    expect(rest.data.auto_merge).toMatchObject({ merge_method: "squash", enabled_by: { login: "alice" } });
    expect(deliveries("pull_request", "auto_merge_enabled", number, full)).toHaveLength(1);

    // GitHub reports the unmet requirement as the merge state.
    expect(rest.data.mergeable_state).toBe("blocked");
    const status = (await alice.graphql(
      `query($id: ID!) { node(id: $id) { ... on PullRequest { mergeStateStatus } } }`,
      { id },
    )) as { node: { mergeStateStatus: string } };
    expect(status.node.mergeStateStatus).toBe("BLOCKED");
    // A reader's approval does not meet the requirement: nothing merges.
    sandbox.store.createReview(full, number, { author: "mallory", event: "APPROVE" });
    await mergeAutomationIdle(sandbox.store);
    expect((await api.pulls.get({ owner, repo, pull_number: number })).data.state).toBe("open");

    const bob = new Octokit({ auth: sandbox.userToken("bob"), baseUrl: sandbox.url, log: silent });
    await bob.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    await mergeAutomationIdle(sandbox.store);
    const merged = await api.pulls.get({ owner, repo, pull_number: number });
    expect(merged.data).toMatchObject({ merged: true, merged_by: { login: "alice" }, auto_merge: null });
    const commit = await api.repos.getCommit({ owner, repo, ref: merged.data.merge_commit_sha! });
    expect(commit.data.parents).toHaveLength(1); // squashed
    sandbox.assertNoValidationFailures();
  });

  it("is disabled when someone without write access pushes to the head", async () => {
    const { full, number, id } = await repoWithPull();
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    repoSettings.setBranchProtection(sandbox.store, full, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    await alice.graphql(ENABLE, { id });
    // A writer's push keeps it.
    await git.seedRepo(
      owner,
      full.split("/")[1]!,
      { "src/b.ts": "1\n" },
      { branch: "feature", pusher: "bob" },
    );
    await mergeAutomationIdle(sandbox.store);
    expect(deliveries("pull_request", "auto_merge_disabled", number, full)).toHaveLength(0);
    await git.seedRepo(
      owner,
      full.split("/")[1]!,
      { "src/c.ts": "2\n" },
      { branch: "feature", pusher: "mallory" },
    );
    await mergeAutomationIdle(sandbox.store);
    const disabled = deliveries("pull_request", "auto_merge_disabled", number, full);
    expect(disabled).toHaveLength(1);
    expect(disabled[0]!.payload.reason).toContain("without write access");
    const data = (await alice.graphql(
      `query($id: ID!) { node(id: $id) { ... on PullRequest { autoMergeRequest { enabledAt } } } }`,
      { id },
    )) as { node: { autoMergeRequest: unknown } };
    expect(data.node.autoMergeRequest).toBeNull();
  });

  it("is disabled when the author, without write access, switches the base branch", async () => {
    const { repo, full, head } = await repoWithPull();
    await api.git.createRef({
      owner,
      repo,
      ref: "refs/heads/develop",
      sha: (await api.repos.getBranch({ owner, repo, branch: "main" })).data.commit.sha,
    });
    await api.git.createRef({ owner, repo, ref: "refs/heads/mallory-work", sha: head });
    const pull = await sandbox.store.createPull(full, {
      title: "Mine",
      head: "mallory-work",
      base: "main",
      author: "mallory",
    });
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    repoSettings.setBranchProtection(sandbox.store, full, "main", {
      requiredChecks: [],
      requiredApprovals: 1,
    });
    await alice.graphql(ENABLE, { id: pull.pull!.nodeId });
    const mallory = new Octokit({ auth: sandbox.userToken("mallory"), baseUrl: sandbox.url, log: silent });
    await mallory.pulls.update({ owner, repo, pull_number: pull.number, base: "develop" });
    await mergeAutomationIdle(sandbox.store);
    const disabled = deliveries("pull_request", "auto_merge_disabled", pull.number, full);
    expect(disabled.map((d) => d.payload.reason)).toEqual([
      "base branch changed by a user without write access",
    ]);
  });
});

describe("the merge queue", () => {
  async function queuedRepo() {
    const pr = await repoWithPull();
    repoSettings.addRuleset(sandbox.store, pr.full, {
      branches: ["main"],
      rules: [{ type: "merge_queue", parameters: { merge_method: "MERGE" } }],
    });
    repoSettings.setBranchProtection(sandbox.store, pr.full, "main", {
      requiredChecks: ["build"],
      requiredApprovals: 0,
    });
    sandbox.store.createCheckRun(pr.full, {
      name: "build",
      headSha: pr.head,
      status: "completed",
      conclusion: "success",
    });
    return pr;
  }

  it("takes in a pull request whose auto-merge requirements are met, and lands its merge group", async () => {
    const { repo, full, number, id } = await repoWithPull();
    repoSettings.setAllowAutoMerge(sandbox.store, full, true);
    repoSettings.addRuleset(sandbox.store, full, {
      branches: ["~DEFAULT_BRANCH"],
      rules: [
        { type: "merge_queue", parameters: { merge_method: "SQUASH" } },
        { type: "pull_request", parameters: { required_approving_review_count: 1 } },
      ],
    });
    await alice.graphql(ENABLE, { id });
    await mergeAutomationIdle(sandbox.store);
    expect(deliveries("pull_request", "enqueued", number, full)).toHaveLength(0);
    const bob = new Octokit({ auth: sandbox.userToken("bob"), baseUrl: sandbox.url, log: silent });
    await bob.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    await mergeAutomationIdle(sandbox.store);
    expect(deliveries("pull_request", "enqueued", number, full)).toHaveLength(1);
    const group = deliveries("merge_group", "checks_requested", number, full)[0]!.payload.merge_group as {
      head_sha: string;
    };
    // No required checks: the group lands as soon as it is built, squashed as the queue says.
    const merged = await api.pulls.get({ owner, repo, pull_number: number });
    expect(merged.data).toMatchObject({ merged: true, merged_by: { login: "alice" } });
    expect((await api.repos.getBranch({ owner, repo, branch: "main" })).data.commit.sha).toBe(group.head_sha);
    expect((await api.repos.getCommit({ owner, repo, ref: group.head_sha })).data.parents).toHaveLength(1);
  });

  it("refuses to enqueue on a branch without a merge queue", async () => {
    const { id } = await repoWithPull();
    expect(await graphqlError(alice, ENQUEUE, { id })).toBe(
      "The merge queue is not enabled for the main branch.",
    );
  });

  it("merges a queued pull request only once the required check passes on the merge group's commit", async () => {
    const { repo, full, number, id, head } = await queuedRepo();
    const result = (await alice.graphql(ENQUEUE, { id, oid: head })) as {
      enqueuePullRequest: { mergeQueueEntry: { position: number; pullRequest: { isInMergeQueue: boolean } } };
    };
    expect(result.enqueuePullRequest.mergeQueueEntry).toMatchObject({
      position: 1,
      pullRequest: { isInMergeQueue: true },
    });
    await mergeAutomationIdle(sandbox.store);
    expect(deliveries("pull_request", "enqueued", number, full)).toHaveLength(1);
    const requested = deliveries("merge_group", "checks_requested", number, full);
    expect(requested).toHaveLength(1);
    const group = requested[0]!.payload.merge_group as {
      head_sha: string;
      head_ref: string;
      base_ref: string;
    };
    expect(group.head_ref).toBe(`refs/heads/gh-readonly-queue/main/pr-${number}-${head}`);
    expect(group.base_ref).toBe("refs/heads/main");
    const entry = (await alice.graphql(
      `query($id: ID!) { node(id: $id) { ... on PullRequest { mergeQueueEntry { state position } } } }`,
      { id },
    )) as { node: { mergeQueueEntry: { state: string } } };
    expect(entry.node.mergeQueueEntry.state).toBe("AWAITING_CHECKS");
    const queue = (await alice.graphql(
      `query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {
        autoMergeAllowed mergeQueue(branch: "main") { entries(first: 5) { nodes { position pullRequest { number } } } }
      } }`,
      { owner, name: repo },
    )) as { repository: { autoMergeAllowed: boolean; mergeQueue: { entries: { nodes: unknown[] } } } };
    expect(queue.repository).toEqual({
      autoMergeAllowed: false,
      mergeQueue: { entries: { nodes: [{ position: 1, pullRequest: { number } }] } },
    });

    // The check on the pull request's head passed long ago; the group's commit has none yet: no merge.
    expect((await api.pulls.get({ owner, repo, pull_number: number })).data.state).toBe("open");
    sandbox.store.createCheckRun(full, {
      name: "build",
      headSha: group.head_sha,
      status: "completed",
      conclusion: "success",
    });
    await mergeAutomationIdle(sandbox.store);
    const merged = await api.pulls.get({ owner, repo, pull_number: number });
    expect(merged.data).toMatchObject({ merged: true, merged_by: { login: "alice" } });
    // What landed is the commit the check ran on.
    expect((await api.repos.getBranch({ owner, repo, branch: "main" })).data.commit.sha).toBe(group.head_sha);
    expect(
      await git.remote.resolveRef(owner, repo, `refs/heads/gh-readonly-queue/main/pr-${number}-${head}`),
    ).toBeNull();
    sandbox.assertNoValidationFailures();
  });

  it("dequeues the pull request, leaving it open, when the group's required check fails", async () => {
    const { repo, full, number, id } = await queuedRepo();
    await alice.graphql(ENQUEUE, { id });
    await mergeAutomationIdle(sandbox.store);
    const requested = deliveries("merge_group", "checks_requested", number, full);
    const sha = (requested[0]!.payload.merge_group as { head_sha: string }).head_sha;
    sandbox.store.createCheckRun(full, {
      name: "build",
      headSha: sha,
      status: "completed",
      conclusion: "failure",
    });
    await mergeAutomationIdle(sandbox.store);
    const pull = await api.pulls.get({ owner, repo, pull_number: number });
    expect(pull.data).toMatchObject({ state: "open", merged: false });
    const dequeued = deliveries("pull_request", "dequeued", number, full);
    expect(dequeued.map((d) => d.payload.reason)).toEqual(["CI_FAILURE"]);
    const data = (await alice.graphql(
      `query($id: ID!) { node(id: $id) { ... on PullRequest { isInMergeQueue mergeQueueEntry { id } } } }`,
      { id },
    )) as { node: { isInMergeQueue: boolean; mergeQueueEntry: unknown } };
    expect(data.node).toEqual({ isInMergeQueue: false, mergeQueueEntry: null });
  });
});

describe("update-branch", () => {
  it("brings a strict-policy pull request up to date; it merges once its checks pass again", async () => {
    const { repo, full, number, head } = await repoWithPull();
    repoSettings.setBranchProtection(sandbox.store, full, "main", {
      requiredChecks: ["build"],
      requiredApprovals: 0,
      strict: true,
    });
    sandbox.store.createCheckRun(full, {
      name: "build",
      headSha: head,
      status: "completed",
      conclusion: "success",
    });
    await git.seedRepo(owner, repo, { "OTHER.md": "moved on\n" });
    const refused = await rejection(api.pulls.merge({ owner, repo, pull_number: number }));
    expect(refused.status).toBe(405);
    expect((await api.pulls.get({ owner, repo, pull_number: number })).data.mergeable_state).toBe("behind");

    const stale = await rejection(
      api.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: "0".repeat(40) }),
    );
    expect(stale.status).toBe(422);
    const updated = await api.pulls.updateBranch({
      owner,
      repo,
      pull_number: number,
      expected_head_sha: head,
    });
    expect(updated.status).toBe(202);
    expect(updated.data.message).toBe("Updating pull request branch.");
    const pull = await api.pulls.get({ owner, repo, pull_number: number });
    const newHead = pull.data.head.sha;
    expect(newHead).not.toBe(head);
    expect(
      sandbox.webhooks.deliveries.some(
        (d) => d.event === "pull_request" && d.action === "synchronize" && d.payload.after === newHead,
      ),
    ).toBe(true);
    // Nothing new on the base any more.
    expect((await rejection(api.pulls.updateBranch({ owner, repo, pull_number: number }))).status).toBe(422);

    sandbox.store.createCheckRun(full, {
      name: "build",
      headSha: newHead,
      status: "completed",
      conclusion: "success",
    });
    expect((await api.pulls.get({ owner, repo, pull_number: number })).data.mergeable_state).toBe("clean");
    expect((await api.pulls.merge({ owner, repo, pull_number: number })).data.merged).toBe(true);
    sandbox.assertNoValidationFailures();
  });
});
