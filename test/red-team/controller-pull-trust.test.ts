/**
 * Red team, controller: pull requests that are not the task's own. Each test runs the attack against the
 * controller's decisions and asserts it fails: nothing of the attacker's is merged or counted as done, and the
 * dashboard names the ignored PR once.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/reconcile/decide.js";
import type { PullNode } from "../../src/core/world.js";
import { issue, input, minutes, only, pull, readBack, result, step, world } from "../core/world.js";

const BOT_ID = 4242;
const REPO = "acme/app";

/** The task's real PR: opened by Autopilot's bot from this repository. */
const own = (n: number, extra: Partial<PullNode> = {}): PullNode =>
  pull(n, {
    isCrossRepository: false,
    headRepository: REPO,
    author: "autopilot",
    authorId: BOT_ID,
    ...extra,
  });

/** mallory's PR from her fork, on a branch named like the task branch, opened later, with green checks. */
const fork = (n: number, extra: Partial<PullNode> = {}): PullNode =>
  pull(n, {
    number: 200 + n,
    headSha: "evil0000",
    isCrossRepository: true,
    headRepository: "mallory/app",
    author: "mallory",
    authorId: 666,
    createdAt: minutes(30).toISOString(),
    ...extra,
  });

const reviewWorld = (pulls: PullNode[]) =>
  world({
    issues: [issue(7, { labels: ["autopilot:review"] })],
    pulls,
    botId: BOT_ID,
    pullDiffs: pulls.map((p) => ({
      pr: p.number,
      sha: p.headSha,
      files: [
        {
          filename: "src/greet.js",
          status: "modified",
          changes: 1,
          patch: "@@ -1 +1 @@\n-a\n+b",
          mode: "100644",
        },
      ],
      filesCapped: false,
    })),
  });

describe("the controller merges only the task's own pull request", () => {
  it("never merges a newer fork PR named like the task branch with green checks; merges the real one and says so once", () => {
    const w = reviewWorld([own(7), fork(7)]);
    const first = step(w, null, { now: minutes(40) });
    const merges = only(first.decision.effects, "mergePr");
    expect(merges).toEqual([expect.objectContaining({ pr: 107, issue: 7, expectedHeadSha: "sha7a" })]);
    expect(merges.some((m) => m.pr === 207)).toBe(false);

    const body = only(first.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("ignored PR #207 by @mallory on `autopilot/issue-7`: from a fork");
    expect(first.state.ignoredPulls).toEqual([207]);

    // The next reconcile sees the same PRs: the report is not repeated.
    const again = decide({ ...input(w), state: readBack(first.decision, w), now: minutes(50) });
    const incidents = again.state.incidents.filter((i) => i.message.includes("PR #207"));
    expect(incidents).toHaveLength(1);
  });

  it("with only the fork PR open, merges nothing and does not count a merged fork PR as the task done", () => {
    const open = step(reviewWorld([fork(7)]), null, { now: minutes(40) });
    expect(only(open.decision.effects, "mergePr")).toEqual([]);

    // Someone merged the fork PR by hand: the task is not done because of it.
    const merged = step(reviewWorld([fork(7, { state: "merged" })]), null, { now: minutes(40) });
    expect(only(merged.decision.effects, "closeIssue")).toEqual([]);
    expect(merged.state.history.completed).toBe(0);
  });

  it("ignores a same-repository PR on the task branch opened by a person, even one who can write", () => {
    const person = own(7, { number: 300, headSha: "human01", author: "dev", authorId: 77 });
    const d = step(reviewWorld([person]), null, { now: minutes(40) });
    expect(only(d.decision.effects, "mergePr")).toEqual([]);
    expect(d.state.incidents.map((i) => i.message)).toContain(
      "ignored PR #300 by @dev on `autopilot/issue-7`: not opened by Autopilot",
    );
  });

  it("compares the author's account id, not the login: a look-alike login is not the bot", () => {
    const lookalike = own(7, { number: 301, author: "autopilot", authorId: 999 });
    const d = step(reviewWorld([lookalike]), null, { now: minutes(40) });
    expect(only(d.decision.effects, "mergePr")).toEqual([]);
  });

  it("does not take a PR on another branch because a worker result named its number", () => {
    const elsewhere = own(7, { number: 400, headRef: "feature/other", headSha: "other01" });
    const w = reviewWorld([elsewhere]);
    w.workerResults = [result(7, { prNumber: 400 })];
    const d = step(
      w,
      { ...step(w, null).state, tasks: { "7": { ...step(w, null).state.tasks["7"]!, pr: 400 } } },
      {
        now: minutes(40),
      },
    );
    expect(only(d.decision.effects, "mergePr")).toEqual([]);
  });

  it("trusts no PR when the bot's account id could not be established", () => {
    const w = reviewWorld([own(7)]);
    w.botId = null;
    expect(only(step(w, null, { now: minutes(40) }).decision.effects, "mergePr")).toEqual([]);
  });
});
