import nock from "nock";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseDashboard, TRACKING_MARKER } from "../../../src/core/dashboard/index.js";
import { snapshotSettings } from "../../../src/github/snapshot/snapshot.js";
import {
  API,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  restIssue,
  snapshotPage,
} from "../fixtures.js";

const github = nockGateway();
const R = `/repos/${OWNER}/${REPO}`;
const revisionOf = (body: string) => parseDashboard(body).state?.revision ?? null;
const body = `${TRACKING_MARKER}\n# Autopilot`;

/** A gateway that has taken a snapshot of a repository with no tracking issue yet. */
async function firstReconcile() {
  const gw = github.gateway({ revisionOf });
  const scope = nock(API);
  replySnapshot(scope, snapshotPage({}));
  replyRuns(scope, []);
  await gw.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  expect(scope.isDone()).toBe(true);
  return gw;
}

const create = {
  type: "writeTrackingIssue",
  issue: null,
  title: "Autopilot dashboard",
  body,
  expectedRevision: null,
} as const;

describe("two controllers creating the tracking issue at the same moment", () => {
  it("the younger issue's creator closes it with a pointer to the older and reconciles again on the older", async () => {
    const gw = await firstReconcile();
    let pointer = "";
    const scope = nock(API)
      // Another controller's #11 is not listed yet when this one looks...
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues`)
      .reply(201, restIssue(12, body))
      // ...but is when it looks again after its own create.
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [restIssue(11, body), restIssue(12, body)])
      .post(`${R}/issues/12/comments`, (b: { body: string }) => {
        pointer = b.body;
        return true;
      })
      .reply(201, {})
      .patch(`${R}/issues/12`, { state: "closed", state_reason: "not_planned" })
      .reply(200, restIssue(12, body, { state: "closed" }));
    const report = await gw.execute([create, { type: "pinIssue", issue: 0 }]);
    expect(scope.isDone()).toBe(true);
    expect(pointer).toContain("#11");
    expect(report.conflict).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["conflict", "deferred"]);
    expect(gw.memory.trackingIssue).toBe(11);
  });

  it("the older issue's creator keeps its issue, whoever else listed it", async () => {
    const gw = await firstReconcile();
    const scope = nock(API)
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues`)
      .reply(201, restIssue(11, body))
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [restIssue(11, body), restIssue(12, body)]);
    const report = await gw.execute([create]);
    expect(scope.isDone()).toBe(true);
    expect(report).toMatchObject({ conflict: false, trackingIssue: 11 });
    expect(gw.memory.trackingIssue).toBe(11);
  });
});
