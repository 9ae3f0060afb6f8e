/** A merge GitHub refused: shown on the dashboard, asked again only after a relevant change (capped), or on `/autopilot retry`. */
import { describe, expect, it } from "vitest";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import {
  MERGE_REFUSAL_CAP,
  mergeRefusalComment,
  mergeRefusalKind,
  parseMergeRefusal,
  shortRefusal,
} from "../../../src/core/gates/merge-refusal.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import type { PullNode, WorldSnapshot } from "../../../src/core/world.js";
import { comment, input, issue, minutes, only, pull, review, step, world } from "../world.js";

const REVIEWS = "At least 1 approving review is required by reviewers with write access.";

/** The refusal comment the executor writes for an attempt, as the snapshot reads it back. */
function refused(sha: string, attempt: number, message = REVIEWS): PullNode["mergeRefusal"] {
  const parsed = parseMergeRefusal(mergeRefusalComment({ pr: 107, issue: 7, sha, attempt, message }));
  return parsed && { commentId: 9001, ...parsed };
}

/** The world after GitHub refused: the task still in review, its PR open with `pr`. */
function refusedWorld(w: WorldSnapshot, pr: PullNode): WorldSnapshot {
  return { ...w, issues: [issue(7, { labels: ["autopilot:review"] })], pulls: [pr] };
}

function dashboard(effects: ReturnType<typeof decide>["effects"]): string {
  return only(effects, "writeTrackingIssue")[0]?.body ?? "";
}

describe("the refusal comment", () => {
  it("carries GitHub's reason, what to do, and a marker the next reconcile reads back", () => {
    const body = mergeRefusalComment({ pr: 107, issue: 7, sha: "abc1234def", attempt: 2, message: REVIEWS });
    expect(body).toContain(`> ${REVIEWS}`);
    expect(body).toContain("approve the pull request");
    expect(body).toContain("/autopilot retry #7");
    expect(parseMergeRefusal(body)).toEqual({ sha: "abc1234def", attempt: 2, reason: REVIEWS, via: null });
    expect(parseMergeRefusal("no marker here")).toBeNull();
  });

  it("names each kind of refusal GitHub gives", () => {
    expect(
      mergeRefusalKind(
        "Repository rule violations found\n\nChanges must be made through the merge queue\n\n",
      ),
    ).toBe("queue");
    expect(mergeRefusalKind(REVIEWS)).toBe("reviews");
    expect(mergeRefusalKind('Required status check "build" is expected.')).toBe("checks");
    expect(mergeRefusalKind("Head branch was modified. Review and try the merge again.")).toBe("head-moved");
    expect(
      shortRefusal("Repository rule violations found\n\nChanges must be made through the merge queue\n\n"),
    ).toBe("Changes must be made through the merge queue");
  });
});

describe("a refused merge", () => {
  /** The first reconcile asks for the merge; GitHub refuses it (the PR now carries the explanation). */
  function refusedOnce() {
    const w = world({ issues: [issue(7, { labels: ["autopilot:review"] })], pulls: [pull(7)] });
    const first = step(w, null, { now: minutes(40) });
    const asked = only(first.decision.effects, "mergePr");
    expect(asked).toEqual([expect.objectContaining({ pr: 107, attempt: 1 })]);
    const after = refusedWorld(first.world, pull(7, { mergeRefusal: refused("sha7a", 1) }));
    return { first, after };
  }

  it("shows GitHub's reason on the dashboard and is not sent again while nothing changed", () => {
    const { first, after } = refusedOnce();
    for (const at of [41, 45, 90, 600]) {
      const d = decide({ ...input(after), state: first.state, now: minutes(at) });
      expect(only(d.effects, "mergePr")).toEqual([]);
    }
    const d = decide({ ...input(after), state: first.state, now: minutes(45) });
    const body = dashboard(d.effects);
    expect(body).toContain(`GitHub refused the merge: ${REVIEWS}`);
    expect(body).toContain("/autopilot retry #7");
    expect(body).not.toContain("every gate passed; merging");
    expect(d.state.tasks["7"]!.merge?.refused).toBe(REVIEWS);
  });

  it("is asked again once something relevant changed (an approval), as the next attempt", () => {
    const { first, after } = refusedOnce();
    const seen = step(after, first.state, { now: minutes(41) });
    expect(only(seen.decision.effects, "mergePr")).toEqual([]);
    const approved = refusedWorld(
      seen.world,
      pull(7, { mergeRefusal: refused("sha7a", 1), reviews: [review("dev", "APPROVED", "sha7a")] }),
    );
    const d = decide({ ...input(approved), state: seen.state, now: minutes(42) });
    expect(only(d.effects, "mergePr")).toEqual([expect.objectContaining({ attempt: 2 })]);
  });

  it("stops after the allowed attempts whatever changes, until a person says /autopilot retry", () => {
    const start = refusedOnce();
    let state = start.first.state;
    let w = start.after;
    let now = 40;
    for (let attempt = 1; attempt <= MERGE_REFUSAL_CAP; attempt++) {
      // Each attempt is refused, and a new review comes in after each refusal.
      const reviews = Array.from({ length: attempt }, (_, i) =>
        review("dev", "COMMENTED", "sha7a", { submittedAt: minutes(30 + i).toISOString() }),
      );
      w = refusedWorld(w, pull(7, { mergeRefusal: refused("sha7a", attempt), reviews }));
      const d = step(w, state, { now: minutes(++now) });
      state = d.state;
      w = refusedWorld(d.world, w.pulls[0]!);
      expect(only(d.decision.effects, "mergePr")).toEqual(
        attempt < MERGE_REFUSAL_CAP ? [expect.objectContaining({ attempt: attempt + 1 })] : [],
      );
    }
    const waiting = decide({ ...input(w), state, now: minutes(++now) });
    expect(only(waiting.effects, "mergePr")).toEqual([]);
    // The last refusal's reconcile wrote the line; nothing changed since, so no write now.
    expect(w.trackingIssue!.body).toContain(`GitHub refused the merge ${MERGE_REFUSAL_CAP} times`);

    const tracking = w.trackingIssue!.number;
    const asked: WorldSnapshot = { ...w, comments: [comment(800, tracking, "dev", "/autopilot retry #7")] };
    const retried = decide({ ...input(asked), state, now: minutes(++now) });
    expect(only(retried.effects, "mergePr")).toEqual([
      expect.objectContaining({ attempt: MERGE_REFUSAL_CAP + 1 }),
    ]);
    expect(parseDashboard(dashboard(retried.effects)).state!.tasks["7"]!.merge?.allowed).toBe(
      2 * MERGE_REFUSAL_CAP,
    );
  });

  it("ignores a refusal of another commit (a push since: the new head is merged at once)", () => {
    const { first } = refusedOnce();
    const pushed = refusedWorld(
      first.world,
      pull(7, { headSha: "sha7b", mergeRefusal: refused("sha7a", 1) }),
    );
    const d = decide({ ...input(pushed), state: first.state, now: minutes(41) });
    expect(only(d.effects, "mergePr")).toEqual([expect.objectContaining({ expectedHeadSha: "sha7b" })]);
  });
});
