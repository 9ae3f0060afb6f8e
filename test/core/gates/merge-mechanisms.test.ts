/**
 * A refused merge handed to GitHub's own mechanism (auto-merge, the merge queue, a branch update): the dashboard
 * says what GitHub does next, Autopilot does not ask again meanwhile, and it takes the merge back when the head
 * is no longer one its gates approve — GitHub never merges what Autopilot has not approved.
 */
import { describe, expect, it } from "vitest";
import type { DashboardState } from "../../../src/core/dashboard/index.js";
import {
  mergeHandedComment,
  mergeMechanismFor,
  mergeRefusalComment,
  parseMergeRefusal,
} from "../../../src/core/gates/merge-refusal.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import type { MergeMechanism, PullNode, WorldSnapshot } from "../../../src/core/world.js";
import { BOT, check, input, issue, minutes, only, pull, review, step, world } from "../world.js";

const REVIEWS = "At least 1 approving review is required by reviewers with write access.";
const QUEUE = "Repository rule violations found\n\nChanges must be made through the merge queue\n\n";
const EXPECTED = 'Required status check "build" is expected.';

/** The comment the executor wrote after handing attempt 1 of `sha` to `via`, as the snapshot reads it back. */
function handed(sha: string, via: MergeMechanism, message: string): PullNode["mergeRefusal"] {
  const body = mergeHandedComment({ pr: 107, issue: 7, sha, attempt: 1, message, via, base: "main" });
  const parsed = parseMergeRefusal(body);
  return parsed && { commentId: 9001, ...parsed };
}

function inReview(w: WorldSnapshot, pr: PullNode): WorldSnapshot {
  return { ...w, issues: [issue(7, { labels: ["autopilot:review"] })], pulls: [pr] };
}

function dashboard(effects: ReturnType<typeof decide>["effects"]): string {
  return only(effects, "writeTrackingIssue")[0]?.body ?? "";
}

/** The first reconcile asks for the merge of sha7a; GitHub refuses and the executor hands it to `via`. */
function handedOnce(via: MergeMechanism, message: string, extra: Partial<PullNode>) {
  const first = step(
    world({ issues: [issue(7, { labels: ["autopilot:review"] })], pulls: [pull(7)] }),
    null,
    {
      now: minutes(40),
    },
  );
  expect(only(first.decision.effects, "mergePr")).toEqual([expect.objectContaining({ attempt: 1 })]);
  const after = inReview(first.world, pull(7, { mergeRefusal: handed("sha7a", via, message), ...extra }));
  const seen = step(after, first.state, { now: minutes(41) });
  return { seen, after, state: seen.state as DashboardState, base: seen.world, asked: first.state };
}

const OURS = { enabledBy: BOT, method: "SQUASH" };

describe("which of GitHub's mechanisms fits a refusal", () => {
  it("queues for a merge queue, updates a branch that is behind, and turns on auto-merge for reviews or checks to come", () => {
    expect(mergeMechanismFor(QUEUE, "BLOCKED")).toBe("queue");
    expect(mergeMechanismFor(REVIEWS, "BLOCKED")).toBe("auto-merge");
    expect(mergeMechanismFor(EXPECTED, "BLOCKED")).toBe("auto-merge");
    // "Require branches to be up to date": GitHub calls the checks "expected"; only the merge state tells.
    expect(mergeMechanismFor("1 of 1 required status checks are expected.", "BEHIND")).toBe("update-branch");
    expect(mergeMechanismFor('Required status check "build" is failing.', "BLOCKED")).toBeNull();
    expect(
      mergeMechanismFor("Head branch was modified. Review and try the merge again.", "BEHIND"),
    ).toBeNull();
    expect(mergeMechanismFor("Pull Request is not mergeable", "DIRTY")).toBeNull();
  });

  it("marks the comment with the mechanism, and says what to change when GitHub refused that too", () => {
    expect(handed("sha7a", "auto-merge", REVIEWS)).toMatchObject({ via: "auto-merge", reason: REVIEWS });
    const body = mergeRefusalComment({
      pr: 107,
      issue: 7,
      sha: "sha7a",
      attempt: 1,
      message: REVIEWS,
      tried: { via: "auto-merge", message: "Auto merge is not allowed for this repository" },
    });
    expect(body).toContain("**Allow auto-merge**");
    expect(body).toContain("/autopilot retry #7");
    expect(parseMergeRefusal(body)?.via).toBeNull();
  });
});

describe("auto-merge", () => {
  it("is shown on the dashboard and Autopilot does not ask again while it is on", () => {
    const { seen, after, state } = handedOnce("auto-merge", REVIEWS, { autoMerge: OURS });
    const body = dashboard(seen.decision.effects);
    expect(body).toContain("auto-merge is on: GitHub merges sha7a once an approving review");
    expect(body).not.toContain("GitHub refused the merge");
    for (const at of [45, 90, 600]) {
      const d = decide({ ...input(after), state, now: minutes(at) });
      expect(only(d.effects, "mergePr")).toEqual([]);
      expect(only(d.effects, "withdrawMerge")).toEqual([]);
    }
    expect(state.tasks["7"]!.merge).toMatchObject({ via: "auto-merge", attempt: 1 });
  });

  it("is turned off when a new commit arrives that the gates have not passed yet", () => {
    const { state } = handedOnce("auto-merge", REVIEWS, { autoMerge: OURS });
    const pushed = inReview(
      world(),
      pull(7, {
        headSha: "sha7b",
        checks: [check("test", null)],
        autoMerge: OURS,
        mergeRefusal: handed("sha7a", "auto-merge", REVIEWS),
      }),
    );
    const d = decide({ ...input(pushed), state, now: minutes(42) });
    expect(only(d.effects, "withdrawMerge")).toEqual([
      expect.objectContaining({ pr: 107, what: "auto-merge", reason: expect.stringContaining("sha7b") }),
    ]);
    expect(only(d.effects, "mergePr")).toEqual([]);
  });

  it("is turned off when the task leaves review (a feedback round), but a person's auto-merge is left alone", () => {
    const { state } = handedOnce("auto-merge", REVIEWS, { autoMerge: OURS });
    const failing = (autoMerge: PullNode["autoMerge"]) =>
      inReview(world(), pull(7, { headSha: "sha7b", checks: [check("test", "failure")], autoMerge }));
    const ours = decide({ ...input(failing(OURS)), state, now: minutes(42) });
    expect(only(ours.effects, "withdrawMerge")).toEqual([expect.objectContaining({ what: "auto-merge" })]);
    const theirs = decide({
      ...input(failing({ enabledBy: "dev", method: "MERGE" })),
      state,
      now: minutes(42),
    });
    expect(only(theirs.effects, "withdrawMerge")).toEqual([]);
  });

  it("off again (turned off by a person, or by GitHub) leaves the refusal standing until something changes", () => {
    const { state, base } = handedOnce("auto-merge", REVIEWS, { autoMerge: OURS });
    const off = inReview(
      base,
      pull(7, { autoMerge: null, mergeRefusal: handed("sha7a", "auto-merge", REVIEWS) }),
    );
    const d = decide({ ...input(off), state, now: minutes(50) });
    expect(only(d.effects, "mergePr")).toEqual([]);
    // GitHub drops the request as it starts merging: no request races it for a while, even after a change.
    expect(dashboard(d.effects)).toContain("auto-merge is no longer on (merging, or turned off)");
    const racing = inReview(
      base,
      pull(7, {
        autoMerge: null,
        mergeRefusal: handed("sha7a", "auto-merge", REVIEWS),
        reviews: [review("dev", "APPROVED", "sha7a")],
      }),
    );
    expect(only(decide({ ...input(racing), state: d.state, now: minutes(51) }).effects, "mergePr")).toEqual(
      [],
    );
    const later = decide({ ...input(off), state: d.state, now: minutes(53) });
    expect(only(later.effects, "mergePr")).toEqual([]);
    expect(dashboard(later.effects)).toContain(`GitHub refused the merge: ${REVIEWS}`);
    const approved = inReview(
      base,
      pull(7, {
        autoMerge: null,
        mergeRefusal: handed("sha7a", "auto-merge", REVIEWS),
        reviews: [review("dev", "APPROVED", "sha7a")],
      }),
    );
    const again = decide({ ...input(approved), state: later.state, now: minutes(54) });
    expect(only(again.effects, "mergePr")).toEqual([expect.objectContaining({ attempt: 2 })]);
  });

  it("a PR GitHub merged by itself ends the task as done", () => {
    const { state } = handedOnce("auto-merge", REVIEWS, { autoMerge: OURS });
    const merged = inReview(world(), pull(7, { state: "merged", autoMerge: null }));
    const d = decide({ ...input(merged), state, now: minutes(60) });
    expect(only(d.effects, "closeIssue")).toEqual([{ type: "closeIssue", issue: 7, reason: "completed" }]);
    expect(d.state.tasks["7"]).toBeUndefined();
    expect(only(d.effects, "mergePr")).toEqual([]);
    expect(only(d.effects, "withdrawMerge")).toEqual([]);
  });
});

describe("the merge queue", () => {
  it("shows the position and does not ask again", () => {
    const { seen, after, state } = handedOnce("queue", QUEUE, {
      mergeQueue: { position: 2, state: "QUEUED" },
    });
    expect(dashboard(seen.decision.effects)).toContain("in the merge queue, position 2");
    const d = decide({ ...input(after), state, now: minutes(90) });
    expect(only(d.effects, "mergePr")).toEqual([]);
  });
});

describe("a branch that must be up to date", () => {
  it("is updated, then its new head's checks are awaited and merged as the next attempt", () => {
    const { seen, state, base, asked } = handedOnce(
      "update-branch",
      "1 of 1 required status checks are expected.",
      {},
    );
    expect(dashboard(seen.decision.effects)).toContain("updating the branch with `main`");
    const updated = (conclusion: string | null) =>
      inReview(
        base,
        pull(7, {
          headSha: "sha7c",
          checks: [check("test", conclusion)],
          mergeRefusal: handed("sha7a", "update-branch", "1 of 1 required status checks are expected."),
        }),
      );
    const waiting = decide({ ...input(updated(null)), state, now: minutes(42) });
    // The new head may come before any reconcile saw the old one handed over: the wait still says why.
    const direct = decide({
      ...input(updated(null)),
      state: asked,
      now: minutes(42),
    });
    expect(dashboard(direct.effects)).toContain("branch updated with `main`; waiting for its checks");
    expect(dashboard(waiting.effects)).toContain("branch updated with `main`; waiting for its checks");
    expect(only(waiting.effects, "mergePr")).toEqual([]);
    const green = decide({ ...input(updated("success")), state: waiting.state, now: minutes(43) });
    expect(only(green.effects, "mergePr")).toEqual([
      expect.objectContaining({ expectedHeadSha: "sha7c", attempt: 2 }),
    ]);
  });
});
