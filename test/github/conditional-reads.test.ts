/**
 * Conditional reads (src/github/conditional-reads.ts): a repeated GET carries the ETag of its last answer, and
 * GitHub's free 304 stands in for the same answer. Measured on the sandbox, which charges as GitHub does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcile } from "../../src/app/reconcile-repo.js";
import { resetCircuits } from "../../src/github/circuit.js";
import { conditionalReadCache, sendReadsConditionally } from "../../src/github/conditional-reads.js";
import { resetMemories } from "../../src/github/gateway.js";
import { createOctokit } from "../../src/github/octokit.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/github/index.js";

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
  sandbox.store.addUser("maintainer", { permission: "write" });
});
afterAll(async () => {
  await sandbox.stop();
});

const octokitFor = () =>
  createOctokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url, retry: false, throttle: false });

describe("conditional reads", () => {
  it("answer a repeated read from a free 304 with the same data, and a changed one in full", async () => {
    const repo = { owner: "acme", name: "etags" };
    sandbox.store.createRepo(repo);
    const issue = sandbox.store.createIssue(repo, {
      title: "Task",
      body: "Do it.",
      labels: [],
      author: "maintainer",
    });
    const octokit = octokitFor();
    sendReadsConditionally(octokit);
    const read = () => octokit.rest.issues.get({ owner: "acme", repo: "etags", issue_number: issue.number });
    const start = sandbox.requests.records.length;
    const first = await read();
    const second = await read();
    expect(second.status).toBe(200);
    expect(second.data).toEqual(first.data);
    sandbox.store.updateIssue(repo, issue.number, { body: "Do it twice." }, "maintainer");
    const third = await read();
    expect(third.data.body).toBe("Do it twice.");
    const records = sandbox.requests.records.slice(start);
    expect(records.map((r) => [r.status, r.charged])).toEqual([
      [200, true],
      [304, false],
      [200, true],
    ]);
  });

  it("leave an idle reconcile tick one charged request: the snapshot query (the runs listing is a free 304)", async () => {
    resetMemories();
    resetCircuits();
    const repo = { owner: "acme", name: "idle" };
    sandbox.store.createRepo(repo);
    sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
    sandbox.store.createIssue(repo, {
      title: "Parked",
      body: "Waits for a person.",
      labels: ["autopilot:blocked"],
      author: "maintainer",
    });
    const options = {
      octokit: octokitFor(),
      repo,
      botLogin: `${sandbox.app.slug}[bot]`,
      baseUrl: sandbox.url,
    };
    for (let i = 0; i < 3; i++) await reconcile(options);
    const start = sandbox.requests.records.length;
    // A fresh client per tick, as Probot builds one per webhook: the cache outlives it.
    await reconcile({ ...options, octokit: octokitFor() });
    const tick = sandbox.requests.records.slice(start);
    expect(tick.filter((r) => r.charged).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(tick.filter((r) => !r.charged).map((r) => [r.endpoint, r.status])).toEqual([
      ["GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", 304],
    ]);
    expect(conditionalReadCache().notModified).toBeGreaterThan(0);
  });
});
