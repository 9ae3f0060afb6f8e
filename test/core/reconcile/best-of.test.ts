/**
 * Best of N on the controller's side (src/core/reconcile/runs/best-of.ts): which dispatches are candidates, the
 * round going from one candidate to the next, the choice by evidence the controller read itself, the winner
 * carried over to the task branch, the candidates' pull requests closed, and a pull request that only looks
 * like a candidate's.
 */
import { describe, expect, it } from "vitest";
import { check, config, issue, minutes, only, result, run, step, world } from "../world.js";
import {
  bestOf,
  bothEnded,
  candidateOf,
  candidatePull,
  diff,
  finished,
  LABELED,
} from "../../helpers/best-of-round.js";

describe("best of N", () => {
  it("works a labeled task as a round of candidates, and leaves other tasks alone", () => {
    const plain = step(world({ issues: [issue(8)] }), null, { config: bestOf() });
    expect(candidateOf(plain.decision.effects)).toBeUndefined();
    // Without candidates configured the label does nothing.
    const off = step(world({ issues: [issue(7, { labels: [...LABELED], bestOfLabeledBy: "dev" })] }), null, {
      config: config(),
    });
    expect(candidateOf(off.decision.effects)).toBeUndefined();
    expect(off.state.tasks[7]?.bestOf).toBeUndefined();
    const labeled = step(
      world({ issues: [issue(7, { labels: [...LABELED], bestOfLabeledBy: "dev" })] }),
      null,
      { config: bestOf() },
    );
    expect(candidateOf(labeled.decision.effects)).toBe(1);
    expect(labeled.state.tasks[7]?.bestOf).toMatchObject({
      of: 2,
      candidates: [{ attempt: 1, agent: "custom (wide)" }],
    });
  });

  it("with onRetry, works an attempt after a failed one as a round, label or not", () => {
    const cfg = bestOf({ onRetry: true });
    const first = step(world({ issues: [issue(7)] }), null, { config: cfg });
    expect(candidateOf(first.decision.effects)).toBeUndefined();
    const d1 = only(first.decision.effects, "dispatchWorker")[0]!.dispatchId;
    const failed = step(
      finished(first.world, {
        workerResults: [
          result(7, { dispatchId: d1, result: "failed", reason: "tests fail", prNumber: undefined }),
        ],
      }),
      first.state,
      { now: minutes(5), config: cfg },
    );
    expect(failed.state.tasks[7]?.failures).toBe(1);
    const retried = step(failed.world, failed.state, { now: minutes(30), config: cfg });
    expect(candidateOf(retried.decision.effects)).toBe(1);
  });

  it("sends the task back for the next candidate, and records each candidate's outcome and spend", () => {
    const { state } = bothEnded();
    const round = state.tasks[7]?.bestOf;
    expect(round?.candidates[0]).toMatchObject({ outcome: "complete", pr: 201, costUsd: 0.05 });
    expect(round?.candidates[1]).toMatchObject({ attempt: 2, agent: "custom (narrow)" });
    expect(round?.candidates[1]?.outcome).toBeUndefined();
  });

  it("chooses the smaller passing diff, carries it over to the task branch, then closes every candidate's PR", () => {
    const ended = bothEnded();
    const chose = step({ ...ended.world, pullDiffs: [diff(1, 40), diff(2, 6)] }, ended.state, {
      now: minutes(10),
      config: ended.cfg,
    });
    const round = chose.state.tasks[7]?.bestOf;
    expect(round?.winner).toBe(2);
    expect(round?.candidates[1]).toMatchObject({ outcome: "complete", costUsd: 0.07 });
    const promote = only(chose.decision.effects, "promoteCandidate");
    expect(promote).toEqual([
      expect.objectContaining({
        issue: 7,
        branch: "autopilot/issue-7",
        sha: "cand2",
        base: "main",
        title: "Task 7 (#7)",
      }),
    ]);
    expect(promote[0]?.body).toMatch(/Chosen by best of N/);
    const said = only(chose.decision.effects, "comment").find(
      (c) => c.issue === 7 && /Best of 2/.test(c.body),
    );
    expect(said?.body).toMatch(/candidate 2 \(custom \(narrow\)\) is chosen/);
    expect(said?.body).toMatch(
      /\| \*\*2 \(chosen\)\*\* \| custom \(narrow\) \| complete, PR #202 \| passing \| none fired \| 6 lines \| \$0\.07, 1\.9k tokens \|/,
    );
    expect(said?.body).toMatch(
      /\| 1 \| custom \(wide\) \| complete, PR #201 \| passing \| none fired \| 40 lines \| \$0\.05, 1\.5k tokens \|/,
    );
    // Nothing is closed before the task's own pull request shows.
    expect(only(chose.decision.effects, "closePull")).toHaveLength(0);
    expect(chose.state.tasks[7]?.label).toBe("in-progress");

    const shown = step(chose.world, chose.state, { now: minutes(11), config: ended.cfg });
    const own = shown.world.pulls.find((p) => p.headRef === "autopilot/issue-7");
    expect(shown.state.tasks[7]?.pr).toBe(own?.number);
    expect(shown.state.tasks[7]?.label).toBe("review");
    expect(
      only(shown.decision.effects, "closePull")
        .map((e) => e.pr)
        .sort(),
    ).toEqual([201, 202]);
    expect(only(shown.decision.effects, "deleteBranch")).toEqual(
      expect.arrayContaining([
        { type: "deleteBranch", branch: "autopilot/issue-7-candidate-1", expectOid: "cand1" },
        { type: "deleteBranch", branch: "autopilot/issue-7-candidate-2", expectOid: "cand2" },
      ]),
    );
    // Neither is carried over again.
    expect(only(shown.decision.effects, "promoteCandidate")).toHaveLength(0);
  });

  it("weighs the checks, then the human gate, before the size of the diff", () => {
    const failing = bothEnded(bestOf(), { two: { checks: [check("test", "failure")] } });
    const byChecks = step({ ...failing.world, pullDiffs: [diff(1, 40), diff(2, 6)] }, failing.state, {
      now: minutes(10),
      config: failing.cfg,
    });
    expect(byChecks.state.tasks[7]?.bestOf?.winner).toBe(1);

    const gated = bothEnded();
    const byGate = step(
      { ...gated.world, pullDiffs: [diff(1, 40), diff(2, 6, "db/migrations/001_orders.sql")] },
      gated.state,
      { now: minutes(10), config: gated.cfg },
    );
    expect(byGate.state.tasks[7]?.bestOf?.winner).toBe(1);

    // A tie on everything goes to the earlier candidate.
    const tie = bothEnded();
    const byOrder = step({ ...tie.world, pullDiffs: [diff(1, 6), diff(2, 6)] }, tie.state, {
      now: minutes(10),
      config: tie.cfg,
    });
    expect(byOrder.state.tasks[7]?.bestOf?.winner).toBe(1);
  });

  it("waits for running checks, up to checksWaitMinutes, and for the diffs it has not read", () => {
    const ended = bothEnded(bestOf(), { one: { checks: [check("test", null, { status: "in_progress" })] } });
    const unread = step(ended.world, ended.state, { now: minutes(6), config: ended.cfg });
    expect(unread.state.tasks[7]?.bestOf?.winner).toBeUndefined();
    const pending = step({ ...ended.world, pullDiffs: [diff(1, 2), diff(2, 6)] }, ended.state, {
      now: minutes(6),
      config: ended.cfg,
    });
    expect(pending.state.tasks[7]?.bestOf?.winner).toBeUndefined();
    expect(pending.state.tasks[7]?.reason).toMatch(/waiting for the checks of candidate 1's PR #201/);
    // Candidate 2 ended in this reconcile: the checks get ten minutes from then.
    expect(pending.decision.wakeAtMs).toBe(minutes(16).getTime());
    // The wait is over: checks still running rank below passing ones, whatever the diff.
    const over = step(pending.world, pending.state, {
      now: minutes(16),
      config: ended.cfg,
    });
    expect(over.state.tasks[7]?.bestOf?.winner).toBe(2);
  });

  it("makes the human-gate rules the winner's worker reported the task's, as a worker's are", () => {
    const rules = [
      { rule: "curl | sh", where: "command" as const, match: "curl x | sh", neverAutoApprove: false },
    ];
    const ended = bothEnded(
      bestOf(),
      { one: null },
      { one: "failed" },
      { humanGate: { fired: true, rules } },
    );
    const chose = step({ ...ended.world, pullDiffs: [diff(2, 6)] }, ended.state, {
      now: minutes(10),
      config: ended.cfg,
    });
    expect(chose.state.tasks[7]?.bestOf?.winner).toBe(2);
    const shown = step(chose.world, chose.state, { now: minutes(11), config: ended.cfg });
    expect(shown.state.tasks[7]?.gate).toEqual(["curl | sh"]);
  });

  it("ends a round whose remaining candidates the configuration no longer lists, and works the task as usual", () => {
    const cfg = bestOf();
    const start = step(
      world({ botId: 42, issues: [issue(7, { labels: [...LABELED], bestOfLabeledBy: "dev" })] }),
      null,
      { config: cfg },
    );
    const d1 = only(start.decision.effects, "dispatchWorker")[0]!.dispatchId;
    // semi-auto: candidate 1 ended and the task waits in the queue, no candidate 2 yet.
    const afterOne = step(
      finished(start.world, {
        pulls: [candidatePull(1)],
        workerResults: [
          result(7, { dispatchId: d1, branch: "autopilot/issue-7-candidate-1", prNumber: 201 }),
        ],
      }),
      start.state,
      { now: minutes(5), config: { ...cfg, mode: "semi-auto" } },
    );
    expect(afterOne.state.tasks[7]?.label).toBe("ready");
    expect(only(afterOne.decision.effects, "dispatchWorker")).toHaveLength(0);
    const next = step(afterOne.world, afterOne.state, { now: minutes(6), config: config() });
    expect(only(next.decision.effects, "dispatchWorker")).toHaveLength(1);
    expect(candidateOf(next.decision.effects)).toBeUndefined();
    expect(next.state.tasks[7]?.bestOf?.winner).toBe(0);
    // The round's candidate PR is closed at the next reconcile, while the ordinary attempt runs.
    const later = step(next.world, next.state, { now: minutes(7), config: config() });
    expect(only(later.decision.effects, "closePull").map((e) => e.pr)).toEqual([201]);
    expect(only(later.decision.effects, "dispatchWorker")).toHaveLength(0);
  });

  it("closes candidates' pull requests no round remembers, once no worker of the task runs", () => {
    // The state was lost mid-round: candidate 2 still runs, candidate 1's PR is open.
    const lost = world({
      botId: 42,
      issues: [issue(7, { labels: ["autopilot:ready", "autopilot:in-progress"] })],
      pulls: [candidatePull(1), candidatePull(2, { authorId: 999, author: "mallory" })],
      runs: [run(900, 7, { dispatchId: "7-2-seed", attempt: 2 })],
    });
    const running = step(lost, null, { now: minutes(5) });
    expect(only(running.decision.effects, "closePull")).toHaveLength(0);
    // Its result names the candidate's branch: read as the task's, its PR is not taken for the task's.
    const ended = step(
      finished(running.world, {
        workerResults: [
          result(7, {
            attempt: 2,
            dispatchId: "7-2-seed",
            branch: "autopilot/issue-7-candidate-2",
            prNumber: 202,
          }),
        ],
      }),
      running.state,
      { now: minutes(8) },
    );
    expect(ended.state.tasks[7]?.pr).toBeUndefined();
    expect(ended.state.tasks[7]?.label).not.toBe("review");
    // Autopilot's own candidate PR is closed; a stranger's on a candidate-like branch is left alone.
    expect(only(ended.decision.effects, "closePull").map((e) => e.pr)).toEqual([201]);
    expect(only(ended.decision.effects, "deleteBranch")).toEqual([
      { type: "deleteBranch", branch: "autopilot/issue-7-candidate-1", expectOid: "cand1" },
    ]);
  });

  it("fails the attempt when no candidate completed, and closes what they opened", () => {
    const ended = bothEnded(
      bestOf(),
      { one: null, two: null },
      { one: "failed", two: "blocked" },
      { reason: "no database access" },
    );
    const chose = step(ended.world, ended.state, { now: minutes(10), config: ended.cfg });
    const record = chose.state.tasks[7];
    // A blocked candidate leaves the round, not the task: the task is not blocked, its attempt failed.
    expect(record?.label).not.toBe("blocked");
    expect(record?.bestOf?.winner).toBe(0);
    // The comment says how each candidate ended, and what each cost.
    const said = only(chose.decision.effects, "comment").find(
      (c) => c.issue === 7 && /Best of 2/.test(c.body),
    );
    expect(said?.body).toMatch(/no candidate completed, so the attempt failed/);
    expect(said?.body).toMatch(
      /\| 2 \| custom \(narrow\) \| blocked: no database access \| — \| — \| — \| \$0\.07, 1\.9k tokens \|/,
    );
    expect(record?.failures).toBe(1);
    expect(record?.reason).toMatch(/no candidate completed \(1: failed, 2: blocked\)/);
    expect(only(chose.decision.effects, "promoteCandidate")).toHaveLength(0);
    // Their branches may hold pushed work: each goes once.
    expect(
      only(chose.decision.effects, "deleteBranch")
        .map((e) => e.branch)
        .sort(),
    ).toEqual(["autopilot/issue-7-candidate-1", "autopilot/issue-7-candidate-2"]);
  });

  it("closes the candidates' pull requests when the task's issue is closed mid-round", () => {
    const ended = bothEnded();
    const closed = {
      ...ended.world,
      issues: ended.world.issues.map((i) => ({
        ...i,
        state: "closed" as const,
        stateReason: "not_planned" as const,
      })),
    };
    const after = step(closed, ended.state, { now: minutes(10), config: ended.cfg });
    expect(
      only(after.decision.effects, "closePull")
        .map((e) => e.pr)
        .sort(),
    ).toEqual([201, 202]);
    expect(after.state.tasks[7]).toBeUndefined();
  });
});
