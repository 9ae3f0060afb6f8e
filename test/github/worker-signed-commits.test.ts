/**
 * `commits: signed` on GitHub's side: the worker's commits made again through the Git Database API, with no
 * author, committer or signature (so GitHub signs them), each tree checked against the worker's own, and the
 * branch created or fast-forwarded, never forced.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { createSignedCommitWriter } from "../../src/github/worker-signed-commits.js";
import { nockGitHub } from "../helpers/validating-fetch.js";

const API = "https://api.github.com";
const R = "/repos/acme/widgets";
const github = nockGitHub();

const sha = (c: string) => c.repeat(40);
const writer = () => createSignedCommitWriter(github.octokit(), { owner: "acme", repo: "widgets" });
const verified = { verified: true, reason: "valid", signature: "-----BEGIN", payload: "tree" };
const commitReply = (s: string) => ({ sha: s, verification: verified });

describe("signed commits through GitHub's Git Database API", () => {
  it("sends text inline and binary as a blob, names no author or committer, and moves the branch unforced", async () => {
    const bodies: unknown[] = [];
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]).toString("base64");
    const scope = nock(API)
      .post(`${R}/git/blobs`, (body) => bodies.push(body) > 0)
      .reply(201, { sha: sha("b"), url: "u" })
      .post(`${R}/git/trees`, (body) => bodies.push(body) > 0)
      .reply(201, { sha: sha("7"), tree: [] })
      .post(`${R}/git/commits`, (body) => bodies.push(body) > 0)
      .reply(201, commitReply(sha("c")))
      .patch(`${R}/git/refs/heads%2Fautopilot%2Fissue-7`, (body) => bodies.push(body) > 0)
      .reply(200, { ref: "refs/heads/autopilot/issue-7", object: { sha: sha("c") } });
    const result = await writer().publish({
      branch: "autopilot/issue-7",
      remoteHead: sha("0"),
      head: sha("1"),
      commits: [
        {
          sha: sha("1"),
          message: "autopilot: iteration 1 for #7\n\nAutopilot-Task: #7\n",
          parents: [sha("0")],
          tree: sha("7"),
          baseTree: sha("6"),
          entries: [
            {
              path: "a.txt",
              mode: "100644",
              type: "blob",
              sha: sha("a"),
              base64: Buffer.from("\ufeffhé\n").toString("base64"),
            },
            { path: "logo.png", mode: "100644", type: "blob", sha: sha("b"), base64: png },
            { path: "old.txt", mode: "100644", type: "blob", sha: null },
          ],
        },
      ],
    });
    expect(scope.isDone()).toBe(true);
    expect(result).toEqual({ head: sha("c"), made: new Map([[sha("1"), sha("c")]]), verified: true });
    expect(bodies[0]).toEqual({ content: png, encoding: "base64" });
    expect(bodies[1]).toEqual({
      base_tree: sha("6"),
      tree: [
        { path: "a.txt", mode: "100644", type: "blob", content: "\ufeffhé\n" },
        { path: "logo.png", mode: "100644", type: "blob", sha: sha("b") },
        { path: "old.txt", mode: "100644", type: "blob", sha: null },
      ],
    });
    // No author, committer or signature: GitHub signs it.
    expect(bodies[2]).toEqual({
      message: "autopilot: iteration 1 for #7\n\nAutopilot-Task: #7\n",
      tree: sha("7"),
      parents: [sha("0")],
    });
    expect(bodies[3]).toEqual({ sha: sha("c"), force: false });
  });

  it("chains GitHub's copies as parents and creates a branch the remote does not have", async () => {
    const parents: unknown[] = [];
    const scope = nock(API)
      .post(`${R}/git/commits`, (body) => parents.push(body.parents) > 0)
      .reply(201, commitReply(sha("c")))
      .post(`${R}/git/commits`, (body) => parents.push(body.parents) > 0)
      .reply(201, commitReply(sha("d")))
      .post(`${R}/git/refs`, { ref: "refs/heads/autopilot/issue-7", sha: sha("d") })
      .reply(201, { ref: "refs/heads/autopilot/issue-7", object: { sha: sha("d") } });
    const result = await writer().publish({
      branch: "autopilot/issue-7",
      remoteHead: null,
      head: sha("2"),
      commits: [
        {
          sha: sha("1"),
          message: "one",
          parents: [sha("0")],
          tree: sha("6"),
          baseTree: sha("6"),
          entries: [],
        },
        {
          sha: sha("2"),
          message: "merge",
          parents: [sha("1"), sha("9")],
          tree: sha("6"),
          baseTree: sha("6"),
          entries: [],
        },
      ],
    });
    expect(scope.isDone()).toBe(true);
    expect(parents).toEqual([[sha("0")], [sha("c"), sha("9")]]);
    expect(result.head).toBe(sha("d"));
  });

  it("stops before any commit when GitHub's tree is not the worker's", async () => {
    const scope = nock(API)
      .post(`${R}/git/trees`)
      .reply(201, { sha: sha("8"), tree: [] });
    const publishing = writer().publish({
      branch: "autopilot/issue-7",
      remoteHead: sha("0"),
      head: sha("1"),
      commits: [
        {
          sha: sha("1"),
          message: "m",
          parents: [sha("0")],
          tree: sha("7"),
          baseTree: sha("6"),
          entries: [
            {
              path: "a.txt",
              mode: "100644",
              type: "blob",
              sha: sha("a"),
              base64: Buffer.from("a\n").toString("base64"),
            },
          ],
        },
      ],
    });
    await expect(publishing).rejects.toThrow(/tree .* nothing was published/);
    expect(scope.isDone()).toBe(true);
  });

  it("says when GitHub did not verify a commit it made", async () => {
    nock(API)
      .post(`${R}/git/commits`)
      .reply(201, {
        sha: sha("c"),
        verification: { verified: false, reason: "unsigned", signature: null, payload: null },
      })
      .patch(`${R}/git/refs/heads%2Fb`)
      .reply(200, { ref: "refs/heads/b", object: { sha: sha("c") } });
    const result = await writer().publish({
      branch: "b",
      remoteHead: sha("0"),
      head: sha("1"),
      commits: [
        { sha: sha("1"), message: "m", parents: [sha("0")], tree: sha("6"), baseTree: sha("6"), entries: [] },
      ],
    });
    expect(result.verified).toBe(false);
  });
});
