import nock from "nock";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import type { Effect } from "../../../src/core/effects.js";
import { snapshotSettings } from "../../../src/github/snapshot/snapshot.js";
import { totalOf } from "../../../src/github/transport/counter.js";
import {
  API,
  BOT,
  BOT_ID,
  gqlIssue,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  replySubIssueLinks,
  snapshotPage,
  type SnapshotSpec,
} from "../fixtures.js";

const github = nockGateway();
const R = `/repos/${OWNER}/${REPO}`;
const MARKER = "<!-- autopilot:epic-progress -->";
const progress = (text: string): Effect => ({
  type: "progressComment",
  issue: 1,
  marker: MARKER,
  body: `${text}\n\n${MARKER}`,
});

async function withSnapshot(spec: SnapshotSpec, options: { operationLimit?: number } = {}) {
  const gw = github.gateway({
    revisionOf: (body: string) => parseDashboard(body).state?.revision ?? null,
    ...options,
  });
  const scope = nock(API);
  replySnapshot(scope, snapshotPage(spec));
  replyRuns(scope, []);
  // The epic's label is new to the snapshot (no dashboard state): who linked its sub-issues is read.
  replySubIssueLinks(scope, { 1: [{ number: 2, at: "2026-11-20T08:00:00Z", by: "maintainer" }] });
  await gw.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  expect(scope.isDone()).toBe(true);
  return gw;
}

const epic = (comments: Parameters<typeof gqlIssue>[0]["comments"] = []) =>
  gqlIssue({ number: 1, subIssues: [{ number: 2, state: "OPEN" }], comments });

describe("an epic's progress comment", () => {
  it("is edited in place when the snapshot read it, and not written when its text is the same", async () => {
    const mine = { id: 77, author: BOT, bot: true, mine: true, body: `1 of 2 done\n\n${MARKER}` };
    const gw = await withSnapshot({ issues: [epic([mine])] });
    const before = totalOf(gw.requests());
    const same = await gw.execute([progress("1 of 2 done")]);
    expect(same.outcomes.map((o) => o.status)).toEqual(["skipped"]);
    expect(totalOf(gw.requests())).toBe(before);

    const scope = nock(API)
      .patch(`${R}/issues/comments/77`, (b: { body: string }) => b.body.startsWith("2 of 2 done"))
      .reply(200, { id: 77 });
    const report = await gw.execute([progress("2 of 2 done")]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
  });

  it("is found among the issue's older comments before a new one is created", async () => {
    const gw = await withSnapshot({ issues: [epic()] });
    const scope = nock(API)
      .get(`${R}/issues/1/comments`)
      .query({ per_page: "100", page: "1" })
      .reply(200, [
        { id: 5, body: `mallory's copy\n\n${MARKER}`, user: { id: 666, login: "mallory" } },
        { id: 6, body: `0 of 2 done\n\n${MARKER}`, user: { id: BOT_ID, login: BOT } },
      ])
      .patch(`${R}/issues/comments/6`, (b: { body: string }) => b.body.startsWith("1 of 2 done"))
      .reply(200, { id: 6 });
    const report = await gw.execute([progress("1 of 2 done")]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
  });

  it("is created when the issue has none of Autopilot's, whatever someone else's comment carries", async () => {
    // mallory copied the marker into her comment: it is neither edited nor taken for Autopilot's.
    const copy = { id: 5, author: "mallory", body: `all done!\n\n${MARKER}` };
    const gw = await withSnapshot({ issues: [epic([copy])] });
    const scope = nock(API)
      .get(`${R}/issues/1/comments`)
      .query({ per_page: "100", page: "1" })
      .reply(200, [{ id: 5, body: copy.body, user: { id: 666, login: "mallory" } }])
      .post(`${R}/issues/1/comments`, (b: { body: string }) => b.body === `0 of 2 done\n\n${MARKER}`)
      .reply(201, { id: 8 });
    const report = await gw.execute([progress("0 of 2 done")]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
  });

  it("is written even past the per-run operation limit (the state records it as written)", async () => {
    const mine = { id: 77, author: BOT, bot: true, mine: true, body: `1 of 2 done\n\n${MARKER}` };
    const gw = await withSnapshot({ issues: [epic([mine])] }, { operationLimit: 1 });
    const scope = nock(API)
      .post(`${R}/issues/1/labels`)
      .reply(200, [])
      .patch(`${R}/issues/comments/77`)
      .reply(200, { id: 77 });
    const report = await gw.execute([
      { type: "addLabels", issue: 1, labels: ["critical"] },
      { type: "addLabels", issue: 2, labels: ["critical"] },
      progress("2 of 2 done"),
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "deferred", "done"]);
  });
});
