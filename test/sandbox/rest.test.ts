import { describe, expect, it } from "vitest";
import { client, octokit, owner, rejection, repo, sandbox, useRestSandbox } from "./rest-fixture.js";

useRestSandbox();

describe("REST statefulness", () => {
  it("create → get → list agree, and updates show everywhere", async () => {
    const created = await octokit.issues.create({
      owner,
      repo,
      title: "First",
      body: "Body",
      labels: ["bug"],
    });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({
      number: 1,
      title: "First",
      state: "open",
      user: { login: "autopilot[bot]" },
    });
    expect(created.data.labels.map((l) => (typeof l === "string" ? l : l.name))).toEqual(["bug"]);

    const got = await octokit.issues.get({ owner, repo, issue_number: 1 });
    expect(got.data).toMatchObject({ id: created.data.id, node_id: created.data.node_id, body: "Body" });
    expect(got.data.html_url).toContain("/acme/widgets/issues/1");

    await octokit.issues.update({
      owner,
      repo,
      issue_number: 1,
      title: "First, renamed",
      state: "closed",
      state_reason: "not_planned",
    });
    const listed = await octokit.issues.listForRepo({ owner, repo, state: "all" });
    expect(listed.data.map((i) => [i.number, i.title, i.state, i.state_reason])).toEqual([
      [1, "First, renamed", "closed", "not_planned"],
    ]);
    const open = await octokit.issues.listForRepo({ owner, repo });
    expect(open.data).toEqual([]);
    expect(sandbox.store.getIssue(`${owner}/${repo}`, 1)?.closedBy).toBe("autopilot[bot]");
  });

  it("lists with label, state and since filters and sorts", async () => {
    await octokit.issues.create({ owner, repo, title: "Ready A", labels: ["autopilot:ready", "critical"] });
    await octokit.issues.create({ owner, repo, title: "Ready B", labels: ["autopilot:ready"] });
    await octokit.issues.create({ owner, repo, title: "Other" });
    const ready = await octokit.issues.listForRepo({
      owner,
      repo,
      labels: "autopilot:ready",
      sort: "created",
      direction: "asc",
    });
    expect(ready.data.map((i) => i.title)).toEqual(["Ready A", "Ready B"]);
    const both = await octokit.issues.listForRepo({ owner, repo, labels: "autopilot:ready,critical" });
    expect(both.data.map((i) => i.title)).toEqual(["Ready A"]);
    const future = await octokit.issues.listForRepo({
      owner,
      repo,
      since: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(future.data).toEqual([]);
  });

  it("paginates with per_page/page and Link headers", async () => {
    for (let i = 0; i < 5; i++)
      await octokit.issues.create({ owner, repo, title: `Bulk ${i}`, labels: ["bulk"] });
    const first = await octokit.issues.listForRepo({
      owner,
      repo,
      labels: "bulk",
      per_page: 2,
      direction: "asc",
    });
    expect(first.data.map((i) => i.title)).toEqual(["Bulk 0", "Bulk 1"]);
    expect(first.headers.link).toMatch(/page=2.*rel="next"/);
    expect(first.headers.link).toMatch(/page=3.*rel="last"/);
    const all = await octokit.paginate(octokit.issues.listForRepo, {
      owner,
      repo,
      labels: "bulk",
      per_page: 2,
      direction: "asc",
    });
    expect(all.map((i) => i.title)).toEqual(["Bulk 0", "Bulk 1", "Bulk 2", "Bulk 3", "Bulk 4"]);
  });

  it("labels: create, list, add, set, remove — and records who applied them", async () => {
    await octokit.issues.createLabel({
      owner,
      repo,
      name: "autopilot:review",
      color: "0e8a16",
      description: "In review",
    });
    const labels = await octokit.issues.listLabelsForRepo({ owner, repo, per_page: 100 });
    expect(labels.data.map((l) => l.name)).toContain("autopilot:review");
    const dup = await rejection(octokit.issues.createLabel({ owner, repo, name: "autopilot:review" }));
    expect(dup.status).toBe(422);

    const issue = await octokit.issues.create({ owner, repo, title: "Label me" });
    const n = issue.data.number;
    const alice = client(sandbox.userToken("alice"));
    await alice.issues.addLabels({ owner, repo, issue_number: n, labels: ["autopilot:ready"] });
    await octokit.issues.setLabels({
      owner,
      repo,
      issue_number: n,
      labels: ["autopilot:in-progress", "critical"],
    });
    const afterRemove = await octokit.issues.removeLabel({ owner, repo, issue_number: n, name: "critical" });
    expect(afterRemove.data.map((l) => l.name)).toEqual(["autopilot:in-progress"]);
    const missing = await rejection(
      octokit.issues.removeLabel({ owner, repo, issue_number: n, name: "critical" }),
    );
    expect(missing.status).toBe(404);

    const events = await octokit.issues.listEvents({ owner, repo, issue_number: n });
    const labeled = events.data
      .filter((e) => e.event === "labeled")
      .map((e) => [(e as { label?: { name: string } }).label?.name, e.actor?.login]);
    expect(labeled).toEqual([
      ["autopilot:ready", "alice"],
      ["autopilot:in-progress", "autopilot[bot]"],
      ["critical", "autopilot[bot]"],
    ]);
    expect(sandbox.store.whoLabeled(`${owner}/${repo}`, n, "autopilot:ready")).toBe("alice");

    const mallory = client(sandbox.userToken("mallory"));
    const denied = await rejection(
      mallory.issues.addLabels({ owner, repo, issue_number: n, labels: ["autopilot:ready"] }),
    );
    expect(denied.status).toBe(403);
  });

  it("comments and reactions: create, list, get, update, delete", async () => {
    const issue = await octokit.issues.create({ owner, repo, title: "Talk" });
    const n = issue.data.number;
    const alice = client(sandbox.userToken("alice"));
    const c1 = await alice.issues.createComment({ owner, repo, issue_number: n, body: "/autopilot pause" });
    expect(c1.data).toMatchObject({
      body: "/autopilot pause",
      user: { login: "alice" },
      author_association: "COLLABORATOR",
    });
    const c2 = await octokit.issues.createComment({ owner, repo, issue_number: n, body: "progress v1" });
    await octokit.issues.updateComment({ owner, repo, comment_id: c2.data.id, body: "progress v2" });
    expect((await octokit.issues.getComment({ owner, repo, comment_id: c2.data.id })).data.body).toBe(
      "progress v2",
    );
    const listed = await octokit.issues.listComments({ owner, repo, issue_number: n });
    expect(listed.data.map((c) => c.body)).toEqual(["/autopilot pause", "progress v2"]);

    const reaction = await octokit.reactions.createForIssueComment({
      owner,
      repo,
      comment_id: c1.data.id,
      content: "eyes",
    });
    expect(reaction.status).toBe(201);
    const again = await octokit.reactions.createForIssueComment({
      owner,
      repo,
      comment_id: c1.data.id,
      content: "eyes",
    });
    expect(again.status).toBe(200);
    const reactions = await octokit.reactions.listForIssueComment({ owner, repo, comment_id: c1.data.id });
    expect(reactions.data.map((r) => [r.content, r.user?.login])).toEqual([["eyes", "autopilot[bot]"]]);
    await octokit.reactions.deleteForIssueComment({
      owner,
      repo,
      comment_id: c1.data.id,
      reaction_id: reaction.data.id,
    });
    expect(
      (await octokit.reactions.listForIssueComment({ owner, repo, comment_id: c1.data.id })).data,
    ).toEqual([]);

    await octokit.issues.deleteComment({ owner, repo, comment_id: c2.data.id });
    expect((await rejection(octokit.issues.getComment({ owner, repo, comment_id: c2.data.id }))).status).toBe(
      404,
    );
  });

  it("sub-issues, parent and blocked-by dependencies", async () => {
    const parent = await octokit.issues.create({ owner, repo, title: "Epic" });
    const child = await octokit.issues.create({ owner, repo, title: "Part" });
    const blocker = await octokit.issues.create({ owner, repo, title: "Blocker" });
    await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
      owner,
      repo,
      issue_number: parent.data.number,
      sub_issue_id: child.data.id,
    });
    const subs = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
      owner,
      repo,
      issue_number: parent.data.number,
    });
    expect(subs.data.map((i: { number: number }) => i.number)).toEqual([child.data.number]);
    const up = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/parent", {
      owner,
      repo,
      issue_number: child.data.number,
    });
    expect(up.data.number).toBe(parent.data.number);

    await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
      owner,
      repo,
      issue_number: child.data.number,
      issue_id: blocker.data.id,
    });
    const blockedBy = await octokit.request(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
      {
        owner,
        repo,
        issue_number: child.data.number,
      },
    );
    expect(blockedBy.data.map((i: { number: number }) => i.number)).toEqual([blocker.data.number]);
    const blocking = await octokit.request(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking",
      {
        owner,
        repo,
        issue_number: blocker.data.number,
      },
    );
    expect(blocking.data.map((i: { number: number }) => i.number)).toEqual([child.data.number]);
    const got = await octokit.issues.get({ owner, repo, issue_number: child.data.number });
    expect((got.data as { issue_dependencies_summary?: unknown }).issue_dependencies_summary).toMatchObject({
      blocked_by: 1,
      total_blocked_by: 1,
    });
    await octokit.request(
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}",
      {
        owner,
        repo,
        issue_number: child.data.number,
        issue_id: blocker.data.id,
      },
    );
    expect(sandbox.store.getIssue(`${owner}/${repo}`, child.data.number)?.blockedBy).toEqual([]);
  });

  it("locks an issue", async () => {
    const issue = await octokit.issues.create({ owner, repo, title: "Heated" });
    await octokit.issues.lock({ owner, repo, issue_number: issue.data.number, lock_reason: "too heated" });
    const got = await octokit.issues.get({ owner, repo, issue_number: issue.data.number });
    expect(got.data).toMatchObject({ locked: true, active_lock_reason: "too heated" });
  });
});

describe("git refs, pulls, reviews, checks", () => {
  it("creates a branch, opens, reviews and merges a PR (in-memory git)", async () => {
    const main = await octokit.git.getRef({ owner, repo, ref: "heads/main" });
    // A ref can only point at a commit the repository has: the feature commit is pushed first.
    const featureSha = "1".repeat(40);
    await sandbox.store.recordPush({
      repo: `${owner}/${repo}`,
      ref: "refs/tags/feature-source",
      before: "0".repeat(40),
      after: featureSha,
      pusher: "maintainer",
    });
    await expect(
      octokit.git.createRef({ owner, repo, ref: "refs/heads/nowhere", sha: "2".repeat(40) }),
    ).rejects.toMatchObject({ status: 422 });
    await octokit.git.createRef({ owner, repo, ref: "refs/heads/autopilot/issue-2", sha: featureSha });
    const matching = await octokit.git.listMatchingRefs({ owner, repo, ref: "heads/autopilot/" });
    expect(matching.data.map((r) => r.ref)).toEqual(["refs/heads/autopilot/issue-2"]);
    const branches = await octokit.repos.listBranches({ owner, repo });
    expect(branches.data.map((b) => b.name).sort()).toEqual(["autopilot/issue-2", "main"]);

    const pr = await octokit.pulls.create({
      owner,
      repo,
      title: "Do it (#2)",
      head: "autopilot/issue-2",
      base: "main",
      body: "Closes #2",
    });
    expect(pr.data).toMatchObject({
      state: "open",
      head: { ref: "autopilot/issue-2", sha: featureSha },
      base: { ref: "main" },
      merged: false,
    });
    const dup = await rejection(
      octokit.pulls.create({ owner, repo, title: "again", head: "autopilot/issue-2", base: "main" }),
    );
    expect(dup.status).toBe(422);

    const asIssue = await octokit.issues.get({ owner, repo, issue_number: pr.data.number });
    expect(asIssue.data.pull_request?.url).toContain(`/pulls/${pr.data.number}`);
    const byHead = await octokit.pulls.list({ owner, repo, head: `${owner}:autopilot/issue-2` });
    expect(byHead.data.map((p) => p.number)).toEqual([pr.data.number]);
    expect((await octokit.pulls.list({ owner, repo, base: "other" })).data).toEqual([]);

    await octokit.pulls.requestReviewers({ owner, repo, pull_number: pr.data.number, reviewers: ["alice"] });
    expect(
      (
        await octokit.pulls.listRequestedReviewers({ owner, repo, pull_number: pr.data.number })
      ).data.users.map((u) => u.login),
    ).toEqual(["alice"]);

    const check = await octokit.checks.create({
      owner,
      repo,
      name: "ci",
      head_sha: featureSha,
      status: "in_progress",
    });
    let got = await octokit.pulls.get({ owner, repo, pull_number: pr.data.number });
    expect(got.data).toMatchObject({ mergeable: true, mergeable_state: "unstable" });
    await octokit.checks.update({
      owner,
      repo,
      check_run_id: check.data.id,
      conclusion: "success",
      output: { title: "ok", summary: "all green" },
    });
    const runs = await octokit.checks.listForRef({ owner, repo, ref: featureSha });
    expect(runs.data.check_runs.map((r) => [r.name, r.status, r.conclusion, r.app?.slug])).toEqual([
      ["ci", "completed", "success", "autopilot"],
    ]);
    await octokit.repos.createCommitStatus({
      owner,
      repo,
      sha: featureSha,
      state: "success",
      context: "lint",
    });
    const combined = await octokit.repos.getCombinedStatusForRef({ owner, repo, ref: featureSha });
    expect(combined.data).toMatchObject({ state: "success", total_count: 1 });
    got = await octokit.pulls.get({ owner, repo, pull_number: pr.data.number });
    expect(got.data.mergeable_state).toBe("clean");

    const alice = client(sandbox.userToken("alice"));
    const review = await alice.pulls.createReview({
      owner,
      repo,
      pull_number: pr.data.number,
      event: "APPROVE",
      body: "LGTM",
    });
    expect(review.data).toMatchObject({ state: "APPROVED", commit_id: featureSha, user: { login: "alice" } });
    const pending = await alice.pulls.createReview({
      owner,
      repo,
      pull_number: pr.data.number,
      body: "more",
    });
    expect(pending.data.state).toBe("PENDING");
    await alice.pulls.submitReview({
      owner,
      repo,
      pull_number: pr.data.number,
      review_id: pending.data.id,
      event: "COMMENT",
      body: "more",
    });
    const reviews = await octokit.pulls.listReviews({ owner, repo, pull_number: pr.data.number });
    expect(reviews.data.map((r) => r.state)).toEqual(["APPROVED", "COMMENTED"]);

    await alice.pulls.createReview({
      owner,
      repo,
      pull_number: pr.data.number,
      event: "COMMENT",
      body: "one remark",
      comments: [{ path: "README.md", body: "Spell out the unit here.", line: 1 }],
    });
    const inline = await octokit.pulls.listReviewComments({ owner, repo, pull_number: pr.data.number });
    expect(inline.data.map((c) => [c.path, c.body, c.user?.login])).toEqual([
      ["README.md", "Spell out the unit here.", "alice"],
    ]);
    // A reply joins the conversation of the comment it answers, on the same file and line.
    const reply = await alice.pulls.createReplyForReviewComment({
      owner,
      repo,
      pull_number: pr.data.number,
      comment_id: inline.data[0]!.id,
      body: "Still missing.",
    });
    expect(reply.status).toBe(201);
    expect(reply.data).toMatchObject({ in_reply_to_id: inline.data[0]!.id, path: "README.md", line: 1 });
    // A reaction to a line comment: 201 when new, 200 when the same user's same reaction exists.
    const reacted = await octokit.reactions.createForPullRequestReviewComment({
      owner,
      repo,
      comment_id: inline.data[0]!.id,
      content: "+1",
    });
    expect(reacted.status).toBe(201);
    expect(reacted.data).toMatchObject({ content: "+1", user: { login: "autopilot[bot]" } });
    const twice = await octokit.reactions.createForPullRequestReviewComment({
      owner,
      repo,
      comment_id: inline.data[0]!.id,
      content: "+1",
    });
    expect(twice.status).toBe(200);
    const missing = await rejection(
      octokit.reactions.createForPullRequestReviewComment({
        owner,
        repo,
        comment_id: 999_999,
        content: "+1",
      }),
    );
    expect(missing.status).toBe(404);

    const stale = await rejection(
      octokit.pulls.merge({ owner, repo, pull_number: pr.data.number, sha: "2".repeat(40) }),
    );
    expect(stale.status).toBe(409);
    const merged = await octokit.pulls.merge({
      owner,
      repo,
      pull_number: pr.data.number,
      merge_method: "squash",
    });
    expect(merged.data.merged).toBe(true);
    got = await octokit.pulls.get({ owner, repo, pull_number: pr.data.number });
    expect(got.data).toMatchObject({
      state: "closed",
      merged: true,
      merged_by: { login: "autopilot[bot]" },
      merge_commit_sha: merged.data.sha,
    });
    const mainAfter = await octokit.git.getRef({ owner, repo, ref: "heads/main" });
    expect(mainAfter.data.object.sha).toBe(merged.data.sha);
    expect(mainAfter.data.object.sha).not.toBe(main.data.object.sha);
    expect((await rejection(octokit.pulls.merge({ owner, repo, pull_number: pr.data.number }))).status).toBe(
      405,
    );
    // "Closes #2" closed issue 2 as completed.
    expect((await octokit.issues.get({ owner, repo, issue_number: 2 })).data).toMatchObject({
      state: "closed",
      state_reason: "completed",
    });

    await octokit.git.deleteRef({ owner, repo, ref: "heads/autopilot/issue-2" });
    expect(
      (await rejection(octokit.git.getRef({ owner, repo, ref: "heads/autopilot/issue-2" }))).status,
    ).toBe(404);
  });

  it("serves files through the contents API", async () => {
    sandbox.store.setFile(`${owner}/${repo}`, ".github/autopilot.yml", "maxParallel: 2\n");
    const file = await octokit.repos.getContent({ owner, repo, path: ".github/autopilot.yml" });
    const data = file.data as { type: string; content: string; encoding: string };
    expect(data.type).toBe("file");
    expect(Buffer.from(data.content, "base64").toString("utf8")).toBe("maxParallel: 2\n");
    const raw = await octokit.repos.getContent({
      owner,
      repo,
      path: ".github/autopilot.yml",
      mediaType: { format: "raw" },
    });
    expect(raw.data as unknown as string).toBe("maxParallel: 2\n");
    expect((await rejection(octokit.repos.getContent({ owner, repo, path: "nope.txt" }))).status).toBe(404);
  });
});

describe("Actions", () => {
  it("dispatches a workflow, lists, gets, cancels and re-runs runs", async () => {
    sandbox.store.setFile(
      `${owner}/${repo}`,
      ".github/workflows/autopilot-worker.yml",
      'name: Autopilot worker\non:\n  workflow_dispatch:\n    inputs:\n      issue:\n        required: true\n      attempt:\n        required: false\njobs:\n  work:\n    runs-on: ubuntu-latest\n    steps:\n      - run: "true"\n',
    );
    const requests: string[] = [];
    const off = sandbox.store.onWorkflowDispatch((r) => requests.push(`${r.reason}:${r.inputs.issue}`));
    await octokit.actions.createWorkflowDispatch({
      owner,
      repo,
      workflow_id: "autopilot-worker.yml",
      ref: "main",
      inputs: { issue: "7", attempt: "1" },
    });
    const bad = await rejection(
      octokit.actions.createWorkflowDispatch({
        owner,
        repo,
        workflow_id: "autopilot-worker.yml",
        ref: "main",
        inputs: { nope: "1", issue: "1" },
      }),
    );
    expect(bad.status).toBe(422);
    expect(bad.message).toContain("Unexpected inputs");
    const missing = await rejection(
      octokit.actions.createWorkflowDispatch({ owner, repo, workflow_id: "missing.yml", ref: "main" }),
    );
    expect(missing.status).toBe(404);
    expect(requests).toEqual(["dispatch:7"]);

    const runs = await octokit.actions.listWorkflowRuns({
      owner,
      repo,
      workflow_id: "autopilot-worker.yml",
      event: "workflow_dispatch",
    });
    expect(runs.data.total_count).toBe(1);
    const run = runs.data.workflow_runs[0]!;
    expect(run).toMatchObject({
      status: "queued",
      head_branch: "main",
      name: "Autopilot worker",
      event: "workflow_dispatch",
    });
    sandbox.store.updateWorkflowRun(`${owner}/${repo}`, run.id, {
      status: "in_progress",
      displayTitle: "7-1-abc",
    });
    const inProgress = await octokit.actions.listWorkflowRunsForRepo({ owner, repo, status: "in_progress" });
    expect(inProgress.data.workflow_runs.map((r) => r.display_title)).toEqual(["7-1-abc"]);

    await octokit.actions.cancelWorkflowRun({ owner, repo, run_id: run.id });
    const cancelled = await octokit.actions.getWorkflowRun({ owner, repo, run_id: run.id });
    expect(cancelled.data).toMatchObject({ status: "completed", conclusion: "cancelled" });
    expect((await rejection(octokit.actions.cancelWorkflowRun({ owner, repo, run_id: run.id }))).status).toBe(
      409,
    );

    await octokit.actions.reRunWorkflow({ owner, repo, run_id: run.id });
    expect((await octokit.actions.getWorkflowRun({ owner, repo, run_id: run.id })).data).toMatchObject({
      status: "queued",
      run_attempt: 2,
    });
    expect(requests).toEqual(["dispatch:7", "rerun:7"]);
    const jobs = await octokit.actions.listJobsForWorkflowRun({ owner, repo, run_id: run.id });
    expect(jobs.data.total_count).toBe(0);
    off();

    const worker = client(sandbox.store.mintWorkerToken(run.id));
    const viaWorker = await worker.issues.get({ owner, repo, issue_number: 1 });
    expect(viaWorker.headers["x-ratelimit-limit"]).toBe("1000");
    expect(sandbox.requests.summary().byTokenKind.worker).toBe(1);
  });
});
