import nock from "nock";
import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/core/effects.js";
import { totalOf } from "../../src/github/transport/counter.js";
import { API, BOT, gqlIssue, gqlPull, gqlTracking, restRun } from "./fixtures.js";

import { lockDispatch, R, stateBody, withSnapshot } from "./execute-setup.js";

describe("executing effects", () => {
  it("sets a state label by adding the new one and removing only the old ones present", async () => {
    const gw = await withSnapshot({
      issues: [gqlIssue({ number: 5, labels: ["autopilot:ready", "critical"], readyBy: null })],
    });
    const scope = nock(API)
      .post(`${R}/issues/5/labels`, { labels: ["autopilot:in-progress"] })
      .reply(200, [])
      .delete(`${R}/issues/5/labels/autopilot%3Aready`)
      .reply(200, []);
    const report = await gw.execute([
      {
        type: "setStateLabel",
        issue: 5,
        add: "autopilot:in-progress",
        remove: ["autopilot:ready", "autopilot:review"],
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
  });

  it("changes nothing when an effect is repeated (a duplicate delivery)", async () => {
    const gw = await withSnapshot(
      {
        issues: [
          gqlIssue({
            number: 5,
            labels: ["autopilot:in-progress"],
            readyBy: null,
            comments: [
              { id: 1, author: BOT, bot: true, mine: true, body: "Started.\n\n<!-- autopilot:start-5-1 -->" },
            ],
          }),
        ],
        pulls: [],
      },
      [restRun({ id: 900, issue: 5, dispatchId: "5-1-x", status: "completed", conclusion: "success" })],
    );
    const before = totalOf(gw.requests());
    const effects: Effect[] = [
      { type: "setStateLabel", issue: 5, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
      { type: "comment", issue: 5, body: "Started.", key: "start-5-1" },
      { type: "dispatchWorker", issue: 5, attempt: 1, dispatchId: "5-1-x" },
      { type: "cancelRun", runId: 900 },
    ];
    const report = await gw.execute(effects);
    expect(report.outcomes.map((o) => o.status)).toEqual(["skipped", "skipped", "skipped", "skipped"]);
    expect(totalOf(gw.requests())).toBe(before);
  });

  it("comments with a hidden key marker, and writes a keyed comment once per run", async () => {
    const gw = await withSnapshot({});
    const scope = nock(API)
      .post(
        `${R}/issues/9/comments`,
        (b: { body: string }) => b.body === "Hello\n\n<!-- autopilot:hello-9 -->",
      )
      .reply(201, { id: 1 });
    const report = await gw.execute([
      { type: "comment", issue: 9, body: "Hello", key: "hello-9" },
      { type: "comment", issue: 9, body: "Hello", key: "hello-9" },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "skipped"]);
  });

  it("still writes a keyed comment when only someone else's comment carries its key", async () => {
    // mallory copied the hidden key into her comment to keep Autopilot's explanation off the issue.
    const gw = await withSnapshot({
      issues: [
        gqlIssue({
          number: 9,
          labels: ["autopilot:review"],
          readyBy: null,
          comments: [{ id: 1, author: "mallory", body: "nothing to see\n\n<!-- autopilot:gate-20 -->" }],
        }),
      ],
    });
    const scope = nock(API)
      .post(`${R}/issues/9/comments`, (b: { body: string }) => b.body.endsWith("<!-- autopilot:gate-20 -->"))
      .reply(201, { id: 2 });
    const report = await gw.execute([{ type: "comment", issue: 9, body: "Needs a person.", key: "gate-20" }]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done"]);
  });

  it("dispatches the worker workflow on the default branch with the documented inputs", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    const scope = lockDispatch(nock(API), 5, 2)
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`, {
        ref: "main",
        inputs: {
          config: '{"maxIterations":5}',
          issue: "5",
          attempt: "2",
          "dispatch-id": "5-2-abc",
          "tracking-issue": "1",
        },
        return_run_details: true,
      })
      .reply(200, {
        workflow_run_id: 4242,
        run_url: "https://api.github.com/x",
        html_url: "https://github.com/x",
      });
    const report = await gw.execute([
      {
        type: "dispatchWorker",
        issue: 5,
        attempt: 2,
        dispatchId: "5-2-abc",
        inputs: { config: '{"maxIterations":5}' },
      },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "done", runId: 4242 });
  });

  it("does not dispatch an attempt whose lock another controller already took", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    // No dispatch is mocked: nock fails the test if one is sent.
    const scope = lockDispatch(nock(API), 5, 2, { taken: true });
    const report = await gw.execute([
      { type: "dispatchWorker", issue: 5, attempt: 2, dispatchId: "5-2-xyz" },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "skipped" });
    expect(report.outcomes[0]?.detail).toContain("another controller already dispatched #5 attempt 2");
  });

  it("re-sends a recorded dispatch without taking the lock its first send took", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    const scope = nock(API)
      .get(`${R}/actions/workflows/autopilot-worker.yml/runs`)
      .query(true)
      .reply(200, {
        total_count: 1,
        workflow_runs: [{ id: 9, display_title: "autopilot #5 attempt 2 [5-2-old]" }],
      })
      .post(`${R}/actions/workflows/autopilot-worker.yml/dispatches`)
      .reply(200, {
        workflow_run_id: 4243,
        run_url: "https://api.github.com/x",
        html_url: "https://github.com/x",
      });
    const report = await gw.execute([
      { type: "dispatchWorker", issue: 5, attempt: 2, dispatchId: "5-2-abc", resend: true },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "done", runId: 4243 });
  });

  it("does not re-send a dispatch whose run appeared after the snapshot that decided the resend", async () => {
    const gw = await withSnapshot({ tracking: gqlTracking({ number: 1, body: stateBody(3) }) });
    // No dispatch is mocked: nock fails the test if one is sent.
    const scope = nock(API)
      .get(`${R}/actions/workflows/autopilot-worker.yml/runs`)
      .query((q) => q.event === "workflow_dispatch")
      .reply(200, {
        total_count: 2,
        workflow_runs: [
          { id: 1202, display_title: "autopilot #5 attempt 2 [5-2-abc]" },
          { id: 1100, display_title: "autopilot #4 attempt 1 [4-1-abc]" },
        ],
      });
    const report = await gw.execute([
      { type: "dispatchWorker", issue: 5, attempt: 2, dispatchId: "5-2-abc", resend: true },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "skipped" });
    expect(report.outcomes[0]?.detail).toBe("run 1202 already carries dispatch 5-2-abc");
  });

  it("merges only at the expected head SHA and reports a refused merge instead of failing", async () => {
    const sha = "b".repeat(40);
    const gw = await withSnapshot({ pulls: [gqlPull({ number: 20, issue: 5, headSha: sha })] });
    const scope = nock(API)
      .put(`${R}/pulls/20/merge`, { sha, merge_method: "squash" })
      .reply(409, { message: "Head branch was modified. Review and try the merge again." })
      .post(`${R}/issues/20/comments`, (b: { body: string }) => b.body.includes("Head branch was modified"))
      .reply(201, { id: 1 })
      .put(`${R}/pulls/21/merge`, { sha, merge_method: "squash" })
      .reply(405, { message: "Pull Request is not mergeable" })
      .post(`${R}/issues/21/comments`, (b: { body: string }) =>
        b.body.includes("Pull Request is not mergeable"),
      )
      .reply(201, { id: 2 });
    const report = await gw.execute([
      { type: "mergePr", pr: 20, issue: 5, method: "squash", expectedHeadSha: sha },
      { type: "mergePr", pr: 21, issue: 6, method: "squash", expectedHeadSha: sha },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["not-mergeable", "not-mergeable"]);
    expect(report.outcomes[0]?.detail).toMatch(/Head branch was modified/);
  });

  it("says nothing on a PR that was merged meanwhile (another controller, auto-merge, a person): GitHub refuses that merge too", async () => {
    const sha = "d".repeat(40);
    const gw = await withSnapshot({ pulls: [gqlPull({ number: 22, issue: 7, headSha: sha })] });
    const scope = nock(API)
      .put(`${R}/pulls/22/merge`, { sha, merge_method: "squash" })
      .reply(405, { message: "Pull Request is not mergeable" })
      .get(`${R}/pulls/22`)
      .reply(200, { number: 22, state: "closed", merged: true });
    const report = await gw.execute([
      { type: "mergePr", pr: 22, issue: 7, method: "squash", expectedHeadSha: sha, attempt: 1 },
    ]);
    // No refusal comment was posted (nock would have answered "no match" to it, and scope lists every request).
    expect(scope.isDone()).toBe(true);
    expect(nock.pendingMocks()).toEqual([]);
    expect(report.outcomes[0]).toMatchObject({ status: "skipped", detail: "already merged" });
  });

  it("explains a refused merge in one PR comment: written once, then edited in place on a later refusal", async () => {
    const sha = "c".repeat(40);
    const reviews = "At least 1 approving review is required by reviewers with write access.";
    const first = await withSnapshot({ pulls: [gqlPull({ number: 30, issue: 8, headSha: sha })] });
    let posted = "";
    const scope = nock(API)
      .put(`${R}/pulls/30/merge`, { sha, merge_method: "squash" })
      .reply(405, { message: reviews })
      .post(`${R}/issues/30/comments`, (b: { body: string }) => {
        posted = b.body;
        return true;
      })
      .reply(201, { id: 555 });
    const report = await first.execute([
      { type: "mergePr", pr: 30, issue: 8, method: "squash", expectedHeadSha: sha, attempt: 1 },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: "not-mergeable" });
    expect(posted).toContain(`> ${reviews}`);
    expect(posted).toContain("/autopilot retry #8");
    expect(posted).toContain(`<!-- autopilot:merge-refusal sha=${sha} attempt=1 -->`);

    // The next snapshot finds Autopilot's comment; a second refusal edits it instead of adding one.
    const second = await withSnapshot({
      pulls: [
        gqlPull({ number: 30, issue: 8, headSha: sha, comments: [{ id: 555, author: BOT, body: posted }] }),
      ],
    });
    const edit = nock(API)
      .put(`${R}/pulls/30/merge`, { sha, merge_method: "squash" })
      .reply(405, { message: reviews })
      .patch(`${R}/issues/comments/555`, (b: { body: string }) => b.body.includes("attempt=2"))
      .reply(200, { id: 555 });
    await second.execute([
      { type: "mergePr", pr: 30, issue: 8, method: "squash", expectedHeadSha: sha, attempt: 2 },
    ]);
    expect(edit.isDone()).toBe(true);
  });

  describe("a refused merge handed to GitHub's own mechanism", () => {
    const sha = "d".repeat(40);
    const REVIEWS = "At least 1 approving review is required by reviewers with write access.";
    const isMutation =
      (name: string, check: (v: Record<string, unknown>) => boolean) =>
      (b: { query: string; variables: Record<string, unknown> }) =>
        b.query.includes(`mutation ${name}`) && check(b.variables);

    it("turns on auto-merge for exactly the approved head when reviews are required, and says so on the PR", async () => {
      const gw = await withSnapshot({
        pulls: [
          gqlPull({
            number: 40,
            issue: 9,
            headSha: sha,
            merge: { id: "PR_40", mergeStateStatus: "BLOCKED" },
          }),
        ],
      });
      let posted = "";
      const scope = nock(API)
        .put(`${R}/pulls/40/merge`, { sha, merge_method: "squash" })
        .reply(405, { message: REVIEWS })
        .post(
          "/graphql",
          isMutation(
            "AutopilotEnableAutoMerge",
            (v) => v.pullRequestId === "PR_40" && v.expectedHeadOid === sha && v.mergeMethod === "SQUASH",
          ),
        )
        .reply(200, {
          data: {
            enablePullRequestAutoMerge: {
              pullRequest: { number: 40, autoMergeRequest: { enabledAt: "2026-11-20T10:00:00Z" } },
            },
          },
        })
        .post(`${R}/issues/40/comments`, (b: { body: string }) => {
          posted = b.body;
          return true;
        })
        .reply(201, { id: 600 });
      const report = await gw.execute([
        { type: "mergePr", pr: 40, issue: 9, method: "squash", expectedHeadSha: sha, attempt: 1 },
      ]);
      expect(scope.isDone()).toBe(true);
      expect(report.outcomes[0]).toMatchObject({ status: "handed-to-github" });
      expect(posted).toContain("Auto-merge is on for this pull request");
      expect(posted).toContain("once an approving review by someone with write access is in");
      expect(posted).toContain(`<!-- autopilot:merge-refusal sha=${sha} attempt=1 via=auto-merge -->`);
    });

    it("explains and says what to change when the repository does not allow auto-merge", async () => {
      const gw = await withSnapshot({
        pulls: [
          gqlPull({
            number: 41,
            issue: 9,
            headSha: sha,
            merge: { id: "PR_41", mergeStateStatus: "BLOCKED" },
          }),
        ],
      });
      let posted = "";
      const scope = nock(API)
        .put(`${R}/pulls/41/merge`, { sha, merge_method: "squash" })
        .reply(405, { message: REVIEWS })
        .post(
          "/graphql",
          isMutation("AutopilotEnableAutoMerge", () => true),
        )
        .reply(200, {
          data: { enablePullRequestAutoMerge: null },
          errors: [{ type: "UNPROCESSABLE", message: "Auto merge is not allowed for this repository" }],
        })
        .post(`${R}/issues/41/comments`, (b: { body: string }) => {
          posted = b.body;
          return true;
        })
        .reply(201, { id: 601 });
      const report = await gw.execute([
        { type: "mergePr", pr: 41, issue: 9, method: "squash", expectedHeadSha: sha, attempt: 1 },
      ]);
      expect(scope.isDone()).toBe(true);
      expect(report.outcomes[0]).toMatchObject({ status: "not-mergeable" });
      expect(posted).toContain("Autopilot could not merge this pull request");
      expect(posted).toContain("Auto merge is not allowed for this repository");
      expect(posted).toContain("**Allow auto-merge**");
      expect(posted).toContain(`<!-- autopilot:merge-refusal sha=${sha} attempt=1 -->`);
    });

    it("adds the head to a required merge queue", async () => {
      const gw = await withSnapshot({
        pulls: [
          gqlPull({
            number: 42,
            issue: 9,
            headSha: sha,
            merge: { id: "PR_42", mergeStateStatus: "BLOCKED" },
          }),
        ],
      });
      const scope = nock(API)
        .put(`${R}/pulls/42/merge`, { sha, merge_method: "squash" })
        .reply(405, {
          message: "Repository rule violations found\n\nChanges must be made through the merge queue\n\n",
        })
        .post(
          "/graphql",
          isMutation(
            "AutopilotEnqueuePullRequest",
            (v) => v.pullRequestId === "PR_42" && v.expectedHeadOid === sha,
          ),
        )
        .reply(200, { data: { enqueuePullRequest: { mergeQueueEntry: { position: 1, state: "QUEUED" } } } })
        .post(`${R}/issues/42/comments`, (b: { body: string }) => b.body.includes("via=queue"))
        .reply(201, { id: 602 });
      const report = await gw.execute([
        { type: "mergePr", pr: 42, issue: 9, method: "squash", expectedHeadSha: sha, attempt: 1 },
      ]);
      expect(scope.isDone()).toBe(true);
      expect(report.outcomes[0]).toMatchObject({ status: "handed-to-github" });
    });

    it("updates a branch that must be up to date, pinned to the approved head", async () => {
      const gw = await withSnapshot({
        pulls: [
          gqlPull({ number: 43, issue: 9, headSha: sha, merge: { id: "PR_43", mergeStateStatus: "BEHIND" } }),
        ],
      });
      const scope = nock(API)
        .put(`${R}/pulls/43/merge`, { sha, merge_method: "squash" })
        .reply(405, { message: "1 of 1 required status checks are expected." })
        .put(`${R}/pulls/43/update-branch`, { expected_head_sha: sha })
        .reply(202, { message: "Updating pull request branch.", url: "https://github.com" })
        .post(`${R}/issues/43/comments`, (b: { body: string }) => b.body.includes("via=update-branch"))
        .reply(201, { id: 603 });
      const report = await gw.execute([
        { type: "mergePr", pr: 43, issue: 9, method: "squash", expectedHeadSha: sha, attempt: 1 },
      ]);
      expect(scope.isDone()).toBe(true);
      expect(report.outcomes[0]).toMatchObject({ status: "handed-to-github" });
    });

    it("turns off its auto-merge when asked, and skips when the snapshot shows it off already", async () => {
      const gw = await withSnapshot({
        pulls: [
          gqlPull({
            number: 44,
            issue: 9,
            headSha: sha,
            merge: { id: "PR_44", autoMergeRequest: { mergeMethod: "SQUASH", enabledBy: { login: BOT } } },
          }),
          gqlPull({ number: 45, issue: 10, headSha: sha, merge: { id: "PR_45", autoMergeRequest: null } }),
        ],
      });
      const scope = nock(API)
        .post(
          "/graphql",
          isMutation("AutopilotDisableAutoMerge", (v) => v.pullRequestId === "PR_44"),
        )
        .reply(200, { data: { disablePullRequestAutoMerge: { pullRequest: { number: 44 } } } });
      const report = await gw.execute([
        { type: "withdrawMerge", pr: 44, issue: 9, what: "auto-merge", reason: "the head changed" },
        { type: "withdrawMerge", pr: 45, issue: 10, what: "auto-merge", reason: "the head changed" },
      ]);
      expect(scope.isDone()).toBe(true);
      expect(report.outcomes.map((o) => o.status)).toEqual(["done", "skipped"]);
    });
  });

  it("closes with a reason, reacts, cancels a live run and deletes a branch (a missing one is fine)", async () => {
    const gw = await withSnapshot({}, [restRun({ id: 901, issue: 6, status: "in_progress" })]);
    const scope = nock(API)
      .patch(`${R}/issues/6`, { state: "closed", state_reason: "completed" })
      .reply(200, {})
      .post(`${R}/issues/comments/77/reactions`, { content: "eyes" })
      .reply(201, {})
      .post(`${R}/actions/runs/901/cancel`)
      .reply(202, {})
      .delete(`${R}/git/refs/heads%2Fautopilot%2Fissue-6`)
      .reply(422, { message: "Reference does not exist" });
    const report = await gw.execute([
      { type: "closeIssue", issue: 6, reason: "completed" },
      { type: "react", commentId: 77, content: "eyes" },
      { type: "cancelRun", runId: 901, issue: 6 },
      { type: "deleteBranch", branch: "autopilot/issue-6" },
    ]);
    expect(scope.isDone()).toBe(true);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "done", "skipped"]);
  });
});
