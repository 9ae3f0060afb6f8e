/** Executing effects: the tracking issue, the content-creation limit, dry run and the operation limit. */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { Effect } from "../../src/core/effects.js";
import { GitHubCircuit } from "../../src/github/transport/circuit.js";
import { totalOf } from "../../src/github/transport/counter.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import { newRepoMemory } from "../../src/github/snapshot/snapshot.js";
import { API, BOT, gqlPull, gqlTracking, OWNER, REPO, restIssue } from "./fixtures.js";

import { github, lockDispatch, makeGateway, R, stateBody, withSnapshot } from "./execute-setup.js";

describe("the tracking issue", () => {
  it("is re-read before a write and updated when the revision matches", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    const scope = nock(API)
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(3)))
      .patch(`${R}/issues/1`, (b: { body: string }) => b.body === stateBody(4))
      .reply(200, {});
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report).toMatchObject({ conflict: false, trackingIssue: 1 });
  });

  it("is not written when someone else wrote it since the snapshot (a revision conflict)", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    const scope = nock(API)
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(4)));
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
      },
      { type: "pinIssue", issue: 1 },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.conflict).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["conflict", "deferred"]);
  });

  it("holds the reconcile's later writes behind its own when a 5xx holds it: nothing goes out the state does not record", async () => {
    const circuit = new GitHubCircuit();
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) }, [], {
      circuit,
    });
    // GitHub answers the state's write with a 502 however often the client asks; the comment is never sent.
    // GitHub answers the state's write with a 502 however often the client asks; the comment is never sent.
    nock(API)
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(3)))
      .patch(`${R}/issues/1`)
      .times(10)
      .reply(502, { message: "Bad Gateway" });
    const comment = nock(API).post(`${R}/issues/9/comments`).reply(201, { id: 900 });
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
      },
      { type: "comment", issue: 9, body: "> /autopilot status\n\nAutopilot is running.", key: "reply-77" },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["queued", "queued"]);
    expect(report.outcomes[0]?.detail).toMatch(/502/);
    expect(comment.isDone()).toBe(false);
    // Held in order, for the next reconcile to replay unless it decides them again.
    expect(circuit.queued(`${OWNER}/${REPO}`).map((q) => q.effect.type)).toEqual([
      "writeTrackingIssue",
      "comment",
    ]);
    nock.cleanAll();
  });

  it("is not written over a person's edit since the snapshot that kept the revision (a box ticked on the page)", async () => {
    const read = stateBody(3);
    const ticked = read.replace(
      "<!-- autopilot:state",
      "- [x] <!-- autopilot:session-pause --> pause\n<!-- autopilot:state",
    );
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: read }) });
    const scope = nock(API).get(`${R}/issues/1`).reply(200, restIssue(1, ticked));
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
        readBody: read,
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(ticked).not.toBe(read);
    expect(report.conflict).toBe(true);
    expect(report.outcomes[0]).toMatchObject({
      status: "conflict",
      detail: expect.stringContaining("edited since"),
    });
  });

  it("closes a younger duplicate it finds beside the tracking issue when it looks for one", async () => {
    // Found by the seeded simulation (seed 99, hosted): a create whose check for an older issue met a 502 left its
    // issue open; replayed, the create found the older one, and nothing closed the younger.
    const gw = await withSnapshot({});
    const scope = nock(API)
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [restIssue(3, stateBody(2)), restIssue(4, stateBody(1))])
      .post(`${R}/issues/4/comments`, (b: { body: string }) => b.body.includes("#3 is the dashboard"))
      .reply(201, { id: 1 })
      .patch(`${R}/issues/4`, (b: { state: string }) => b.state === "closed")
      .reply(200, {});
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: null,
        title: "Autopilot dashboard",
        body: stateBody(1),
        expectedRevision: null,
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["conflict"]);
  });

  it("is created when none exists, found first by its marker so a second controller does not create another", async () => {
    const gw = await withSnapshot({});
    const created = nock(API)
      .get(`${R}/issues`)
      .query({ state: "open", sort: "created", direction: "asc", per_page: "100", creator: BOT })
      .reply(200, [])
      .post(`${R}/issues`, (b: { title: string; body: string }) => b.body.startsWith(TRACKING_MARKER))
      .reply(201, restIssue(12, stateBody(1)))
      // Listed again after the create: no older one, so #12 stays.
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [restIssue(12, stateBody(1))])
      .post("/graphql", (b: { query: string }) => b.query.includes("AutopilotIssueNodeId"))
      .reply(200, { data: { repository: { issue: { id: "I_12", isPinned: false } } } })
      .post(
        "/graphql",
        (b: { query: string; variables: { issueId: string } }) =>
          b.query.includes("pinIssue") && b.variables.issueId === "I_12",
      )
      .reply(200, { data: { pinIssue: { issue: { number: 12, isPinned: true } } } });
    lockDispatch(created, 5, 1)
      .post(
        `${R}/actions/workflows/autopilot-worker.yml/dispatches`,
        (b: { inputs: Record<string, string> }) => b.inputs["tracking-issue"] === "12",
      )
      .reply(204);
    const report = await gw.execute([
      {
        type: "writeTrackingIssue",
        issue: null,
        title: "Autopilot dashboard",
        body: stateBody(1),
        expectedRevision: null,
      },
      { type: "pinIssue", issue: 0 },
      { type: "dispatchWorker", issue: 5, attempt: 1, dispatchId: "5-1-a" },
    ]);
    expect(created.isDone()).toBe(true);
    expect(report.trackingIssue).toBe(12);
    expect(gw.memory.trackingIssue).toBe(12);

    const gw2 = await withSnapshot({});
    const found = nock(API)
      .get(`${R}/issues`)
      .query(true)
      .reply(200, [restIssue(12, stateBody(1))]);
    const second = await gw2.execute([
      {
        type: "writeTrackingIssue",
        issue: null,
        title: "Autopilot dashboard",
        body: stateBody(1),
        expectedRevision: null,
      },
    ]);
    expect(found.isDone()).toBe(true);
    expect(second).toMatchObject({ conflict: true, trackingIssue: null });
  });

  it("says so on the issue when the repository's pins are full, and goes on", async () => {
    const gw = await withSnapshot({
      tracking: gqlTracking({ number: 1, body: stateBody(3), pinned: false }),
    });
    const scope = nock(API)
      .post("/graphql", (b: { query: string }) => b.query.includes("pinIssue"))
      .reply(200, {
        data: { pinIssue: null },
        errors: [{ type: "UNPROCESSABLE", message: "You can't pin more than 3 issues per repository" }],
      })
      .post(`${R}/issues/1/comments`, (b: { body: string }) => /pinned issues GitHub allows/.test(b.body))
      .reply(201, {})
      .post(`${R}/issues/3/labels`)
      .reply(200, []);
    const report = await gw.execute([
      { type: "pinIssue", issue: 1 },
      { type: "addLabels", issue: 3, labels: ["critical"] },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["skipped", "done"]);
    expect(report.outcomes[0]?.detail).toMatch(/pins are full/);
  });
});

describe("GitHub's secondary rate limit (the content-creation limit) met by the controller", () => {
  const limited = {
    message:
      "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.",
    documentation_url:
      "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
  };

  it("ends the reconcile at once, sends nothing after the refused state write, and carries every write out after retry-after", async () => {
    let clock = Date.parse("2026-11-20T10:00:00Z");
    const circuit = new GitHubCircuit();
    const memory = newRepoMemory();
    // The controller's own client: throttling on, secondary limits in `pause` mode (as `autopilot serve` and the
    // Actions controller build it); no fake waits, so a retry in the request would show in the time taken.
    const gateway = () =>
      makeGateway({
        client: createOctokit({
          auth: "ghs_test",
          fetch: github.validating.fetch,
          retry: false,
          secondaryLimit: "pause",
        }),
        circuit,
        memory,
        now: () => clock,
      });
    const effects: Effect[] = [
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
      },
      { type: "comment", issue: 9, body: "> /autopilot status\n\nAutopilot is running.", key: "reply-77" },
      { type: "dispatchWorker", issue: 5, attempt: 1, dispatchId: "5-1-abc", resend: true },
    ];

    // The attack: the dashboard write meets the limit (retry-after 60 s). nock answers only what is mocked.
    const refused = nock(API)
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(3)))
      .patch(`${R}/issues/1`)
      .reply(403, limited, { "retry-after": "60" });
    const started = Date.now();
    const first = await gateway().execute(effects);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(refused.isDone()).toBe(true);
    expect(nock.pendingMocks()).toEqual([]);
    // Nothing lost: all three held, in order; the dispatch was never sent without its state record.
    expect(first.outcomes.map((o) => o.status)).toEqual(["queued", "queued", "queued"]);
    expect(circuit.queued(`${OWNER}/${REPO}`).map((q) => q.effect.type)).toEqual([
      "writeTrackingIssue",
      "comment",
      "dispatchWorker",
    ]);

    // 30 s later the pause still holds: no write goes out (nock has nothing mocked).
    clock += 30_000;
    const early = await gateway().execute([]);
    expect(early.replayed).toEqual([]);

    // After retry-after, the next reconcile carries them out, each once.
    clock += 31_000;
    const scope = nock(API)
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(3)))
      .patch(`${R}/issues/1`)
      .reply(200, {})
      .post(`${R}/issues/9/comments`, (b: { body: string }) => b.body.includes("<!-- autopilot:reply-77 -->"))
      .reply(201, { id: 100 })
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`)
      .reply(204);
    const after = await gateway().execute([]);
    expect(scope.isDone()).toBe(true);
    expect(after.replayed.map((o) => o.status)).toEqual(["done", "done", "done"]);
    expect(circuit.queued(`${OWNER}/${REPO}`)).toEqual([]);
    expect(circuit.writePause(`${OWNER}/${REPO}`, clock)).toBeNull();
  });

  it("is not taken for GitHub refusing a merge mechanism: the repository's writes pause and the merge is tried again", async () => {
    const sha = "e".repeat(40);
    const gw = await withSnapshot(
      {
        pulls: [
          gqlPull({
            number: 30,
            issue: 8,
            headSha: sha,
            merge: { id: "PR_30", mergeStateStatus: "BLOCKED" },
          }),
        ],
      },
      [],
      { circuit: new GitHubCircuit() },
    );
    const scope = nock(API)
      .put(`${R}/pulls/30/merge`)
      .reply(405, { message: "At least 1 approving review is required by reviewers with write access." })
      .get(`${R}/pulls/30`)
      .reply(200, { number: 30, state: "open", merged: false })
      .post("/graphql")
      .reply(403, limited, { "retry-after": "60" });
    const report = await gw.execute([
      { type: "mergePr", pr: 30, issue: 8, method: "squash", expectedHeadSha: sha },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "queued" });
    expect(gw.circuit.writePause(`${OWNER}/${REPO}`)).not.toBeNull();
  });
});

describe("dry run and the operation limit", () => {
  it("logs every write as 'would …' and makes none in a dry run", async () => {
    const lines: string[] = [];
    const gw = github.gateway({
      dryRun: true,
      log: { debug() {}, info: (m) => lines.push(m), warn: (m) => lines.push(m), error() {} },
    });
    const report = await gw.execute([
      { type: "addLabels", issue: 3, labels: ["critical"] },
      { type: "dispatchWorker", issue: 3, attempt: 1, dispatchId: "3-1-a" },
      { type: "mergePr", pr: 4, issue: 3, method: "squash", expectedHeadSha: "c".repeat(40) },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["dry-run", "dry-run", "dry-run"]);
    expect(lines).toEqual([
      "[dry run] would label #3 critical",
      "[dry run] would dispatch a worker for #3 (attempt 1)",
      "[dry run] would merge PR #4 (squash) at ccccccc",
    ]);
    expect(totalOf(gw.requests())).toBe(0);
  });

  it("defers effects beyond the per-run budget to the next reconcile, but still records the state", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) }, [], {
      operationLimit: 2,
    });
    const scope = nock(API)
      .post(`${R}/issues/1/labels`)
      .reply(200, [])
      .post(`${R}/issues/2/labels`)
      .reply(200, [])
      .get(`${R}/issues/1`)
      .reply(200, restIssue(1, stateBody(3)))
      .patch(`${R}/issues/1`)
      .reply(200, {});
    const report = await gw.execute([
      { type: "addLabels", issue: 1, labels: ["critical"] },
      { type: "addLabels", issue: 2, labels: ["critical"] },
      { type: "addLabels", issue: 3, labels: ["critical"] },
      {
        type: "writeTrackingIssue",
        issue: 1,
        title: "Autopilot dashboard",
        body: stateBody(4),
        expectedRevision: 3,
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "deferred", "done"]);
    expect(report.operations).toBe(2);
  });
});
