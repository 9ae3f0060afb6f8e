/**
 * Attack: a pull request on a branch named like a task branch (`autopilot/issue-3`) that Autopilot did not
 * open — from a fork, or by a person. A comment on it is not a comment on the task: a maintainer telling the
 * stranger "no" there must not answer the task's needs-human question and send it back to the queue.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/reconcile/decide.js";
import { comment, input, issue, minutes, only, pull, result, run, step, world } from "../core/world.js";

const BOT_ID = 4242;

function asked() {
  const first = step(world({ issues: [issue(3)], botId: BOT_ID }), null);
  const question = result(3, {
    result: "needs_human",
    reason: "agent asks: before or after tax?",
    prNumber: undefined,
    updatedAt: minutes(5).toISOString(),
  });
  const finished = {
    ...first.world,
    issues: first.world.issues.map((i) => ({ ...i, labels: ["autopilot:needs-human"] })),
    runs: [run(900, 3, { status: "completed" as const, conclusion: "success" })],
    workerResults: [question],
  };
  return { first, finished };
}

describe("a comment on a pull request Autopilot did not open, on a task-named branch", () => {
  const at = { createdAt: minutes(6).toISOString() };

  it.each([
    [
      "from a fork",
      { isCrossRepository: true, headRepository: "mallory/app", authorId: 666, author: "mallory" },
    ],
    ["by a person, on the task branch", { isCrossRepository: false, authorId: 77, author: "dev" }],
  ])("%s does not answer the task's question", (_name, who) => {
    const { first, finished } = asked();
    const stranger = pull(3, { number: 301, labels: [], ...who });
    const onStranger = comment(500, 301, "dev", "Please do not merge this.", at);
    const d = decide({
      ...input({ ...finished, pulls: [stranger], comments: [onStranger] }),
      state: first.state,
      now: minutes(7),
    });
    expect(d.log).not.toContain("#3: answered by dev; back in the queue");
    expect(only(d.effects, "dispatchWorker")).toEqual([]);
  });

  it("while a comment on Autopilot's own pull request does", () => {
    const { first, finished } = asked();
    const own = pull(3, { isCrossRepository: false, headRepository: "acme/app", authorId: BOT_ID });
    const d = decide({
      ...input({ ...finished, pulls: [own], comments: [comment(500, own.number, "dev", "Before tax.", at)] }),
      state: first.state,
      now: minutes(7),
    });
    expect(d.log).toContain("#3: answered by dev; back in the queue");
  });
});
