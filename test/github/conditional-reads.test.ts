/**
 * Conditional reads (src/github/transport/conditional-reads.ts): a repeated GET carries the ETag of its last answer, and
 * GitHub's free 304 stands in for the same answer. Measured on the sandbox, which charges as GitHub does.
 */
import { describe, expect, it } from "vitest";
import { reconcile } from "../../src/app/reconcile-repo.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import {
  conditionalReadCache,
  sendReadsConditionally,
} from "../../src/github/transport/conditional-reads.js";
import { resetMemories } from "../../src/github/gateway.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const octokitFor = () => suite.octokit();

describe("conditional reads", () => {
  it("answer a repeated read from a free 304 with the same data, and a changed one in full", async () => {
    const repo = { owner: "acme", name: "etags" };
    suite.sandbox.store.createRepo(repo);
    const issue = suite.sandbox.store.createIssue(repo, {
      title: "Task",
      body: "Do it.",
      labels: [],
      author: "maintainer",
    });
    const octokit = octokitFor();
    sendReadsConditionally(octokit);
    const read = () => octokit.rest.issues.get({ owner: "acme", repo: "etags", issue_number: issue.number });
    const start = suite.sandbox.requests.records.length;
    const first = await read();
    const second = await read();
    expect(second.status).toBe(200);
    expect(second.data).toEqual(first.data);
    suite.sandbox.store.updateIssue(repo, issue.number, { body: "Do it twice." }, "maintainer");
    const third = await read();
    expect(third.data.body).toBe("Do it twice.");
    const records = suite.sandbox.requests.records.slice(start);
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
    suite.sandbox.store.createRepo(repo);
    suite.sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
    suite.sandbox.store.createIssue(repo, {
      title: "Parked",
      body: "Waits for a person.",
      labels: ["autopilot:blocked"],
      author: "maintainer",
    });
    const options = {
      octokit: octokitFor(),
      repo,
      botLogin: `${suite.sandbox.app.slug}[bot]`,
      baseUrl: suite.sandbox.url,
    };
    for (let i = 0; i < 3; i++) await reconcile(options);
    const start = suite.sandbox.requests.records.length;
    // A fresh client per tick, as Probot builds one per webhook: the cache outlives it.
    await reconcile({ ...options, octokit: octokitFor() });
    const tick = suite.sandbox.requests.records.slice(start);
    expect(tick.filter((r) => r.charged).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(tick.filter((r) => !r.charged).map((r) => [r.endpoint, r.status])).toEqual([
      ["GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", 304],
    ]);
    expect(conditionalReadCache().notModified).toBeGreaterThan(0);
  });
});
