/**
 * `review.required` on the controller's side (src/core/gates/reviewer-gate.ts, gates.ts): a head merges only when
 * Autopilot's own review of that commit carries the worker's approving marker for it, or a writer approved it;
 * never past another gate.
 */
import { describe, expect, it } from "vitest";
import { reviewMarker } from "../../../src/core/contract.js";
import { evaluatePullRequest, type GateOptions } from "../../../src/core/gates/gates.js";
import type { PullNode } from "../../../src/core/world.js";
import { BOT, check, minutes, pull, review } from "../world.js";

const HEAD = "a".repeat(40);
const OLD = "b".repeat(40);
const options = (extra: Partial<GateOptions> = {}): GateOptions => ({
  requiredChecks: [],
  botLogin: BOT,
  permissions: { alice: "write", mallory: "read" },
  humanGateRules: [],
  feedbackSha: null,
  autoMerge: true,
  now: minutes(40),
  checksTimeoutMinutes: 20,
  reviewerRequired: true,
  ...extra,
});
const verdict = (extra: Partial<PullNode>, opts: Partial<GateOptions> = {}) =>
  evaluatePullRequest(pull(7, { headSha: HEAD, ...extra }), options(opts)).verdict;
const byBot = (verdictWord: "approve" | "request_changes", head: string, commit = head) =>
  review("autopilot", "COMMENTED", commit, {
    body: `Autopilot's reviewer …\n\n${reviewMarker(verdictWord, head)}`,
  });

describe("the reviewer's gate", () => {
  it("waits for an approval of the head, and merges with the reviewer's own approving review of it", () => {
    expect(verdict({})).toMatchObject({ action: "wait", reason: expect.stringMatching(/review\.required/) });
    expect(verdict({ reviews: [byBot("approve", HEAD)] })).toEqual({ action: "merge", sha: HEAD });
  });

  it("does not count an approval of an earlier head, a later request for changes, or anyone else's marker", () => {
    expect(verdict({ reviews: [byBot("approve", OLD)] })).toMatchObject({ action: "wait" });
    // A marker naming the head in a review of another commit is not the head's review.
    expect(verdict({ reviews: [byBot("approve", HEAD, OLD)] })).toMatchObject({ action: "wait" });
    const later = { ...byBot("request_changes", HEAD), submittedAt: minutes(35).toISOString() };
    expect(verdict({ reviews: [byBot("approve", HEAD), later] })).toMatchObject({ action: "wait" });
    const forged = { ...byBot("approve", HEAD), author: "mallory" };
    expect(verdict({ reviews: [forged] })).toMatchObject({ action: "wait" });
    // The marker must end the body: one quoted earlier in it is text, not the verdict.
    const quoted = byBot("request_changes", HEAD);
    quoted.body = `${reviewMarker("approve", HEAD)}\n${quoted.body}`;
    expect(verdict({ reviews: [quoted] })).toMatchObject({ action: "wait" });
  });

  it("lets a writer's approval of the head stand in for the reviewer's (a person decides)", () => {
    expect(verdict({ reviews: [review("alice", "APPROVED", HEAD)] })).toEqual({ action: "merge", sha: HEAD });
  });

  it("never lets a head past another gate", () => {
    const approved = [byBot("approve", HEAD)];
    expect(verdict({ reviews: approved, checks: [check("test", "failure")] })).toMatchObject({
      action: "feedback",
    });
    expect(verdict({ reviews: approved, checks: [check("test", null)] })).toMatchObject({ action: "wait" });
    expect(verdict({ reviews: approved }, { humanGateRules: ["migrations"] })).toMatchObject({
      action: "wait",
      kind: "human-gate",
    });
  });

  it("is off unless required", () => {
    expect(verdict({}, { reviewerRequired: false })).toEqual({ action: "merge", sha: HEAD });
  });
});
