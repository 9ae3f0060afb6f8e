/**
 * The reviewer's verdict posted as a review (src/github/pull-review-write.ts): always a COMMENT (GitHub refuses
 * APPROVE and REQUEST_CHANGES on one's own pull request), at the head it is about, with line comments on the
 * new side; a review GitHub refuses over a line goes again with the comments in its body, never lost.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { createWorkerGitHub } from "../../src/github/worker-github.js";
import { nockGitHub } from "../helpers/validating-fetch.js";

const API = "https://api.github.com";
const R = "/repos/acme/widgets";
const github = nockGitHub();
const HEAD = "a".repeat(40);
const MARKER = `<!-- autopilot:review {"verdict":"approve","head":"${HEAD}"} -->`;
const REVIEW = {
  commitId: HEAD,
  body: `Autopilot's reviewer approves this change.\n\n${MARKER}`,
  comments: [{ path: "src/a.js", line: 3, body: "> Nice." }],
};

const reviewReply = {
  id: 80,
  node_id: "PRR_1",
  user: null,
  body: "",
  state: "COMMENTED",
  html_url: "https://github.com/acme/widgets/pull/12#pullrequestreview-80",
  pull_request_url: "https://api.github.com/repos/acme/widgets/pulls/12",
  _links: { html: { href: "h" }, pull_request: { href: "p" } },
  submitted_at: "2026-11-22T00:00:00Z",
  commit_id: HEAD,
  author_association: "NONE",
};

describe("posting the reviewer's review", () => {
  it("sends a COMMENT at the head with the line comments on the new side", async () => {
    const sent: unknown[] = [];
    const scope = nock(API)
      .post(`${R}/pulls/12/reviews`, (body) => {
        sent.push(body);
        return true;
      })
      .reply(200, reviewReply);
    await createWorkerGitHub(github.octokit(), { owner: "acme", repo: "widgets" }).postReview(12, REVIEW);
    expect(sent).toEqual([
      {
        commit_id: HEAD,
        event: "COMMENT",
        body: REVIEW.body,
        comments: [{ path: "src/a.js", line: 3, body: "> Nice.", side: "RIGHT" }],
      },
    ]);
    expect(scope.isDone()).toBe(true);
  });

  it("sends it again with the comments in the body when GitHub refuses a line, the marker still last", async () => {
    const sent: { body: string; comments?: unknown[] }[] = [];
    const scope = nock(API)
      .post(`${R}/pulls/12/reviews`, (body) => {
        sent.push(body);
        return true;
      })
      .reply(422, {
        message: "Unprocessable Entity",
        errors: ["Pull request review thread line must be part of the diff"],
      })
      .post(`${R}/pulls/12/reviews`, (body) => {
        sent.push(body);
        return true;
      })
      .reply(200, reviewReply);
    await createWorkerGitHub(github.octokit(), { owner: "acme", repo: "widgets" }).postReview(12, REVIEW);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.comments).toBeUndefined();
    expect(sent[1]!.body).toMatch(/`src\/a\.js` line 3:\n {2}> Nice\.\n\n<!-- autopilot:review [^\n]*-->$/);
    expect(scope.isDone()).toBe(true);
  });
});
