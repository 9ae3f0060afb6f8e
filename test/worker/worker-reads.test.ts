/**
 * The worker's reads that go as one GraphQL query (src/github/worker-github.ts, src/github/worker-queries.ts):
 * on the sandbox, which answers GraphQL from GitHub's schema and charges as GitHub does. Each read must answer
 * exactly what the REST reads it replaces answer (the claim and the task-text check decide on it), see every
 * comment, cost one request, and fall back to REST when GitHub does not answer.
 */
import { parse, validate } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkerGitHub, type WorkerGitHub } from "../../src/github/worker-github.js";
import {
  LABEL_FOR_REVIEW_MUTATION,
  RESOLVED_REVIEW_COMMENTS_QUERY,
  WORKER_CLAIM_QUERY,
  workerTaskQuery,
} from "../../src/github/worker-queries.js";
import { loadGraphqlSchema } from "../../sandbox/emulator/graphql.js";
import { graphqlCost } from "../../sandbox/emulator/graphql/graphql-cost.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const STATE_LABELS = [
  "autopilot:review",
  "autopilot:blocked",
  "autopilot:needs-human",
  "autopilot:in-progress",
];

function since(start: number) {
  return suite.sandbox.requests.records
    .slice(start)
    .filter((r) => r.tokenKind !== "user")
    .map((r) => r.endpoint);
}

let repos = 0;
/** A fresh repository with task #1 (in progress, a person's question on it) and the state labels. */
function taskRepo(): { repo: { owner: string; name: string }; github: () => WorkerGitHub } {
  const repo = { owner: "acme", name: `reads-${++repos}` };
  const { store } = suite.sandbox;
  store.createRepo(repo);
  for (const name of STATE_LABELS) store.createLabel(repo, { name });
  store.createIssue(repo, {
    title: "Add a greeting",
    body: "Create hello.txt.\r\nWith a greeting.",
    labels: ["autopilot:in-progress"],
    author: "maintainer",
  });
  store.createComment(repo, 1, "Which greeting?", "maintainer");
  return {
    repo,
    github: () => createWorkerGitHub(suite.octokit(), { owner: repo.owner, repo: repo.name }),
  };
}

describe("the worker's GraphQL documents", () => {
  let check: (query: string) => string[];
  beforeAll(async () => {
    const schema = await loadGraphqlSchema();
    check = (query) => validate(schema, parse(query)).map((e) => e.message);
  });

  it("fit GitHub's schema and cost one point each", () => {
    for (const document of [
      WORKER_CLAIM_QUERY,
      workerTaskQuery(4),
      workerTaskQuery(0),
      LABEL_FOR_REVIEW_MUTATION,
      RESOLVED_REVIEW_COMMENTS_QUERY,
    ]) {
      expect(check(document)).toEqual([]);
      expect(graphqlCost(parse(document), { comments: true }, null)).toBe(1);
    }
  });
});

describe("the claim's read", () => {
  it("is one request for every comment and the token's own account, answering what the REST reads answer", async () => {
    const { github } = taskRepo();
    const marker = await github().createComment(1, "<!-- autopilot:worker-result running -->");
    const client = github();
    const start = suite.sandbox.requests.records.length;
    const comments = await client.listIssueCommentsAndSelf(1);
    const self = await client.getSelf();
    expect(since(start)).toEqual(["POST /graphql"]);
    // What the claim decides on (whose comment, which one first) is what REST says.
    const rest = await github().listIssueComments(1);
    expect(comments).toEqual(rest);
    expect(comments.find((c) => c.id === marker.id)?.authorId).toBe(self.id);
    expect(comments.find((c) => c.id === marker.id)?.authorType).toBe("Bot");
    expect(self.login).toBe(`${suite.sandbox.app.slug}[bot]`);
  });

  it("sees every comment of a thread longer than one page", async () => {
    const { repo, github } = taskRepo();
    for (let i = 0; i < 120; i++) suite.sandbox.store.createComment(repo, 1, `note ${i}`, "maintainer");
    const client = github();
    const start = suite.sandbox.requests.records.length;
    const comments = await client.listIssueCommentsAndSelf(1);
    expect(comments).toHaveLength(121);
    expect(since(start)).toEqual([
      "POST /graphql",
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
    ]);
    expect(comments).toEqual(await github().listIssueComments(1));
  });

  it("falls back to the REST listing when GitHub does not answer the query", async () => {
    const { github } = taskRepo();
    const client = github();
    const octokit = suite.octokit();
    const refusing = createWorkerGitHub(
      Object.assign(octokit, {
        graphql: Object.assign(
          async () => {
            throw new Error("Something went wrong while executing your query");
          },
          { defaults: octokit.graphql.defaults, endpoint: octokit.graphql.endpoint },
        ),
      }) as typeof octokit,
      { owner: "acme", repo: `reads-${repos}` },
    );
    const start = suite.sandbox.requests.records.length;
    const comments = await refusing.listIssueCommentsAndSelf(1);
    expect(since(start)).toEqual(["GET /repos/{owner}/{repo}/issues/{issue_number}/comments"]);
    expect(comments).toEqual(await client.listIssueComments(1));
  });
});

describe("the task issue after the claim", () => {
  it("is read with every comment in one request, as getIssue and listIssueComments read them", async () => {
    const { github } = taskRepo();
    const client = github();
    const start = suite.sandbox.requests.records.length;
    const read = await client.readIssueWithComments(1, STATE_LABELS);
    expect(since(start)).toEqual(["POST /graphql"]);
    expect(read.issue).toEqual(await github().getIssue(1));
    expect(read.comments).toEqual(await github().listIssueComments(1));
  });

  it("is left to the caller's REST read when GitHub does not answer the query, which is not asked again", async () => {
    const { github } = taskRepo();
    const expectedComments = await github().listIssueComments(1);
    const expectedIssue = await github().getIssue(1);
    const octokit = suite.octokit();
    let queries = 0;
    const refusing = createWorkerGitHub(
      Object.assign(octokit, {
        graphql: Object.assign(
          async () => {
            queries++;
            throw new Error("Something went wrong while executing your query");
          },
          { defaults: octokit.graphql.defaults, endpoint: octokit.graphql.endpoint },
        ),
      }) as typeof octokit,
      { owner: "acme", repo: `reads-${repos}` },
    );
    const start = suite.sandbox.requests.records.length;
    const read = await refusing.readIssueWithComments(1, STATE_LABELS);
    expect(read.issue).toBeNull();
    expect(read.comments).toEqual(expectedComments);
    expect(await refusing.readIssueAndLabels(1, STATE_LABELS)).toEqual(expectedIssue);
    expect(queries).toBe(1);
    expect(since(start)).toEqual([
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      "GET /repos/{owner}/{repo}/issues/{issue_number}",
    ]);
  });

  it("is read fresh: an edit made after the claim's read is what the check sees", async () => {
    const { repo, github } = taskRepo();
    const client = github();
    await client.listIssueCommentsAndSelf(1);
    suite.sandbox.store.updateIssue(repo, 1, { body: "Delete everything." }, "maintainer");
    expect((await client.readIssueWithComments(1, STATE_LABELS)).issue?.body).toBe("Delete everything.");
    suite.sandbox.store.updateIssue(repo, 1, { title: "Renamed" }, "maintainer");
    expect((await client.readIssueAndLabels(1, STATE_LABELS)).title).toBe("Renamed");
  });

  it("lets the review transition go in one request: the PR labelled, the task moved, a person's label kept", async () => {
    const { repo, github } = taskRepo();
    const { store } = suite.sandbox;
    await store.createRef(repo, "refs/heads/autopilot/issue-1", "a".repeat(40), "maintainer");
    const client = github();
    await client.readIssueWithComments(1, STATE_LABELS);
    const pull = await client.findOpenPull("autopilot/issue-1");
    expect(pull).toBeNull();
    const created = await client.createPull({
      title: "Add a greeting (#1)",
      body: "Closes #1",
      head: "autopilot/issue-1",
      base: "main",
    });
    store.addLabels(repo, 1, ["bug"], "maintainer");
    const start = suite.sandbox.requests.records.length;
    await client.labelForReview(created.number, 1, "autopilot:review", "autopilot:in-progress");
    expect(since(start)).toEqual(["POST /graphql"]);
    expect([...(store.getIssue(repo, 1)?.labels ?? [])].sort()).toEqual(["autopilot:review", "bug"]);
    expect([...(store.getIssue(repo, created.number)?.labels ?? [])]).toEqual(["autopilot:review"]);
  });

  it("moves the task through REST when a label's node id is unknown (a label that does not exist yet)", async () => {
    const { repo, github } = taskRepo();
    const { store } = suite.sandbox;
    await store.createRef(repo, "refs/heads/autopilot/issue-1", "a".repeat(40), "maintainer");
    const client = github();
    await client.readIssueWithComments(1, ["autopilot:in-progress", "autopilot:shipped"]);
    const created = await client.createPull({
      title: "Add a greeting (#1)",
      body: "Closes #1",
      head: "autopilot/issue-1",
      base: "main",
    });
    const start = suite.sandbox.requests.records.length;
    await client.labelForReview(created.number, 1, "autopilot:shipped", "autopilot:in-progress");
    // REST creates the label on the PR; its answer names the id, and the task's move is then one request.
    expect(since(start)).toEqual([
      "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
      "POST /graphql",
    ]);
    expect([...(store.getIssue(repo, 1)?.labels ?? [])]).toEqual(["autopilot:shipped"]);
  });
});
