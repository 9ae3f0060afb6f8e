/**
 * The `createSplitIssues` effect (src/github/execution/split-issues.ts): the approved proposal read from
 * Autopilot's own comment, its sub-issues created with the ready label and linked to the parent, the parent
 * labeled ready last; and after a stop between creations, the issues already made found again by their marker,
 * never created twice.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import type { Effect } from "../../../src/core/effects.js";
import { splitComment, splitDigest, splitOfFinalMessage } from "../../../src/core/tasks/split-proposal.js";
import { snapshotSettings } from "../../../src/github/snapshot/snapshot.js";
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
  snapshotPage,
  type SnapshotSpec,
} from "../fixtures.js";

const github = nockGateway();
const R = `/repos/${OWNER}/${REPO}`;
const APPROVED_AT = "2026-11-20T10:00:00Z";

const read = splitOfFinalMessage(
  `<subissues>${JSON.stringify([
    { title: "Cart total", body: "Add total()." },
    { title: "Tax line", body: "Add tax().", dependsOn: [1] },
  ])}</subissues>`,
);
if (!read.ok) throw new Error(read.problem);
const ITEMS = read.items;
const DIGEST = splitDigest(ITEMS);

const create: Effect = {
  type: "createSplitIssues",
  parent: 7,
  digest: DIGEST,
  approvedBy: "dev",
  approvedAt: APPROVED_AT,
  ready: "autopilot:ready",
  remove: ["autopilot:in-progress", "autopilot:needs-human"],
};

async function withSnapshot(spec: SnapshotSpec) {
  const gw = github.gateway({ revisionOf: (body: string) => parseDashboard(body).state?.revision ?? null });
  const scope = nock(API);
  replySnapshot(scope, snapshotPage(spec));
  replyRuns(scope, []);
  await gw.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  expect(scope.isDone()).toBe(true);
  return gw;
}

/** #7 waiting on the proposal: Autopilot's own comment carries it. */
const parent = () =>
  gqlIssue({
    number: 7,
    labels: ["autopilot:needs-human"],
    comments: [{ id: 70, author: BOT, bot: true, mine: true, body: splitComment(7, ITEMS) }],
  });

const issueJson = (number: number, body: string, userId = BOT_ID) => ({
  id: 1000 + number,
  number,
  title: `Issue ${number}`,
  body,
  user: { id: userId, login: userId === BOT_ID ? BOT : "mallory" },
});

describe("creating an approved split's sub-issues", () => {
  it("creates each with the ready label and its order, links them, then makes the parent an epic", async () => {
    const gw = await withSnapshot({ issues: [parent()] });
    const bodies: string[] = [];
    const scope = nock(API)
      .get(`${R}/issues`)
      .query((q) => q.since === APPROVED_AT && q.state === "all")
      .reply(200, [])
      .get(`${R}/issues/7/sub_issues`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues`, (b: { title: string; body: string; labels: string[] }) => {
        bodies.push(b.body);
        return b.title === "Cart total" && b.labels.join() === "autopilot:ready";
      })
      .reply(201, { id: 1031, number: 31 })
      .post(`${R}/issues/7/sub_issues`, { sub_issue_id: 1031 })
      .reply(201, {})
      .post(`${R}/issues`, (b: { title: string; body: string }) => {
        bodies.push(b.body);
        return b.title === "Tax line";
      })
      .reply(201, { id: 1032, number: 32 })
      .post(`${R}/issues/7/sub_issues`, { sub_issue_id: 1032 })
      .reply(201, {})
      .post(`${R}/issues/7/labels`, { labels: ["autopilot:ready"] })
      .reply(200, [])
      // Only the labels the parent has are taken off.
      .delete(`${R}/issues/7/labels/autopilot%3Aneeds-human`)
      .reply(200, []);
    const report = await gw.execute([create]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
    expect(bodies[0]).not.toMatch(/Depends on/);
    expect(bodies[1]).toMatch(/^Depends on #31$/m);
  });

  it("after a stop between creations, finds what Autopilot created and creates only the rest", async () => {
    const gw = await withSnapshot({ issues: [parent()] });
    const marker = (i: number) =>
      `<!-- autopilot:split-item parent=7 digest=${DIGEST.slice(0, 16)} item=${i} -->`;
    let created = 0;
    const scope = nock(API)
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [
        // Item 1 was created (not linked yet) before the stop.
        issueJson(31, `Add total().\n${marker(1)}`),
        // A copy of item 2's marker in someone else's issue is not Autopilot's: item 2 is still to create.
        issueJson(33, `Anything.\n${marker(2)}`, 666),
      ])
      .get(`${R}/issues/7/sub_issues`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/sub_issues`, { sub_issue_id: 1031 })
      .reply(201, {})
      .post(`${R}/issues`, (b: { title: string; body: string }) => {
        created++;
        return b.title === "Tax line" && /^Depends on #31$/m.test(b.body);
      })
      .reply(201, { id: 1034, number: 34 })
      .post(`${R}/issues/7/sub_issues`, { sub_issue_id: 1034 })
      .reply(201, {})
      .post(`${R}/issues/7/labels`)
      .reply(200, [])
      .delete(`${R}/issues/7/labels/autopilot%3Aneeds-human`)
      .reply(200, []);
    const report = await gw.execute([create]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
    expect(created).toBe(1);
  });

  it("creates nothing when the proposal comment no longer has the approved digest", async () => {
    const edited = splitComment(7, ITEMS).replace('"title":"Tax line"', '"title":"Mail the cart out"');
    const gw = await withSnapshot({
      issues: [
        gqlIssue({
          number: 7,
          labels: ["autopilot:needs-human"],
          comments: [{ id: 70, author: BOT, bot: true, mine: true, body: edited }],
        }),
      ],
    });
    const scope = nock(API).get(`${R}/issues/7/comments`).query(true).reply(200, []);
    const report = await gw.execute([create]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["failed"]);
  });
});
