import nock from "nock";
import { describe, expect, it } from "vitest";
import { totalOf } from "../../src/github/transport/counter.js";
import { parseRunTitle } from "../../src/core/contract.js";
import { newRepoMemory } from "../../src/github/snapshot/snapshot.js";
import {
  API,
  gqlClosedIssue,
  gqlComment,
  gqlIssue,
  gqlPull,
  gqlTracking,
  nockGateway,
  OWNER,
  progressComment,
  REPO,
  replyDiff,
  replyRuns,
  replySnapshot,
  settingsFor,
  restRun,
  snapshotPage,
  workerResult,
} from "./fixtures.js";

const github = nockGateway();
const gateway = (memory = newRepoMemory()) => github.gateway({ memory });

describe("the world snapshot", () => {
  it("costs two requests on an idle repository: one GraphQL query and one list of worker runs", async () => {
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->\nhello" }),
      }),
    );
    replyRuns(scope, []);
    const gw = gateway();
    const { world } = await gw.snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(totalOf(gw.requests())).toBe(2);
    expect(gw.requests()).toEqual({
      "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs": 1,
      "POST /graphql": 1,
    });
    expect(world.trackingIssue).toMatchObject({ number: 1, pinned: true, state: "open" });
    expect(world.issues).toEqual([]);
    expect(world.configText).toBeNull();
  });

  it("maps pool issues, pull requests on Autopilot branches, runs, comments and worker results", async () => {
    const result = workerResult({ issue: 7, status: "running" });
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        ownerType: "User",
        config: "maxParallel: 3\n",
        tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }),
        issues: [
          gqlIssue({ number: 5, labels: ["autopilot:ready"], readyBy: OWNER, body: "Depends on #3" }),
          gqlIssue({
            number: 7,
            labels: ["autopilot:in-progress"],
            comments: [
              progressComment(70, result),
              { id: 71, author: "someone", body: "/autopilot status" },
              { id: 72, author: "github-actions[bot]", bot: true, body: "/autopilot start" },
            ],
            parent: { number: 2, state: "OPEN" },
          }),
        ],
        closed: [gqlClosedIssue(3, ["autopilot:review"])],
        pulls: [
          gqlPull({
            number: 20,
            issue: 7,
            checks: [{ name: "test", status: "IN_PROGRESS", conclusion: null }],
          }),
          gqlPull({ number: 21, issue: 9, headRef: "feature/unrelated" }),
        ],
      }),
    );
    replyRuns(scope, [restRun({ id: 900, issue: 7, dispatchId: "7-1-abc" })]);
    scope
      .get(`/repos/${OWNER}/${REPO}/collaborators/someone/permission`)
      .reply(200, { permission: "read", role_name: "read" });

    const { world } = await gateway().snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.repo).toEqual({ owner: OWNER, name: REPO, defaultBranch: "main" });
    expect(world.configText).toBe("maxParallel: 3\n");
    expect(world.issues.map((i) => [i.number, i.state])).toEqual([
      [2, "open"],
      [3, "closed"],
      [5, "open"],
      [7, "open"],
    ]);
    expect(world.issues.find((i) => i.number === 5)).toMatchObject({ readyLabeledBy: OWNER, blockedBy: [] });
    expect(world.issues.find((i) => i.number === 7)).toMatchObject({
      parent: 2,
      labels: ["autopilot:in-progress"],
    });
    expect(world.pulls.map((p) => p.number)).toEqual([20]);
    expect(world.pulls[0]).toMatchObject({
      headRef: "autopilot/issue-7",
      mergeable: "MERGEABLE",
      checks: [{ name: "test", status: "in_progress", conclusion: null, app: "github-actions" }],
    });
    expect(world.runs).toEqual([
      expect.objectContaining({
        id: 900,
        issue: 7,
        attempt: 1,
        dispatchId: "7-1-abc",
        status: "in_progress",
      }),
    ]);
    // Bot comments are never commands: only the person's comment is offered to the decisions.
    expect(world.comments.map((c) => c.id)).toEqual([71]);
    expect(world.workerResults).toEqual([result]);
    // The owner of a personal repository is an admin without a lookup; "someone" was looked up once.
    expect(world.permissions).toEqual({ [OWNER]: "admin", someone: "read" });
  });

  it("reads the newest comments of a merged task's pull request and of its closed issue, in the same query", async () => {
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }),
        closedPulls: [
          {
            ...gqlPull({ number: 30, issue: 4 }),
            state: "MERGED",
            headRef: null,
            comments: { nodes: [gqlComment({ id: 91, author: "dev", body: "/autopilot rollback" })] },
          },
        ],
        commentedClosed: [
          {
            ...gqlClosedIssue(4),
            comments: { nodes: [gqlComment({ id: 92, author: "dev", body: "/autopilot follow-up more" })] },
          },
        ],
      }),
    );
    replyRuns(scope, []);
    const gw = gateway();
    const { world } = await gw.snapshot({ settingsFor, permissionsFor: () => [] });
    expect(gw.requests()["POST /graphql"]).toBe(1);
    expect(world.comments.map((c) => [c.id, c.issue, c.body])).toEqual(
      expect.arrayContaining([
        [91, 30, "/autopilot rollback"],
        [92, 4, "/autopilot follow-up more"],
      ]),
    );
    expect(world.issues.find((i) => i.number === 4)).toMatchObject({ state: "closed", labels: [] });
    expect(world.pulls.find((p) => p.number === 30)?.state).toBe("merged");
  });

  it("reads the line comments of an open task PR's reviews as comments of their own kind", async () => {
    const scope = nock(API);
    const line = { ...gqlComment({ id: 93, author: "dev", body: "/autopilot status" }), path: "src/a.js" };
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }),
        pulls: [
          {
            ...gqlPull({ number: 20, issue: 7 }),
            reviewThreads: { nodes: [{ isResolved: false, comments: { nodes: [line] } }] },
          },
        ],
      }),
    );
    replyRuns(scope, []);
    const { world } = await gateway().snapshot({ settingsFor, permissionsFor: () => [] });
    expect(world.comments.find((c) => c.id === 93)).toMatchObject({
      issue: 20,
      body: "/autopilot status",
      review: true,
      acknowledged: false,
    });
  });

  it("reads whether Autopilot reacted to a comment on an open task PR, and never guesses when unread", async () => {
    // An open PR's comments were read without their reactions: Autopilot's reaction to `/autopilot fix` there
    // always read as missing, and the owed reaction went out again on every reconcile.
    const scope = nock(API);
    const pull = gqlPull({
      number: 20,
      issue: 7,
      comments: [
        { id: 94, author: "dev", body: "/autopilot fix more", acknowledged: true },
        { id: 95, author: "dev", body: "/autopilot fix again" },
      ],
    });
    const { reactionGroups: _notAsked, ...unread } = pull.comments.nodes[1]!;
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }),
        pulls: [
          { ...pull, comments: { nodes: [pull.comments.nodes[0]!, unread] } } as unknown as typeof pull,
        ],
      }),
    );
    replyRuns(scope, []);
    const { world } = await gateway().snapshot({ settingsFor, permissionsFor: () => [] });
    expect(world.comments.find((c) => c.id === 94)?.acknowledged).toBe(true);
    expect(world.comments.find((c) => c.id === 95)).not.toHaveProperty("acknowledged");
  });

  it("looks up a referenced issue outside the pool in one aliased query", async () => {
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({ issues: [gqlIssue({ number: 5, body: "Blocked by #40 and #41", readyBy: null })] }),
    );
    scope
      .post(
        "/graphql",
        (b: { query: string }) => b.query.includes("AutopilotIssueStates") && b.query.includes("i40:"),
      )
      .reply(200, {
        data: { repository: { i40: { __typename: "Issue", ...gqlClosedIssue(40) }, i41: null } },
        errors: [
          {
            type: "NOT_FOUND",
            path: ["repository", "i41"],
            message: "Could not resolve to an issue or pull request with the number of 41.",
          },
        ],
      });
    replyRuns(scope, []);
    const { world } = await gateway().snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.map((i) => [i.number, i.state])).toEqual([
      [5, "open"],
      [40, "closed"],
    ]);
  });

  it("reads native blocked-by relations with the pool, in the same query", async () => {
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        issues: [gqlIssue({ number: 5, readyBy: null, blockedBy: [{ number: 44, state: "OPEN" }] })],
      }),
    );
    replyRuns(scope, []);
    const gw = gateway();
    const { world } = await gw.snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(totalOf(gw.requests())).toBe(2);
    expect(world.issues.find((i) => i.number === 5)?.blockedBy).toEqual([44]);
    expect(world.issues.find((i) => i.number === 44)?.state).toBe("open");
  });

  it("leaves out the sub-issues of another repository (their numbers name other issues here)", async () => {
    const scope = nock(API);
    const elsewhere = { nameWithOwner: "other/repo" };
    const here = { nameWithOwner: `${OWNER}/${REPO}` };
    replySnapshot(
      scope,
      snapshotPage({
        issues: [
          gqlIssue({
            number: 5,
            readyBy: null,
            subIssues: [
              { number: 7, state: "OPEN", repository: elsewhere },
              { number: 8, state: "OPEN", repository: here },
            ],
          }),
        ],
      }),
    );
    replyRuns(scope, []);
    const { world } = await gateway().snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.find((i) => i.number === 5)?.subIssues).toEqual([8]);
    expect(world.issues.some((i) => i.number === 7)).toBe(false);
  });

  it("asks without blocked-by relations, from then on, when the server does not know the field", async () => {
    const memory = newRepoMemory();
    const scope = nock(API);
    scope
      .post("/graphql", (b: { query: string }) => b.query.includes("blockedBy("))
      .reply(200, {
        errors: [
          {
            message: "Field 'blockedBy' doesn't exist on type 'Issue'",
            extensions: { code: "undefinedField", typeName: "Issue", fieldName: "blockedBy" },
          },
        ],
      });
    replySnapshot(
      scope,
      snapshotPage({ issues: [gqlIssue({ number: 5, readyBy: null })] }),
      (v) => v.withRepo === true,
    );
    replyRuns(scope, []);
    const { world } = await gateway(memory).snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(memory.blockedByField).toBe(false);
    expect(world.issues.map((i) => i.number)).toEqual([5]);

    const again = nock(API);
    again
      .post("/graphql", (b: { query: string }) => !b.query.includes("blockedBy("))
      .reply(200, snapshotPage({ issues: [] }));
    replyRuns(again, []);
    await gateway(memory).snapshot({ settingsFor });
    expect(again.isDone()).toBe(true);
  });

  it("fetches the pool again when the config file names other labels than assumed", async () => {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ config: "labels:\n  ready: go\n", issues: [] }));
    replySnapshot(
      scope,
      snapshotPage({ issues: [gqlIssue({ number: 8, labels: ["go"], readyBy: null })] }),
      (v) => v.withRepo === false && (v.labels as string[]).includes("go"),
    );
    replyRuns(scope, []);
    const memory = newRepoMemory();
    const { world } = await gateway(memory).snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.map((i) => i.number)).toEqual([8]);
    expect(memory.poolLabels).toContain("go");
  });

  it("follows pagination of issues and pull requests with only the unfinished parts", async () => {
    const scope = nock(API);
    const first = snapshotPage({
      issues: [gqlIssue({ number: 1, labels: ["autopilot:review"] })],
      pulls: [gqlPull({ number: 30, issue: 1 })],
    });
    first.data.repository.issues.pageInfo = { hasNextPage: true, endCursor: "c1" } as never;
    first.data.rateLimit = { cost: 9, remaining: 4991, resetAt: "2026-01-01T01:00:00Z" };
    (first.data.repository.issues as { totalCount?: number }).totalCount = 2;
    replySnapshot(scope, first);
    replyDiff(scope, "a".repeat(40), [
      { filename: "src/a.ts", status: "modified", changes: 1, patch: "@@ -1 +1 @@\n-a\n+b" },
    ]);
    const second = snapshotPage({ issues: [gqlIssue({ number: 2, labels: ["autopilot:review"] })] });
    second.data.rateLimit = { cost: 7, remaining: 4984, resetAt: "2026-01-01T01:00:00Z" };
    replySnapshot(
      scope,
      second,
      // A later page asks for what is left (totalCount), not for a full page: points go by the size asked.
      (v) => v.withRepo === false && v.issuesAfter === "c1" && v.withPulls === false && v.issuesFirst === 1,
    );
    replyRuns(scope, []);
    const { world, facts } = await gateway().snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.map((i) => i.number)).toEqual([1, 2]);
    expect(world.pulls.map((p) => p.number)).toEqual([30]);
    // The points of the whole snapshot: every page's rateLimit.cost, the budget left after the last.
    expect(facts.rateLimit).toEqual({ cost: 16, remaining: 4984, resetAt: "2026-01-01T01:00:00Z" });
  });
});

describe("a worker that finishes while the snapshot is being read", () => {
  // The worker writes its final result into its progress comment, then its run completes. Whichever of the
  // snapshot's two reads comes first, the worker finishes right after it.
  function finishingWorker(scope: nock.Scope) {
    let finished = false;
    const running = workerResult({ issue: 7, status: "running" });
    const done = workerResult({ issue: 7, status: "finished", result: "complete", prNumber: 20 });
    scope
      .post("/graphql", (b: { query: string }) => b.query.includes("query AutopilotSnapshot"))
      .reply(200, () => {
        const page = snapshotPage({
          tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }),
          issues: [
            gqlIssue({
              number: 7,
              labels: ["autopilot:in-progress"],
              comments: [progressComment(70, finished ? done : running)],
            }),
          ],
        });
        finished = true;
        return page;
      });
    scope
      .get(`/repos/${OWNER}/${REPO}/actions/workflows/autopilot-worker.yml/runs`)
      .query(true)
      .reply(200, () => {
        const run = restRun({
          id: 900,
          issue: 7,
          status: finished ? "completed" : "in_progress",
          conclusion: finished ? "success" : null,
        });
        finished = true;
        return { total_count: 1, workflow_runs: [run] };
      });
  }

  it("never shows its run completed without the result it wrote before completing", async () => {
    const scope = nock(API);
    finishingWorker(scope);
    const { world } = await gateway().snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    const run = world.runs.find((r) => r.issue === 7)!;
    const result = world.workerResults.find((r) => r.issue === 7)!;
    // Runs first: the run was still going, and the comments read after it already hold the final result. The
    // other order shows a completed run next to a running result, which reads as a crash.
    expect({ run: run.status, result: result.status }).toEqual({ run: "in_progress", result: "finished" });
  });
});

describe("worker run titles", () => {
  it("carry the issue, the attempt and the dispatch id", () => {
    expect(parseRunTitle("autopilot #12 attempt 3 [12-3-lq2x9]")).toEqual({
      issue: 12,
      attempt: 3,
      dispatchId: "12-3-lq2x9",
    });
    expect(parseRunTitle("Autopilot worker")).toBeNull();
  });
});
