/**
 * The snapshot's read of the task branches `/autopilot rollback` of unmerged work is deleting
 * (src/github/snapshot/discarded-branches.ts): GitHub's "Get a reference"
 * (https://docs.github.com/en/rest/git/refs#get-a-reference) answers 200 for a branch that is there and 404 for
 * one that is gone; any other refusal leaves the branch unknown, and an outage fails the snapshot like any read.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import {
  emptyState,
  newTaskRecord,
  renderStateBlock,
  TRACKING_MARKER,
} from "../../src/core/dashboard/index.js";
import { readDiscardedBranches } from "../../src/github/snapshot/discarded-branches.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import {
  API,
  DEFAULT_HEAD,
  gqlClosedIssue,
  gqlIssue,
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
const NOW = new Date("2026-11-20T10:00:00Z");

/** The path Octokit requests for `GET …/git/ref/heads/<branch>` (the ref is one path parameter). */
const refPath = (branch: string) => `${R}/git/ref/${encodeURIComponent(`heads/${branch}`)}`;

const refJson = (branch: string) => ({
  ref: `refs/heads/${branch}`,
  node_id: "REF_1",
  url: `${API}${R}/git/refs/heads/${branch}`,
  object: { sha: DEFAULT_HEAD, type: "commit", url: `${API}${R}/git/commits/${DEFAULT_HEAD}` },
});

function reader() {
  const client = github.octokit();
  const read = <T>(call: () => Promise<T>) => call();
  return { client, repo: { owner: OWNER, name: REPO }, read };
}

describe("reading the branches an unmerged task's rollback is deleting", () => {
  it("takes 200 for there, 404 for gone, and leaves a branch GitHub refuses to tell about unknown", async () => {
    const scope = nock(API)
      .get(refPath("autopilot/issue-1"))
      .reply(200, refJson("autopilot/issue-1"))
      .get(refPath("autopilot/issue-2"))
      .reply(404, { message: "Not Found", status: "404" })
      .get(refPath("autopilot/issue-3"))
      .reply(403, { message: "Resource not accessible by integration", status: "403" });
    const exists = await readDiscardedBranches(reader(), [
      "autopilot/issue-1",
      "autopilot/issue-2",
      "autopilot/issue-3",
    ]);
    expect(scope.isDone()).toBe(true);
    expect(exists).toEqual({ "autopilot/issue-1": true, "autopilot/issue-2": false });
    expect("autopilot/issue-3" in exists).toBe(false);
  });

  it("fails on an outage (a 5xx), as the snapshot's other reads do", async () => {
    nock(API).get(refPath("autopilot/issue-1")).reply(502, { message: "Server Error" });
    await expect(readDiscardedBranches(reader(), ["autopilot/issue-1"])).rejects.toMatchObject({
      status: 502,
    });
  });
});

describe("the snapshot", () => {
  /** A state in which tasks `discarding` wait for their branch to go. */
  function trackingBody(discarding: number[]): string {
    const state = emptyState(NOW);
    for (const n of discarding) state.tasks[String(n)] = { ...newTaskRecord(), discard: NOW.toISOString() };
    return `${TRACKING_MARKER}\n${renderStateBlock(state)}`;
  }

  it("reads the branch of each open task waiting for it to go (not a closed one's), and the reconcile counts those requests", async () => {
    const gw = github.gateway();
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: trackingBody([3, 4, 9]) }),
        issues: [3, 4, 5].map((number) => gqlIssue({ number, labels: ["autopilot:ready"] })),
        closed: [gqlClosedIssue(9)],
      }),
    );
    replyRuns(scope, []);
    scope
      .get(refPath("autopilot/issue-3"))
      .reply(404, { message: "Not Found", status: "404" })
      .get(refPath("autopilot/issue-4"))
      .reply(200, refJson("autopilot/issue-4"));
    const out = await gw.snapshot({
      settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
      permissionsFor: () => [],
    });
    expect(scope.isDone()).toBe(true);
    expect(out.world.branchExists).toEqual({ "autopilot/issue-3": false, "autopilot/issue-4": true });
    expect(gw.requests()["GET /repos/{owner}/{repo}/git/ref/{ref}"]).toBe(2);
  });

  it("reads at most 20 branches in one reconcile, and none when no task waits", async () => {
    const many = Array.from({ length: 25 }, (_, i) => i + 2);
    const gw = github.gateway();
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: trackingBody(many) }),
        issues: many.map((number) => gqlIssue({ number, labels: ["autopilot:ready"] })),
      }),
    );
    replyRuns(scope, []);
    scope
      .get((path) => path.startsWith(`${R}/git/ref/`))
      .times(20)
      .reply(404, { message: "Not Found", status: "404" });
    const out = await gw.snapshot({
      settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
      permissionsFor: () => [],
    });
    expect(scope.isDone()).toBe(true);
    expect(Object.keys(out.world.branchExists ?? {})).toHaveLength(20);
    expect(gw.requests()["GET /repos/{owner}/{repo}/git/ref/{ref}"]).toBe(20);

    const idle = github.gateway();
    const quiet = nock(API);
    replySnapshot(quiet, snapshotPage({ tracking: gqlTracking({ number: 1, body: trackingBody([]) }) }));
    replyRuns(quiet, []);
    const calm = await idle.snapshot({
      settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
      permissionsFor: () => [],
    });
    expect(quiet.isDone()).toBe(true);
    expect(calm.world.branchExists).toBeUndefined();
  });
});
