import nock from "nock";
import { describe, expect, it } from "vitest";
import { createWorkerGitHub, type WorkerGitHub } from "../../src/github/worker-github.js";
import { nockGitHub } from "../helpers/validating-fetch.js";

const API = "https://api.github.com";
const R = "/repos/acme/widgets";

const github = nockGitHub();

function client(): WorkerGitHub {
  return createWorkerGitHub(github.octokit(), { owner: "acme", repo: "widgets" });
}

const user = (login: string, type = "User") => ({ login, id: 1, type });
const comment = (id: number, login: string, body: string) => ({
  id,
  body,
  user: user(login, login.endsWith("[bot]") ? "Bot" : "User"),
  created_at: "2026-11-22T00:00:00Z",
  updated_at: "2026-11-22T00:00:01Z",
});

describe("the worker's GitHub client", () => {
  it("reads the task issue with its labels", async () => {
    const scope = nock(API)
      .get(`${R}/issues/7`)
      .reply(200, {
        number: 7,
        title: "Add a greeting",
        body: null,
        state: "open",
        labels: [{ name: "autopilot:in-progress" }, "critical"],
        user: user("alice"),
      });
    const issue = await client().getIssue(7);
    expect(issue).toEqual({
      number: 7,
      title: "Add a greeting",
      body: "",
      state: "open",
      labels: ["autopilot:in-progress", "critical"],
      author: "alice",
    });
    expect(scope.isDone()).toBe(true);
  });

  it("pages through every comment", async () => {
    const scope = nock(API)
      .get(`${R}/issues/7/comments`)
      .query({ per_page: "100" })
      .reply(200, [comment(1, "alice", "first")], {
        link: `<${API}${R}/issues/7/comments?per_page=100&page=2>; rel="next"`,
      })
      .get(`${R}/issues/7/comments`)
      .query({ per_page: "100", page: "2" })
      .reply(200, [comment(2, "autopilot[bot]", "second")]);
    const comments = await client().listIssueComments(7);
    expect(comments.map((c) => [c.id, c.author, c.authorType])).toEqual([
      [1, "alice", "User"],
      [2, "autopilot[bot]", "Bot"],
    ]);
    expect(scope.isDone()).toBe(true);
  });

  it("creates, re-reads, edits and deletes its progress comment", async () => {
    const scope = nock(API)
      .post(`${R}/issues/7/comments`, { body: "running" })
      .reply(201, comment(9, "autopilot[bot]", "running"))
      .get(`${R}/issues/comments/9`)
      .reply(200, comment(9, "autopilot[bot]", "running"))
      .patch(`${R}/issues/comments/9`, { body: "done" })
      .reply(200, comment(9, "autopilot[bot]", "done"))
      .delete(`${R}/issues/comments/9`)
      .reply(204)
      .get(`${R}/issues/comments/9`)
      .reply(404, { message: "Not Found" });
    const github = client();
    expect((await github.createComment(7, "running")).id).toBe(9);
    expect((await github.getComment(9))?.body).toBe("running");
    await github.updateComment(9, "done");
    await github.deleteComment(9);
    expect(await github.getComment(9)).toBeNull();
    expect(scope.isDone()).toBe(true);
    expect(github.requestCount).toBe(5);
  });

  it("reads a login's permission once, maintain and triage roles included, and strangers as none", async () => {
    const scope = nock(API)
      .get(`${R}/collaborators/bob/permission`)
      .reply(200, { permission: "write", role_name: "maintain", user: user("bob") })
      .get(`${R}/collaborators/eve/permission`)
      .reply(404, { message: "Not Found" });
    const github = client();
    expect(await github.getPermission("bob")).toBe("maintain");
    expect(await github.getPermission("bob")).toBe("maintain");
    expect(await github.getPermission("eve")).toBe("none");
    expect(scope.isDone()).toBe(true);
  });

  it("reads the tracking issue body in one request", async () => {
    const scope = nock(API).get(`${R}/issues/1`).reply(200, {
      number: 1,
      title: "Autopilot dashboard",
      body: "<!-- autopilot:state v1\n{}\n-->",
      state: "open",
      labels: [],
    });
    expect(await client().getIssueBody(1)).toContain("autopilot:state");
    expect(scope.isDone()).toBe(true);
  });

  const pull = {
    number: 12,
    title: "Add a greeting (#7)",
    body: "Closes #7",
    state: "open",
    head: { ref: "autopilot/issue-7", sha: "abc" },
    base: { ref: "main" },
    labels: [],
    html_url: "https://github.com/acme/widgets/pull/12",
  };

  it("finds the open PR of the task branch, opens one and updates it", async () => {
    const scope = nock(API)
      .get(`${R}/pulls`)
      .query({ state: "open", head: "acme:autopilot/issue-7", per_page: "100" })
      .reply(200, [])
      .post(`${R}/pulls`, {
        title: "Add a greeting (#7)",
        body: "Closes #7",
        head: "autopilot/issue-7",
        base: "main",
      })
      .reply(201, pull)
      .patch(`${R}/pulls/12`, { body: "Closes #7 (updated)" })
      .reply(200, pull);
    const github = client();
    expect(await github.findOpenPull("autopilot/issue-7")).toBeNull();
    const created = await github.createPull({
      title: "Add a greeting (#7)",
      body: "Closes #7",
      head: "autopilot/issue-7",
      base: "main",
    });
    expect(created.number).toBe(12);
    await github.updatePull(12, { body: "Closes #7 (updated)" });
    expect(scope.isDone()).toBe(true);
  });

  it("adds labels and removes one that may already be gone", async () => {
    const scope = nock(API)
      .post(`${R}/issues/7/labels`, { labels: ["autopilot:review"] })
      .reply(200, [{ name: "autopilot:review" }])
      .delete(`${R}/issues/7/labels/autopilot%3Ain-progress`)
      .reply(404, { message: "Label does not exist" });
    const github = client();
    await github.addLabels(7, ["autopilot:review"]);
    await github.removeLabel(7, "autopilot:in-progress");
    expect(scope.isDone()).toBe(true);
  });

  it("lists the failing check runs and commit statuses of the PR head", async () => {
    const scope = nock(API)
      .get(`${R}/commits/abc/check-runs`)
      .query({ filter: "latest", per_page: "100" })
      .reply(200, {
        total_count: 2,
        check_runs: [
          {
            name: "test",
            status: "completed",
            conclusion: "failure",
            output: { title: "1 failed", summary: "expected 2", text: null },
            html_url: "https://ci/1",
          },
          { name: "lint", status: "completed", conclusion: "success", output: {}, html_url: "https://ci/2" },
        ],
      })
      .get(`${R}/commits/abc/status`)
      .query({ per_page: "100" })
      .reply(200, {
        state: "failure",
        statuses: [
          { context: "deploy-preview", state: "error", description: "build broke", target_url: "https://p" },
          { context: "cla", state: "success", description: "ok", target_url: null },
        ],
      });
    const checks = await client().listFailingChecks("abc");
    expect(checks.map((c) => [c.name, c.conclusion, c.summary])).toEqual([
      ["test", "failure", "expected 2"],
      ["deploy-preview", "error", "build broke"],
    ]);
    expect(scope.isDone()).toBe(true);
  });

  it("collects reviews with a body and inline review comments, oldest first, leaving out resolved conversations", async () => {
    const scope = nock(API)
      .get(`${R}/pulls/12/reviews`)
      .query({ per_page: "100" })
      .reply(200, [
        {
          id: 1,
          user: user("bob"),
          body: "Please rename.",
          state: "CHANGES_REQUESTED",
          submitted_at: "2026-11-22T02:00:00Z",
        },
        { id: 2, user: user("bob"), body: "", state: "APPROVED", submitted_at: "2026-11-22T03:00:00Z" },
      ])
      .get(`${R}/pulls/12/comments`)
      .query({ per_page: "100" })
      .reply(200, [
        {
          id: 5,
          user: user("bob"),
          body: "Typo here.",
          path: "src/a.ts",
          line: 4,
          created_at: "2026-11-22T01:00:00Z",
        },
        {
          id: 6,
          user: user("bob"),
          body: "Settled nit.",
          path: "src/b.ts",
          line: 1,
          created_at: "2026-11-22T01:30:00Z",
        },
      ])
      .post("/graphql", (body: { query?: string }) =>
        /AutopilotResolvedReviewComments/.test(body.query ?? ""),
      )
      .reply(200, {
        data: {
          repository: {
            pullRequest: {
              reviewThreads: {
                nodes: [
                  { isResolved: false, comments: { nodes: [{ databaseId: 5 }] } },
                  { isResolved: true, comments: { nodes: [{ databaseId: 6 }] } },
                ],
              },
            },
          },
        },
      });
    const feedback = await client().listReviewFeedback(12);
    expect(feedback.map((f) => [f.kind, f.body, f.path])).toEqual([
      ["review_comment", "Typo here.", "src/a.ts"],
      ["review", "Please rename.", null],
    ]);
    expect(scope.isDone()).toBe(true);
  });
});
