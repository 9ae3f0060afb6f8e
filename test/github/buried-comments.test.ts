import nock from "nock";
import { describe, expect, it } from "vitest";
import {
  emptyState,
  renderStateBlock,
  TRACKING_MARKER,
  type DashboardState,
} from "../../src/core/dashboard/index.js";
import { totalOf } from "../../src/github/transport/counter.js";
import { newRepoMemory } from "../../src/github/snapshot/snapshot.js";
import {
  API,
  type CommentSpec,
  gqlComment,
  gqlIssue,
  gqlTracking,
  nockGateway,
  progressComment,
  replyRuns,
  replySnapshot,
  settingsFor,
  snapshotPage,
  workerResult,
} from "./fixtures.js";

const github = nockGateway();
const NOW = new Date("2026-11-20T12:00:00Z");

type GraphQLBody = { query: string; variables: Record<string, unknown> };

/** A dashboard body whose state knows task 7 (dispatched once) and has processed comments up to `cursor`. */
function trackingBody(cursor: number | null, resultComment?: string, handled = false): string {
  const state: DashboardState = emptyState(NOW);
  state.tasks["7"] = {
    ...state.tasks["7"],
    attempt: 1,
    retries: 0,
    failures: 0,
    feedbackRounds: 0,
    iterations: 0,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: 0,
    dispatchId: "7-1-abc",
    ...(handled ? { handled: "7-1-abc" } : {}),
    ...(resultComment ? { resultComment } : {}),
  };
  if (cursor !== null) state.cursor = { id: cursor, at: "2026-11-20T09:00:00Z" };
  return `${TRACKING_MARKER}\n${renderStateBlock(state)}`;
}

function chatter(from: number, count: number, body = (id: number) => `thoughts ${id}`): CommentSpec[] {
  return Array.from({ length: count }, (_, i) => ({ id: from + i, author: "alice", body: body(from + i) }));
}

/** A `comments(last: N)` window as GitHub answers it: older comments lie before `startCursor`. */
function window(comments: CommentSpec[], older: boolean) {
  return {
    pageInfo: { hasPreviousPage: older, startCursor: older ? `cursor-before-${comments[0]!.id}` : null },
    nodes: comments.map(gqlComment),
  };
}

function replyOlder(
  scope: nock.Scope,
  issue: number,
  before: string,
  comments: CommentSpec[],
  older: boolean,
) {
  return scope
    .post(
      "/graphql",
      (body: GraphQLBody) =>
        body.query.includes("query AutopilotOlderComments") &&
        body.variables.number === issue &&
        body.variables.before === before,
    )
    .reply(200, { data: { repository: { issue: { comments: window(comments, older) } } } });
}

function snapshotWith(tracking: ReturnType<typeof gqlTracking>, taskComments: ReturnType<typeof window>) {
  const issue = { ...gqlIssue({ number: 7, labels: ["autopilot:in-progress"] }), comments: taskComments };
  return snapshotPage({ tracking, issues: [issue] });
}

const snapshot = (gw: ReturnType<typeof github.gateway>) =>
  gw.snapshot({ settingsFor, permissionsFor: () => [] });

describe("comments the snapshot's recent window does not reach", () => {
  const result = workerResult({ issue: 7, status: "finished", result: "usage_limited" });

  it("fetch a task's result comment by the id the state keeps, in one request, however many comments follow it", async () => {
    const scope = nock(API);
    const tracking = gqlTracking({ number: 1, body: trackingBody(1_000, "IC_node70") });
    replySnapshot(scope, snapshotWith(tracking, window(chatter(101, 20), true)));
    replyRuns(scope, []);
    scope
      .post(
        "/graphql",
        (body: GraphQLBody) =>
          body.query.includes("query AutopilotCommentsById") &&
          JSON.stringify(body.variables.ids) === JSON.stringify(["IC_node70"]),
      )
      .reply(200, {
        data: {
          nodes: [
            { __typename: "IssueComment", ...gqlComment(progressComment(70, result)), issue: { number: 7 } },
          ],
        },
      });
    const gw = github.gateway({ memory: newRepoMemory() });
    const { world } = await snapshot(gw);
    expect(scope.isDone()).toBe(true);
    expect(world.workerResults).toEqual([result]);
    expect(world.resultComments).toEqual({ 7: "IC_node70" });
    expect(totalOf(gw.requests())).toBe(3);
  });

  it("walk back a task's comments for Autopilot's result when the state does not know its id", async () => {
    const scope = nock(API);
    const tracking = gqlTracking({ number: 1, body: trackingBody(1_000) });
    replySnapshot(scope, snapshotWith(tracking, window(chatter(301, 20), true)));
    replyRuns(scope, []);
    replyOlder(scope, 7, "cursor-before-301", chatter(201, 100), true);
    replyOlder(scope, 7, "cursor-before-201", [progressComment(70, result), ...chatter(101, 100)], true);
    const gw = github.gateway({ memory: newRepoMemory() });
    const { world } = await snapshot(gw);
    // Found on the second page: the walk stops there, without reading the comments before it.
    expect(scope.isDone()).toBe(true);
    expect(world.workerResults).toEqual([result]);
    expect(world.resultComments).toEqual({ 7: "IC_node70" });
  });

  it("read a task's comments back when the result comment its state names was deleted", async () => {
    const scope = nock(API);
    const tracking = gqlTracking({ number: 1, body: trackingBody(1_000, "IC_gone") });
    replySnapshot(scope, snapshotWith(tracking, window(chatter(301, 20), true)));
    replyRuns(scope, []);
    scope
      .post("/graphql", (body: GraphQLBody) => body.query.includes("query AutopilotCommentsById"))
      .reply(200, {
        data: { nodes: [null] },
        errors: [
          {
            type: "NOT_FOUND",
            path: ["nodes", 0],
            message: "Could not resolve to a node with the global id of 'IC_gone'.",
          },
        ],
      });
    replyOlder(scope, 7, "cursor-before-301", [progressComment(70, result), ...chatter(201, 99)], true);
    const { world } = await snapshot(github.gateway({ memory: newRepoMemory() }));
    expect(scope.isDone()).toBe(true);
    expect(world.workerResults).toEqual([result]);
    expect(world.resultComments).toEqual({ 7: "IC_node70" });
  });

  it("read every command posted since the cursor, on the tracking issue and on tasks", async () => {
    const scope = nock(API);
    const say = (id: number) =>
      id === 160 ? "/autopilot retry #7" : id === 200 ? "/autopilot status" : `chat ${id}`;
    const tracking = {
      ...gqlTracking({ number: 1, body: trackingBody(150, "IC_node70") }),
      comments: window(chatter(500, 30), true),
    };
    replySnapshot(scope, snapshotWith(tracking, window(chatter(600, 20), true)));
    replyRuns(scope, []);
    scope
      .post("/graphql", (body: GraphQLBody) => body.query.includes("query AutopilotCommentsById"))
      .reply(200, {
        data: {
          nodes: [
            { __typename: "IssueComment", ...gqlComment(progressComment(70, result)), issue: { number: 7 } },
          ],
        },
      });
    // Older than the windows, newer than the cursor (150): read back until a comment at or before the cursor.
    replyOlder(scope, 1, "cursor-before-500", chatter(130, 41, say), true);
    replyOlder(scope, 7, "cursor-before-600", chatter(171, 100, say), true);
    replyOlder(scope, 7, "cursor-before-171", chatter(120, 1), true);
    const { world } = await snapshot(github.gateway({ memory: newRepoMemory() }));
    expect(scope.isDone()).toBe(true);
    const ids = new Set(world.comments.map((c) => c.id));
    for (const [from, to] of [
      [151, 270],
      [500, 529],
      [600, 619],
    ] as const)
      for (let id = from; id <= to; id++) expect(ids.has(id), `comment ${id}`).toBe(true);
    expect(world.comments.find((c) => c.id === 160)).toMatchObject({ issue: 1, body: "/autopilot retry #7" });
    expect(world.comments.find((c) => c.id === 200)).toMatchObject({ issue: 7, body: "/autopilot status" });
    expect(world.workerResults).toEqual([result]);
  });

  it("read back to the state's beginning when no comment was processed yet", async () => {
    const scope = nock(API);
    const tracking = {
      ...gqlTracking({ number: 1, body: trackingBody(null, "IC_node70") }),
      createdAt: "2026-11-20T09:00:00Z",
    };
    const newer = (from: number, count: number, say = (id: number) => `chat ${id}`) =>
      chatter(from, count, say).map((c) => ({ ...c, createdAt: "2026-11-20T10:00:00Z" }));
    replySnapshot(
      scope,
      snapshotWith(tracking, window([progressComment(70, result), ...newer(600, 19)], true)),
    );
    replyRuns(scope, []);
    const older = [
      { id: 60, author: "alice", body: "/autopilot skip #7", createdAt: "2026-11-20T08:00:00Z" },
      ...newer(71, 5, (id) => (id === 71 ? "/autopilot status" : `chat ${id}`)),
    ];
    replyOlder(scope, 7, "cursor-before-70", older, true);
    const { world } = await snapshot(github.gateway({ memory: newRepoMemory() }));
    expect(scope.isDone()).toBe(true);
    expect(world.comments.find((c) => c.id === 71)).toMatchObject({ issue: 7, body: "/autopilot status" });
  });

  it("cost nothing for a result already acted on, however deep it lies", async () => {
    const scope = nock(API);
    const tracking = gqlTracking({ number: 1, body: trackingBody(1_000, "IC_node70", true) });
    replySnapshot(scope, snapshotWith(tracking, window(chatter(101, 20), true)));
    replyRuns(scope, []);
    const gw = github.gateway({ memory: newRepoMemory() });
    await snapshot(gw);
    expect(scope.isDone()).toBe(true);
    expect(totalOf(gw.requests())).toBe(2);
  });

  it("cost nothing when the windows hold the result and everything since the cursor", async () => {
    const scope = nock(API);
    const tracking = {
      ...gqlTracking({ number: 1, body: trackingBody(150, "IC_node70") }),
      comments: window(chatter(120, 30), true),
    };
    replySnapshot(
      scope,
      snapshotWith(tracking, window([progressComment(70, result), ...chatter(400, 19)], true)),
    );
    replyRuns(scope, []);
    const gw = github.gateway({ memory: newRepoMemory() });
    const { world } = await snapshot(gw);
    expect(scope.isDone()).toBe(true);
    expect(totalOf(gw.requests())).toBe(2);
    expect(world.workerResults).toEqual([result]);
  });
});
