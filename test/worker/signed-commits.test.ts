/**
 * `commits: signed` in the worker's loop (src/worker/job/publish-branch.ts): every push goes to GitHub's Git
 * Database API instead of `git push`, after the secret guard, and the branch moves onto GitHub's commits; a
 * `git push` GitHub refuses for missing signatures ends with the setting that fixes it.
 */
import { describe, expect, it } from "vitest";
import type { SignedPublish } from "../../src/github/worker-signed-commits.js";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";

const COMPLETE = "All done.\n\n<promise>COMPLETE</promise>";
const NOTHING = "Made some progress; more to do.";

/** GitHub's side: each publish recorded, its commits "made" as `gh-<worker's id>`. */
function fakeWriter(verified = true) {
  const published: SignedPublish[] = [];
  return {
    published,
    writer: {
      async publish(input: SignedPublish) {
        published.push(input);
        const made = new Map(input.commits.map((c) => [c.sha, `gh-${c.sha}`]));
        return { head: made.get(input.head) ?? input.head, made, verified };
      },
    },
  };
}

describe("commits: signed", () => {
  it("publishes every iteration through GitHub's API, never git push, and builds on GitHub's commits", async () => {
    const h = await harness([{ message: NOTHING }, { message: COMPLETE }]);
    const github = fakeWriter();
    const run = await runWorker(h.inputs, config({ commits: "signed" }), {
      ...h.deps,
      signedCommits: github.writer,
    });
    expect(run.result.result).toBe("complete");
    expect(h.git.calls).not.toContain("push");
    expect(github.published.length).toBeGreaterThanOrEqual(2);
    expect(github.published.every((p) => p.branch === "autopilot/issue-7")).toBe(true);
    // The branch moved onto each of GitHub's copies, and the result names GitHub's last one.
    expect(h.git.adopted).toEqual(github.published.map((p) => `gh-${p.head}`));
    expect(run.result.headSha).toBe(h.git.adopted.at(-1));
  });

  it("publishes before the agent's next turn, never beside it: the branch moves onto GitHub's commits first", async () => {
    const h = await harness([{ message: NOTHING }, { message: COMPLETE }]);
    const github = fakeWriter();
    const turnsWhenPublished: number[] = [];
    const slow = {
      async publish(input: SignedPublish) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        turnsWhenPublished.push(h.agent.requests.length);
        return github.writer.publish(input);
      },
    };
    const run = await runWorker(h.inputs, config({ commits: "signed" }), { ...h.deps, signedCommits: slow });
    expect(run.result.result).toBe("complete");
    // The first iteration's publish ended while only the first turn had run.
    expect(turnsWhenPublished[0]).toBe(1);
  });

  it("says once per job when GitHub did not verify a commit it made", async () => {
    const h = await harness([{ message: NOTHING }, { message: COMPLETE }]);
    const github = fakeWriter(false);
    const run = await runWorker(h.inputs, config({ commits: "signed" }), {
      ...h.deps,
      signedCommits: github.writer,
    });
    const said = run.warnings.filter((w) =>
      w.includes("did not report every commit it made on autopilot/issue-7 as verified"),
    );
    expect(github.published.length).toBeGreaterThan(1);
    expect(said).toHaveLength(1);
  });

  it("unsigned (the default) pushes with git and asks GitHub's API for nothing", async () => {
    const h = await harness([{ message: COMPLETE }]);
    const github = fakeWriter();
    const run = await runWorker(h.inputs, config(), { ...h.deps, signedCommits: github.writer });
    expect(run.result.result).toBe("complete");
    expect(h.git.calls).toContain("push");
    expect(github.published).toEqual([]);
  });

  it("a push GitHub refuses for missing signatures ends `failed` naming the setting that fixes it", async () => {
    const h = await harness([{ message: NOTHING }]);
    h.git.pushError = new Error(
      "git push --quiet origin abc:refs/heads/autopilot/issue-7 failed (1): remote: error: GH006: Protected branch update failed for refs/heads/autopilot/issue-7.\nremote: error: Commits must have verified signatures.\n ! [remote rejected] abc -> autopilot/issue-7 (pre-receive hook declined)",
    );
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toContain(
      "GitHub refused the push (GH006: Protected branch update failed for refs/heads/autopilot/issue-7.): the task branch requires signed commits",
    );
    expect(run.result.reason).toContain("Set `commits: signed`");
    expect(run.result.reason).toContain("/autopilot retry #7");
    expect(run.result.reason).not.toContain("worker error");
  });
});
