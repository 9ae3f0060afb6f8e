import nock from "nock";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { parseDashboard, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import {
  API,
  DEFAULT_HEAD,
  gqlTracking,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  snapshotPage,
} from "./fixtures.js";

const github = nockGateway();
const R = `/repos/${OWNER}/${REPO}`;
const LOCK = "refs/autopilot/dispatch/issue-5-attempt-2";
const revisionOf = (body: string) => parseDashboard(body).state?.revision ?? null;

async function gatewayWithSnapshot() {
  const gw = github.gateway({ revisionOf });
  const scope = nock(API);
  replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body: TRACKING_MARKER }) }));
  replyRuns(scope, []);
  await gw.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  expect(scope.isDone()).toBe(true);
  return gw;
}

const refJson = (ref: string) => ({
  ref,
  node_id: "REF_1",
  url: `${API}${R}/git/${ref}`,
  object: { sha: DEFAULT_HEAD, type: "commit", url: `${API}${R}/git/commits/${DEFAULT_HEAD}` },
});

describe("the dispatch lock", () => {
  it("is read back after a 422: when the ref does not exist, GitHub refused it for another reason and the worker is dispatched anyway", async () => {
    const gw = await gatewayWithSnapshot();
    // What GitHub answers when a ruleset restricts creating refs under refs/autopilot/.
    const scope = nock(API)
      .post(`${R}/git/refs`, { ref: LOCK, sha: DEFAULT_HEAD })
      .reply(422, {
        message:
          "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n",
        status: "422",
      })
      .get(`${R}/git/ref/autopilot%2Fdispatch%2Fissue-5-attempt-2`)
      .reply(404, { message: "Not Found", status: "404" })
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`)
      .reply(200, {
        workflow_run_id: 4244,
        run_url: "https://api.github.com/x",
        html_url: "https://github.com/x",
      });
    const report = await gw.execute([
      { type: "dispatchWorker", issue: 5, attempt: 2, dispatchId: "5-2-abc" },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "done", runId: 4244 });
    expect(report.outcomes[0]?.detail).toContain(`GitHub refused to create ${LOCK}`);
    expect(report.outcomes[0]?.detail).toContain("creations being restricted");
  });

  it("is read back after a 422: when the ref exists, another controller won and nothing is dispatched", async () => {
    const gw = await gatewayWithSnapshot();
    // No dispatch is mocked: nock fails the test if one is sent.
    const scope = nock(API)
      .post(`${R}/git/refs`, { ref: LOCK, sha: DEFAULT_HEAD })
      .reply(422, { message: "Reference already exists", status: "422" })
      .get(`${R}/git/ref/autopilot%2Fdispatch%2Fissue-5-attempt-2`)
      .reply(200, refJson(LOCK));
    const report = await gw.execute([
      { type: "dispatchWorker", issue: 5, attempt: 2, dispatchId: "5-2-abc" },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "skipped" });
  });

  it("refs of an ended task are deleted, each attempt's; one already gone is fine", async () => {
    const gw = await gatewayWithSnapshot();
    const scope = nock(API)
      .delete(`${R}/git/refs/autopilot%2Fdispatch%2Fissue-5-attempt-1`)
      .reply(204)
      .delete(`${R}/git/refs/autopilot%2Fdispatch%2Fissue-5-attempt-2`)
      .reply(422, { message: "Reference does not exist", status: "422" });
    const report = await gw.execute([{ type: "releaseDispatchLocks", issue: 5, attempts: 2 }]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "done" });
  });

  it("refs are listed by the snapshot's own query, which says whether the list is complete", async () => {
    for (const hasNextPage of [false, true]) {
      const scope = nock(API);
      const page = snapshotPage({ tracking: gqlTracking({ number: 1, body: TRACKING_MARKER }) });
      (page.data.repository as Record<string, unknown>).dispatchLocks = {
        pageInfo: { hasNextPage },
        nodes: [{ name: "issue-5-attempt-1" }, { name: "issue-5-attempt-2" }],
      };
      replySnapshot(scope, page);
      replyRuns(scope, []);
      const gw = github.gateway({ revisionOf });
      const { world } = await gw.snapshot({
        settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
        permissionsFor: () => [],
      });
      expect(scope.isDone()).toBe(true);
      expect(world.dispatchLocks).toEqual(["issue-5-attempt-1", "issue-5-attempt-2"]);
      expect(world.dispatchLocksComplete).toBe(!hasNextPage);
    }
  });
});

describe("a worker workflow from before config-digest", () => {
  it("is dispatched again without the input GitHub refuses, and the log says how to add it", async () => {
    const gw = await gatewayWithSnapshot();
    const sent: Record<string, string>[] = [];
    const scope = nock(API)
      .post(`${R}/git/refs`, { ref: LOCK, sha: DEFAULT_HEAD })
      .reply(201, refJson(LOCK))
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`, (body) => {
        sent.push(body.inputs);
        return true;
      })
      // GitHub's answer to an input the workflow does not declare.
      .reply(422, { message: 'Unexpected inputs provided: ["config-digest"]', status: "422" })
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`, (body) => {
        sent.push(body.inputs);
        return true;
      })
      .reply(200, {
        workflow_run_id: 4245,
        run_url: "https://api.github.com/x",
        html_url: "https://github.com/x",
      });
    const report = await gw.execute([
      {
        type: "dispatchWorker",
        issue: 5,
        attempt: 2,
        dispatchId: "5-2-abc",
        inputs: { "task-digest": "t".repeat(64), "config-digest": "c".repeat(64) },
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(sent[0]).toHaveProperty("config-digest", "c".repeat(64));
    expect(sent[1]).not.toHaveProperty("config-digest");
    expect(sent[1]).toHaveProperty("task-digest", "t".repeat(64));
    expect(report.outcomes[0]).toMatchObject({ status: "done", runId: 4245 });
    expect(report.outcomes[0]?.detail).toContain("does not declare the `config-digest` input");
  });

  it("any other refused input is not retried", async () => {
    const gw = await gatewayWithSnapshot();
    const scope = nock(API)
      .post(`${R}/git/refs`, { ref: LOCK, sha: DEFAULT_HEAD })
      .reply(201, refJson(LOCK))
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`)
      .reply(422, { message: 'Unexpected inputs provided: ["task-digest"]', status: "422" });
    const report = await gw.execute([
      {
        type: "dispatchWorker",
        issue: 5,
        attempt: 2,
        dispatchId: "5-2-abc",
        inputs: { "task-digest": "t".repeat(64), "config-digest": "c".repeat(64) },
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]?.status).not.toBe("done");
  });
});
