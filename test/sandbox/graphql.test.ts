import { graphql as graphqlClient } from "@octokit/graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  COMMENTS_BY_ID_QUERY,
  ISSUE_NODE_ID_QUERY,
  OLDER_COMMENTS_QUERY,
  PIN_ISSUE_MUTATION,
  SNAPSHOT_QUERY,
  issueStatesQuery,
} from "../../src/github/queries.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const owner = "acme";
const repo = "widgets";
const full = `${owner}/${repo}`;

let sandbox: Sandbox;

/** A value inside a GraphQL answer, by dotted path (`issues.nodes.0.number`). */
function dig(value: unknown, path: string): unknown {
  let node = value;
  for (const key of path.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function list(value: unknown, path: string): unknown[] {
  const found = dig(value, path);
  if (!Array.isArray(found)) throw new Error(`${path} is not a list`);
  return found;
}

interface GraphqlBody {
  data?: Record<string, unknown>;
  errors?: Array<{ message: string; type?: string }>;
}

async function post(
  query: string,
  variables: Record<string, unknown> = {},
  token = sandbox.installationToken(),
): Promise<GraphqlBody> {
  const response = await fetch(sandbox.graphqlUrl, {
    method: "POST",
    headers: { authorization: `bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphqlBody;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  const { store } = sandbox;
  store.createRepo({ owner, name: repo });
  store.addUser("alice", { permission: "write" });
  store.setFile(full, ".github/autopilot.yml", "maxParallel: 2\n");
  const epic = store.createIssue(full, { title: "Epic", author: "alice" });
  const a = store.createIssue(full, {
    title: "Task A",
    body: "do A",
    author: "alice",
    labels: ["autopilot:ready", "critical"],
  });
  const b = store.createIssue(full, { title: "Task B", author: "alice" });
  store.addLabels(full, b.number, ["autopilot:ready"], "alice");
  store.addSubIssue(full, epic.number, a.number, "alice");
  store.addSubIssue(full, epic.number, b.number, "alice");
  store.addBlockedBy(full, b.number, a.number, "alice");
  store.createComment(full, a.number, "first", "alice");
  const progress = store.createComment(full, a.number, "progress", "autopilot[bot]");
  store.addReaction(full, { commentId: progress.id }, "rocket", "alice");
  await store.createRef(full, "refs/heads/autopilot/issue-2", "a".repeat(40), "autopilot[bot]");
  const pr = await store.createPull(full, {
    title: "Task A (#2)",
    head: "autopilot/issue-2",
    base: "main",
    author: "autopilot[bot]",
    body: "Closes #2",
  });
  store.addLabels(full, pr.number, ["autopilot:review"], "autopilot[bot]");
  store.createCheckRun(full, {
    name: "ci",
    headSha: "a".repeat(40),
    conclusion: "failure",
    output: { summary: "1 failing test" },
    detailsUrl: "http://ci/1",
  });
  store.createStatus(full, "a".repeat(40), { state: "success", context: "lint", creator: "autopilot[bot]" });
  store.createReview(full, pr.number, { author: "alice", event: "REQUEST_CHANGES", body: "please fix" });
  store.closeIssue(
    full,
    store.createIssue(full, { title: "Old", author: "alice", labels: ["autopilot:ready"] }).number,
    "alice",
  );
});

afterAll(async () => {
  await sandbox?.stop();
});

describe("GraphQL", () => {
  it("validates and answers the product's snapshot query from the store", async () => {
    const body = await post(SNAPSHOT_QUERY, {
      owner,
      name: repo,
      labels: ["autopilot:ready", "autopilot:in-progress", "autopilot:review"],
      configExpression: "HEAD:.github/autopilot.yml",
      botLogin: "autopilot[bot]",
      withRepo: true,
      withIssues: true,
      withPulls: true,
      findTracking: true,
      withTrackingNumber: false,
      trackingNumber: 0,
      issuesFirst: 50,
      taskBranchRefs: "refs/heads/autopilot/",
    });
    expect(body.errors).toBeUndefined();
    const repository = dig(body.data, "repository");
    // Refs under a prefix are named relative to it, as GitHub's `refs(refPrefix:)` does.
    expect(list(repository, "taskBranches.nodes").map((r) => dig(r, "name"))).toEqual(["issue-2"]);
    expect(dig(repository, "defaultBranchRef")).toEqual({
      name: "main",
      target: { oid: expect.stringMatching(/^[0-9a-f]{40}$/) },
    });
    expect(dig(repository, "owner")).toEqual({ __typename: "User", login: "acme" });
    expect(dig(repository, "configFile")).toEqual({ text: "maxParallel: 2\n" });
    const issues = list(repository, "issues.nodes");
    expect(issues.map((i) => dig(i, "number"))).toEqual([2, 3]);
    const [a, b] = issues;
    expect(a).toMatchObject({
      title: "Task A",
      body: "do A",
      state: "OPEN",
      stateReason: null,
      author: { login: "alice" },
      parent: { number: 1 },
    });
    // Names and node ids (a state label moves by id in one request: src/github/execution/executor.ts).
    expect(dig(a, "labels.nodes")).toEqual([
      { id: expect.stringMatching(/^LA_/), name: "autopilot:ready" },
      { id: expect.stringMatching(/^LA_/), name: "critical" },
    ]);
    expect(dig(a, "timelineItems.nodes.0")).toMatchObject({
      actor: { login: "alice" },
      label: { name: "autopilot:ready" },
    });
    expect(list(a, "comments.nodes").map((c) => [dig(c, "body"), dig(c, "author.login")])).toEqual([
      ["first", "alice"],
      ["progress", "autopilot"],
    ]);
    expect(list(a, "comments.nodes.1.reactionGroups").find((g) => dig(g, "content") === "ROCKET")).toEqual({
      content: "ROCKET",
      viewerHasReacted: false,
    });
    expect(list(b, "timelineItems.nodes").map((n) => dig(n, "actor.login"))).toEqual(["alice"]);
    expect(
      list(repository, "recentlyClosed.nodes").map((i) => [dig(i, "title"), dig(i, "stateReason")]),
    ).toEqual([["Old", "COMPLETED"]]);

    const pull = dig(repository, "pullRequests.nodes.0");
    expect(pull).toMatchObject({
      number: 4,
      headRefName: "autopilot/issue-2",
      headRefOid: "a".repeat(40),
      baseRefName: "main",
      mergeable: "MERGEABLE",
      isDraft: false,
    });
    expect(dig(pull, "labels.nodes")).toEqual([
      { id: expect.stringMatching(/^LA_/), name: "autopilot:review" },
    ]);
    const commit = dig(pull, "commits.nodes.0.commit");
    expect(dig(commit, "oid")).toBe("a".repeat(40));
    expect(dig(commit, "statusCheckRollup.state")).toBe("FAILURE");
    expect(dig(commit, "statusCheckRollup.contexts.nodes")).toEqual([
      {
        __typename: "CheckRun",
        name: "ci",
        status: "COMPLETED",
        conclusion: "FAILURE",
        summary: "1 failing test",
        detailsUrl: "http://ci/1",
        checkSuite: { app: { slug: "autopilot" } },
      },
      { __typename: "StatusContext", context: "lint", state: "SUCCESS", description: null, targetUrl: null },
    ]);
    expect(dig(pull, "reviews.nodes")).toEqual([
      expect.objectContaining({
        author: { login: "alice" },
        state: "CHANGES_REQUESTED",
        body: "please fix",
        commit: { oid: "a".repeat(40) },
      }),
    ]);
    // GitHub's score of this document: its nested connections at these page sizes (graphql-cost.test.ts); the
    // newest comments of closed issues and pull requests (commands on a merged task) took it from 9 to 10.
    expect(body.data?.rateLimit).toMatchObject({ cost: 10 });
    sandbox.assertNoValidationFailures();
    expect(sandbox.requests.summary().byEndpoint["POST /graphql"]).toBe(1);
  });

  it("answers the dependency-state query and blocked-by, sub-issue summary fields", async () => {
    const states = await post(issueStatesQuery([1, 4]), { owner, name: repo });
    expect(states.errors).toBeUndefined();
    const r = dig(states.data, "repository");
    expect(dig(r, "i1")).toMatchObject({ __typename: "Issue", number: 1, state: "OPEN" });
    expect(dig(r, "i4")).toMatchObject({ __typename: "PullRequest", number: 4, pullState: "OPEN" });

    const deps = await post(`query { repository(owner: "acme", name: "widgets") {
      issue(number: 3) { blockedBy(first: 10) { nodes { number state } } issueDependenciesSummary { blockedBy totalBlockedBy } }
      epic: issue(number: 1) { subIssues(first: 10) { totalCount nodes { number state } } subIssuesSummary { total completed } }
    } viewer { login } }`);
    expect(deps.errors).toBeUndefined();
    const d = dig(deps.data, "repository");
    expect(dig(d, "issue.blockedBy.nodes")).toEqual([{ number: 2, state: "OPEN" }]);
    expect(dig(d, "issue.issueDependenciesSummary")).toEqual({ blockedBy: 1, totalBlockedBy: 1 });
    expect(dig(d, "epic.subIssues")).toEqual({
      totalCount: 2,
      nodes: [
        { number: 2, state: "OPEN" },
        { number: 3, state: "OPEN" },
      ],
    });
    expect(dig(deps.data, "viewer.login")).toBe("autopilot[bot]");
    sandbox.assertNoValidationFailures();
  });

  it("paginates connections with cursors and GitHub's limits", async () => {
    const page1 = await post(
      `{ repository(owner: "acme", name: "widgets") { issues(first: 2, states: [OPEN]) { totalCount pageInfo { hasNextPage endCursor } nodes { number } } } }`,
    );
    const c1 = dig(page1.data, "repository.issues");
    expect(dig(c1, "totalCount")).toBe(3);
    expect(list(c1, "nodes").map((n) => dig(n, "number"))).toEqual([1, 2]);
    expect(dig(c1, "pageInfo.hasNextPage")).toBe(true);
    const page2 = await post(
      `query($after: String) { repository(owner: "acme", name: "widgets") { issues(first: 2, states: [OPEN], after: $after) { pageInfo { hasNextPage } nodes { number } } } }`,
      {
        after: dig(c1, "pageInfo.endCursor"),
      },
    );
    expect(dig(page2.data, "repository.issues")).toEqual({
      pageInfo: { hasNextPage: false },
      nodes: [{ number: 3 }],
    });
    const unbounded = await post(
      `{ repository(owner: "acme", name: "widgets") { issues(states: [OPEN]) { nodes { number } } } }`,
    );
    expect(unbounded.errors?.[0]?.message).toContain("You must provide a `first` or `last` value");
    const tooMany = await post(
      `{ repository(owner: "acme", name: "widgets") { issues(first: 101) { nodes { number } } } }`,
    );
    expect(tooMany.errors?.[0]?.message).toContain("exceeds the `first` limit of 100 records");
  });

  it("lists refs under a prefix, named relative to it, and reads older comments and comments by node id", async () => {
    await sandbox.store.createRef(
      full,
      "refs/autopilot/dispatch/issue-2-attempt-1",
      "a".repeat(40),
      "autopilot[bot]",
    );
    const refs = await post(
      `{ repository(owner: "acme", name: "widgets") { refs(refPrefix: "refs/autopilot/dispatch/", first: 100) { pageInfo { hasNextPage } nodes { name prefix } } } }`,
    );
    expect(dig(refs.data, "repository.refs")).toEqual({
      pageInfo: { hasNextPage: false },
      nodes: [{ name: "issue-2-attempt-1", prefix: "refs/autopilot/dispatch/" }],
    });
    const latest = await post(
      `{ repository(owner: "acme", name: "widgets") { issue(number: 2) { comments(last: 1) { pageInfo { hasPreviousPage startCursor } nodes { id body } } } } }`,
    );
    const window = dig(latest.data, "repository.issue.comments");
    expect(dig(window, "pageInfo.hasPreviousPage")).toBe(true);
    const older = await post(OLDER_COMMENTS_QUERY, {
      owner,
      name: repo,
      number: 2,
      before: dig(window, "pageInfo.startCursor"),
    });
    expect(list(older.data, "repository.issue.comments.nodes").map((n) => dig(n, "body"))).toEqual(["first"]);
    const progressId = dig(list(window, "nodes")[0], "id");
    const byId = await post(COMMENTS_BY_ID_QUERY, { ids: [progressId] });
    expect(list(byId.data, "nodes")).toEqual([
      expect.objectContaining({ __typename: "IssueComment", body: "progress", issue: { number: 2 } }),
    ]);
  });

  it("pins issues with the mutation and fails like GitHub at the fourth", async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3, 5]) {
      const body = await post(ISSUE_NODE_ID_QUERY, { owner, name: repo, number: n });
      ids.push(String(dig(body.data, "repository.issue.id")));
    }
    for (const id of ids.slice(0, 3)) {
      const pinned = await post(PIN_ISSUE_MUTATION, { issueId: id });
      expect(pinned.errors).toBeUndefined();
      expect(dig(pinned.data, "pinIssue.issue.isPinned")).toBe(true);
    }
    const fourth = await post(PIN_ISSUE_MUTATION, { issueId: ids[3] });
    expect(fourth.errors?.[0]?.message).toContain("can't pin more than 3");
    expect(sandbox.store.listPinnedIssues(full).map((i) => i.number)).toEqual([1, 2, 3]);
  });

  it("names who last edited a comment, not its author, and no editor before an edit", async () => {
    const comment = sandbox.store.createComment(full, 1, "written by the bot", "autopilot[bot]");
    const query = `query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {
      issue(number: 1) { comments(last: 1) { nodes { lastEditedAt editor { login } author { login } } } } } }`;
    const before = await post(query, { owner, name: repo });
    expect(dig(before.data, "repository.issue.comments.nodes.0")).toMatchObject({
      lastEditedAt: null,
      editor: null,
    });
    sandbox.store.updateComment(full, comment.id, "rewritten by a maintainer", "alice");
    const after = await post(query, { owner, name: repo });
    const node = dig(after.data, "repository.issue.comments.nodes.0") as Record<string, unknown>;
    expect(node.editor).toEqual({ login: "alice" });
    expect(node.author).toEqual({ login: "autopilot" });
    expect(typeof node.lastEditedAt).toBe("string");
  });

  it("gives each inline review comment a conversation that the PR's author or a writer resolves", async () => {
    const { store } = sandbox;
    store.addUser("reader", { permission: "read" });
    const pr = store.listPulls(full).find((p) => p.pull.head.ref === "autopilot/issue-2")!;
    store.createReview(full, pr.number, {
      author: "alice",
      event: "COMMENT",
      body: "inline",
      comments: [{ path: "src/a.js", line: 3, body: "rename this" }],
    });
    const query = `query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) {
      pullRequest(number: $number) { reviewThreads(last: 20) { nodes { id isResolved path
        comments(last: 10) { nodes { author { login } body path } } } } } } }`;
    const threads = async () =>
      list(
        (await post(query, { owner, name: repo, number: pr.number })).data,
        "repository.pullRequest.reviewThreads.nodes",
      );
    const first = store
      .listPulls(full)
      .find((p) => p.number === pr.number)!
      .pull.reviews.at(-1)!.comments[0]!;
    // A reply (REST's reply endpoint) joins the conversation; a reply to it goes to the conversation's first.
    const reply = store.replyToReviewComment(full, pr.number, first.id, "still not renamed", "alice");
    store.replyToReviewComment(full, pr.number, reply.id, "now it is", "alice");
    const [thread, ...others] = await threads();
    expect(others).toEqual([]);
    expect(thread).toMatchObject({
      isResolved: false,
      path: "src/a.js",
      comments: {
        nodes: [
          { author: { login: "alice" }, body: "rename this", path: "src/a.js" },
          { body: "still not renamed", path: "src/a.js" },
          { body: "now it is", path: "src/a.js" },
        ],
      },
    });
    const resolve =
      "mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { isResolved } } }";
    const id = dig(thread, "id");
    const refused = await post(resolve, { id }, sandbox.userToken("reader"));
    expect(refused.errors?.[0]?.message).toMatch(/does not have the correct permissions/);
    const resolved = await post(resolve, { id }, sandbox.userToken("alice"));
    expect(dig(resolved.data, "resolveReviewThread.thread.isResolved")).toBe(true);
    expect((await threads())[0]).toMatchObject({ isResolved: true });
  });

  it("works through @octokit/graphql", async () => {
    const client = graphqlClient.defaults({
      baseUrl: sandbox.url,
      headers: { authorization: `token ${sandbox.userToken("alice")}` },
    });
    const result = await client<{ viewer: { login: string } }>("{ viewer { login } }");
    expect(result.viewer.login).toBe("alice");
  });

  it("rejects invalid documents with errors and records them", async () => {
    const bad = await post(
      `{ repository(owner: "acme", name: "widgets") { issues(first: 1) { nodes { numbr } } } }`,
    );
    expect(bad.data).toBeUndefined();
    expect(bad.errors?.[0]?.message).toContain('Cannot query field "numbr" on type "Issue"');
    const unparsable = await post("{ repository(");
    expect(unparsable.errors?.[0]?.message).toContain("Syntax Error");
    expect(sandbox.validationFailures.map((f) => f.kind)).toEqual(["graphql", "graphql"]);
    expect(sandbox.validationFailures[0]?.message).toContain("numbr");
    sandbox.validationFailures.splice(0);
    const anonymous = await fetch(sandbox.graphqlUrl, {
      method: "POST",
      body: JSON.stringify({ query: "{ viewer { login } }" }),
    });
    expect(anonymous.status).toBe(401);
  });
});
