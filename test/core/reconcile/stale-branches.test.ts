/**
 * The stale-branch sweep's decision (`cleanup.staleBranchDays`): only a branch whose every recorded push is
 * Autopilot's own account, and whose newest push is old enough, goes; anything unknown keeps it.
 */
import { describe, expect, it } from "vitest";
import { sweepCandidates, sweepVerdict } from "../../../src/core/reconcile/pulls/stale-branches.js";
import { config, issue, only, step, T0, world } from "../world.js";

const BOT_ID = 41;
const day = 86_400_000;
const at = (daysAgo: number) => new Date(T0.getTime() - daysAgo * day).toISOString();

describe("sweepVerdict", () => {
  const base = { botId: BOT_ID, staleDays: 14, nowMs: T0.getTime() };

  it("deletes a branch only Autopilot pushed to, untouched for the configured days", () => {
    const activity = {
      complete: true,
      entries: [
        { actorId: BOT_ID, at: at(20), type: "push" },
        { actorId: BOT_ID, at: at(21), type: "branch_creation" },
      ],
    };
    expect(sweepVerdict({ ...base, activity })).toEqual({ delete: true });
  });

  it("keeps a branch a person pushed to, however old, whatever the commits' author fields say", () => {
    const activity = {
      complete: true,
      entries: [
        { actorId: BOT_ID, at: at(30), type: "push" },
        { actorId: 7, at: at(31), type: "push" },
        { actorId: BOT_ID, at: at(32), type: "branch_creation" },
      ],
    };
    expect(sweepVerdict({ ...base, activity })).toEqual({ delete: false, why: "person-pushed" });
    const deletedUser = { complete: true, entries: [{ actorId: null, at: at(30), type: "push" }] };
    expect(sweepVerdict({ ...base, activity: deletedUser })).toEqual({ delete: false, why: "person-pushed" });
  });

  it("keeps what it cannot judge: a recent push, an incomplete record, no record, an unknown own account", () => {
    const recent = { complete: true, entries: [{ actorId: BOT_ID, at: at(2), type: "push" }] };
    expect(sweepVerdict({ ...base, activity: recent })).toEqual({ delete: false, why: "recent" });
    const incomplete = { complete: false, entries: [{ actorId: BOT_ID, at: at(30), type: "push" }] };
    expect(sweepVerdict({ ...base, activity: incomplete })).toEqual({ delete: false, why: "incomplete" });
    expect(sweepVerdict({ ...base, activity: undefined })).toEqual({ delete: false, why: "unread" });
    const old = { complete: true, entries: [{ actorId: BOT_ID, at: at(30), type: "push" }] };
    expect(sweepVerdict({ ...base, botId: null, activity: old })).toEqual({
      delete: false,
      why: "person-pushed",
    });
    const gone = { complete: true, entries: [{ actorId: BOT_ID, at: at(1), type: "branch_deletion" }] };
    expect(sweepVerdict({ ...base, activity: gone })).toEqual({ delete: false, why: "no-branch" });
  });
});

describe("sweepCandidates", () => {
  it("reads only ended tasks' existing branches, once they ended the configured days ago, and nothing when off", () => {
    const world = {
      taskBranches: { "autopilot/issue-1": "1".repeat(40), "autopilot/issue-4": "4".repeat(40) },
      issues: [
        issue(1, { labels: ["autopilot:failed"] }),
        issue(2, { labels: ["autopilot:timeout"] }),
        issue(3, { labels: ["autopilot:review"] }),
        issue(4, { labels: ["autopilot:exclude"] }),
      ],
    };
    const since: Record<number, string> = { 1: at(20), 2: at(1) };
    const ended = { since: (n: number) => since[n], nowMs: T0.getTime() };
    const on = config({ cleanup: { staleBranchDays: 14 } } as never);
    const excluded = on.labels.exclude;
    world.issues[3]!.labels = [excluded];
    expect(sweepCandidates(world, on, ended)).toEqual(["autopilot/issue-1", "autopilot/issue-4"]);
    expect(sweepCandidates(world, config(), ended)).toEqual([]);
    // A branch that is gone (or was never listed) is not read: no request for it.
    expect(sweepCandidates({ ...world, taskBranches: {} }, on, ended)).toEqual([]);
  });
});

describe("the sweep in a reconcile", () => {
  const OID = "c".repeat(40);
  const oldBotPushes = { complete: true, entries: [{ actorId: 41, at: at(30), type: "push" }] };
  const swept = (extra: Parameters<typeof world>[0]) =>
    step(world({ botId: 41, issues: [issue(5, { labels: ["autopilot:timeout"] })], ...extra }), null, {
      config: config({ cleanup: { staleBranchDays: 14 } } as never),
    });

  it("deletes a branch only while it is at the commit the decision was made on, and comments only after", () => {
    const { decision } = swept({
      taskBranches: { "autopilot/issue-5": OID },
      branchActivity: { "autopilot/issue-5": oldBotPushes },
    });
    expect(only(decision.effects, "deleteBranch")).toEqual([
      { type: "deleteBranch", branch: "autopilot/issue-5", expectOid: OID },
    ]);
    const deletion = decision.effects.findIndex((e) => e.type === "deleteBranch");
    const comment = decision.effects.findIndex((e) => e.type === "comment" && e.issue === 5);
    expect(comment).toBeGreaterThan(deletion);
    expect(decision.effects[comment]).toMatchObject({ afterDeleting: "autopilot/issue-5" });
  });

  it("says when a branch it keeps for now falls due, so an idle repository is reconciled again then", () => {
    const recentBotPush = { complete: true, entries: [{ actorId: 41, at: at(2), type: "push" }] };
    const { decision } = swept({
      taskBranches: { "autopilot/issue-5": OID },
      branchActivity: { "autopilot/issue-5": recentBotPush },
    });
    expect(only(decision.effects, "deleteBranch")).toEqual([]);
    // Pushed 2 days ago, stale after 14: due in 12 days.
    expect(decision.wakeAtMs).toBe(T0.getTime() + 12 * day);
    // A person's push keeps the branch until a person acts: no time brings it due.
    const personPush = { complete: true, entries: [{ actorId: 7, at: at(30), type: "push" }] };
    const kept = swept({
      taskBranches: { "autopilot/issue-5": OID },
      branchActivity: { "autopilot/issue-5": personPush },
    });
    expect(kept.decision.wakeAtMs).toBeUndefined();
  });

  it("leaves alone a branch the snapshot did not list", () => {
    const { decision } = swept({ branchActivity: { "autopilot/issue-5": oldBotPushes } });
    expect(only(decision.effects, "deleteBranch")).toEqual([]);
  });
});
