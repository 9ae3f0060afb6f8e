/**
 * Best of N's winner carried over to the task branch (src/github/execution/candidate-promotion.ts): the task
 * branch created at the winner's head, or moved there with the commit it was at kept; the task's pull request
 * opened from it; a pull request GitHub says is open already ends it; a refusal is reported, not thrown.
 * GitHub's answers as https://docs.github.com/en/rest/git/refs and
 * https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request describe them.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import type { Effect } from "../../../src/core/effects.js";
import { promoteCandidate, promotionDone } from "../../../src/github/execution/candidate-promotion.js";
import { nockGitHub } from "../../helpers/validating-fetch.js";
import { pull, world } from "../../core/world.js";

const API = "https://api.github.com";
const R = "/repos/acme/app";
const github = nockGitHub();
const WINNER = "b".repeat(40);
const EARLIER = "c".repeat(40);

const effect: Extract<Effect, { type: "promoteCandidate" }> = {
  type: "promoteCandidate",
  issue: 7,
  branch: "autopilot/issue-7",
  sha: WINNER,
  base: "main",
  title: "Add a discount (#7)",
  body: "Closes #7\n\n### Chosen by best of N",
};
const refPath = (ref: string) => `${R}/git/ref/${encodeURIComponent(ref)}`;
const refJson = (ref: string, sha: string) => ({
  ref: `refs/${ref}`,
  node_id: "REF_1",
  url: `${API}${R}/git/refs/${ref}`,
  object: { sha, type: "commit", url: `${API}${R}/git/commits/${sha}` },
});
const pullJson = {
  number: 12,
  title: effect.title,
  body: effect.body,
  state: "open",
  head: { ref: effect.branch, sha: WINNER },
  base: { ref: "main" },
};

function context(snapshot = world()) {
  const logs: string[] = [];
  return {
    ctx: {
      client: github.octokit(),
      repo: { owner: "acme", name: "app" },
      log: { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) } as never,
      world: snapshot,
      write: <T>(call: () => Promise<T>) => call(),
      read: <T>(call: () => Promise<T>) => call(),
    },
    logs,
  };
}

describe("carrying the chosen candidate over to the task branch", () => {
  it("creates the task branch at the winner's head and opens the task's pull request from it", async () => {
    const scope = nock(API)
      .get(refPath("heads/autopilot/issue-7"))
      .reply(404, { message: "Not Found", status: "404" })
      .post(`${R}/git/refs`, { ref: "refs/heads/autopilot/issue-7", sha: WINNER })
      .reply(201, refJson("heads/autopilot/issue-7", WINNER))
      .post(`${R}/pulls`, { title: effect.title, body: effect.body, head: effect.branch, base: "main" })
      .reply(201, pullJson);
    const done = await promoteCandidate(context().ctx, effect);
    expect(done).toMatchObject({ status: "done", detail: "PR #12" });
    expect(scope.isDone()).toBe(true);
  });

  it("keeps the commit an earlier attempt left on the task branch before moving the branch", async () => {
    const scope = nock(API)
      .get(refPath("heads/autopilot/issue-7"))
      .reply(200, refJson("heads/autopilot/issue-7", EARLIER))
      .post(`${R}/git/refs`, { ref: `refs/autopilot/replaced/issue-7-${EARLIER.slice(0, 12)}`, sha: EARLIER })
      .reply(201, refJson(`autopilot/replaced/issue-7-${EARLIER.slice(0, 12)}`, EARLIER))
      .patch(`${R}/git/refs/${encodeURIComponent("heads/autopilot/issue-7")}`, { sha: WINNER, force: true })
      .reply(200, refJson("heads/autopilot/issue-7", WINNER))
      .post(`${R}/pulls`)
      .reply(201, pullJson);
    const done = await promoteCandidate(context().ctx, effect);
    expect(done.status).toBe("done");
    expect(scope.isDone()).toBe(true);
  });

  it("takes GitHub's word that the pull request is open already, and reports a refusal", async () => {
    const open = nock(API)
      .get(refPath("heads/autopilot/issue-7"))
      .reply(200, refJson("heads/autopilot/issue-7", WINNER))
      .post(`${R}/pulls`)
      .reply(422, {
        message: "Validation Failed",
        errors: [
          {
            resource: "PullRequest",
            code: "custom",
            message: "A pull request already exists for acme:autopilot/issue-7.",
          },
        ],
      });
    expect((await promoteCandidate(context().ctx, effect)).status).toBe("skipped");
    expect(open.isDone()).toBe(true);

    const refused = nock(API)
      .get(refPath("heads/autopilot/issue-7"))
      .reply(404, { message: "Not Found", status: "404" })
      .post(`${R}/git/refs`)
      .reply(422, { message: "Object does not exist" });
    const failed = await promoteCandidate(context().ctx, effect);
    expect(failed).toMatchObject({
      status: "failed",
      detail: expect.stringMatching(/Object does not exist/),
    });
    expect(refused.isDone()).toBe(true);
  });

  it("counts as done only with Autopilot's own pull request open on the task branch", () => {
    const own = pull(7, { authorId: 42 });
    expect(promotionDone(world({ botId: 42, pulls: [own] }), effect)).toMatch(/PR #107 is open/);
    // A person's pull request on the task branch is not the task's.
    expect(promotionDone(world({ botId: 42, pulls: [{ ...own, authorId: 999 }] }), effect)).toBeNull();
    expect(promotionDone(world({ botId: 42, pulls: [{ ...own, state: "closed" }] }), effect)).toBeNull();
  });

  it("is not done by a pull request an earlier attempt merged from the task branch", () => {
    // Found by the seeded simulation (sandbox/simulation/fixed/second-round-after-merge-60.yml): a task merged,
    // opened again by a writer's follow-up, worked by a second round; the first round's merged pull request on
    // the task branch made every promotion of the second round's winner a no-op, and the task stayed in progress.
    const merged = { ...pull(7, { authorId: 42 }), state: "merged" as const };
    expect(promotionDone(world({ botId: 42, pulls: [merged] }), effect)).toBeNull();
  });
});
