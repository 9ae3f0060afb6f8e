/**
 * `review.required` on the controller's side (docs/CONTROLLER.md, "The reviewer's gate"): a head merges only when
 * Autopilot's reviewer approved that very commit — read from the pull request's reviews, a review by Autopilot's
 * own account at the head whose hidden marker (written by the worker, never by the reviewer: contract.ts) says
 * approve for that head — or a person with write access approved it. It is one more gate: it never lets a head
 * past a gate that holds it (checks, changes requested, the human gate).
 */
import { parseReviewMarker } from "../contract.js";
import { sameLogin } from "../tasks/commands.js";
import type { PullNode } from "../world.js";

/** Whether Autopilot's own latest review of the head carries an approving verdict of that head. */
export function reviewerApprovedHead(pr: Pick<PullNode, "headSha" | "reviews">, botLogin: string): boolean {
  const own = pr.reviews
    .filter((r) => r.author !== null && sameLogin(r.author, botLogin) && r.commitSha === pr.headSha)
    .map((r) => ({ at: Date.parse(r.submittedAt ?? "") || 0, marker: parseReviewMarker(r.body) }))
    .filter((r) => r.marker !== null && r.marker.head === pr.headSha)
    .sort((a, b) => a.at - b.at);
  return own.at(-1)?.marker?.verdict === "approve";
}
