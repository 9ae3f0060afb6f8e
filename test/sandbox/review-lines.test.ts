/**
 * A review's line comments as GitHub checks them (sandbox/emulator/rest/review-lines.ts,
 * https://docs.github.com/en/rest/pulls/reviews#create-a-review-for-a-pull-request): on a path and a new-side
 * line the pull request's diff shows, or the whole review is refused with 422 and nothing is created.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";
import { silent } from "./rest-fixture.js";

const owner = "acme";
const repo = "lines";
let sandbox: Sandbox;
let git: SandboxGit;
let app: Octokit;
let work: string;
let pr: number;

beforeAll(async () => {
  sandbox = await startSandbox({ validateResponses: true });
  git = await attachGit(sandbox);
  app = new Octokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url, log: silent });
  work = mkdtempSync(join(tmpdir(), "review-lines-"));
  await git.seedRepo(owner, repo, { "a.txt": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n" });
  const dir = join(work, "clone");
  const env = gitEnv();
  await run("git", ["clone", "-q", git.url(owner, repo, sandbox.installationToken()), dir], { env });
  writeFileSync(join(dir, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT\n");
  await run("git", ["checkout", "-q", "-b", "feature"], { cwd: dir, env });
  await run("git", ["commit", "-qam", "change the last line"], { cwd: dir, env });
  await run("git", ["push", "-q", "origin", "feature"], { cwd: dir, env });
  const created = await app.pulls.create({ owner, repo, title: "t", head: "feature", base: "main" });
  pr = created.data.number;
}, 60_000);

afterAll(async () => {
  await git?.stop();
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const review = (comments: { path: string; line: number; body: string; side?: "LEFT" | "RIGHT" }[]) =>
  app.pulls.createReview({ owner, repo, pull_number: pr, event: "COMMENT", body: "r", comments });

describe("review line comments", { timeout: 60_000 }, () => {
  it("are taken on the diff's added and context lines, and on the old side's deleted ones", async () => {
    await review([
      { path: "a.txt", line: 8, body: "changed line" },
      { path: "a.txt", line: 5, body: "context line" },
      { path: "a.txt", line: 8, body: "the line as it was", side: "LEFT" },
    ]);
    const listed = await app.pulls.listReviewComments({ owner, repo, pull_number: pr });
    expect(listed.data.map((c) => [c.path, c.line])).toEqual([
      ["a.txt", 8],
      ["a.txt", 5],
      ["a.txt", 8],
    ]);
  });

  it("refuse the whole review for a line outside every hunk or a path the diff does not touch", async () => {
    const before = (await app.pulls.listReviews({ owner, repo, pull_number: pr })).data.length;
    await expect(
      review([{ path: "a.txt", line: 9, body: "past the end", side: "LEFT" }]),
    ).rejects.toMatchObject({
      status: 422,
    });
    await expect(review([{ path: "a.txt", line: 1, body: "far away" }])).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining("Pull request review thread line must be part of the diff"),
    });
    await expect(
      review([
        { path: "a.txt", line: 8, body: "fine" },
        { path: "b.txt", line: 1, body: "no such file in the change" },
      ]),
    ).rejects.toMatchObject({ status: 422, message: expect.stringContaining("Path could not be resolved") });
    expect((await app.pulls.listReviews({ owner, repo, pull_number: pr })).data).toHaveLength(before);
  });
});
