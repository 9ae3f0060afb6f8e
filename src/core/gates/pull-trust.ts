/**
 * Which pull requests belong to a task. A branch name proves nothing: anyone can open a pull request from a
 * fork whose branch is named like a task branch, and a person with write access can open one from the task
 * branch itself. The controller counts a pull request as a task's only when it
 *
 * - comes from this repository (not a fork: `isCrossRepository` false, head repository = this repository),
 * - is on the task branch (`<branchPrefix>issue-N`), and
 * - was opened by Autopilot's own bot, compared by account id (a login is only a display name).
 *
 * Everything else is ignored, and reported once on the dashboard (`ignoredPullMessage`).
 */
import type { PullNode, WorldSnapshot } from "../world.js";
import { candidateOfBranch, issueOfRevertBranch, issueOfTaskBranch } from "../contract.js";

interface PullTrustContext {
  repo: { owner: string; name: string };
  /** The task branch, e.g. `autopilot/issue-7`. */
  branch: string;
  /**
   * Account id of Autopilot's bot. src/github always sets it; `undefined` only in snapshots built without
   * identity facts (older fixtures), where the author cannot be compared and only the other checks apply.
   */
  botId: number | null | undefined;
}

interface IgnoredPull {
  pull: PullNode;
  reason: string;
}

/** Why a pull request is not the task's, or null when it is. */
export function distrustOf(pull: PullNode, ctx: PullTrustContext): string | null {
  if (pull.headRef !== ctx.branch) return `not on the task branch \`${ctx.branch}\``;
  if (pull.isCrossRepository === true) return "from a fork";
  const own = `${ctx.repo.owner}/${ctx.repo.name}`.toLowerCase();
  // A deleted fork shows no head repository; a missing one is not this repository either.
  if (pull.headRepository !== undefined && (pull.headRepository ?? "").toLowerCase() !== own) {
    return `from another repository (${pull.headRepository ?? "deleted"})`;
  }
  if (ctx.botId !== undefined) {
    if (ctx.botId === null) return "Autopilot's own account is unknown, so no author can be trusted";
    if (pull.authorId === undefined || pull.authorId === null || pull.authorId !== ctx.botId) {
      return "not opened by Autopilot";
    }
  }
  return null;
}

/** Splits pull requests into the task's (newest first) and the ignored ones. */
export function partitionPulls(
  pulls: readonly PullNode[],
  ctx: PullTrustContext,
): { trusted: PullNode[]; ignored: IgnoredPull[] } {
  const trusted: PullNode[] = [];
  const ignored: IgnoredPull[] = [];
  for (const pull of pulls) {
    const reason = distrustOf(pull, ctx);
    if (reason === null) trusted.push(pull);
    else ignored.push({ pull, reason });
  }
  trusted.sort((a, b) => b.number - a.number);
  return { trusted, ignored };
}

/** The dashboard line for an ignored pull request: `ignored PR #12 by @mallory: from a fork`. */
export function ignoredPullMessage(ignored: IgnoredPull): string {
  const login = ignored.pull.author ? ` by @${ignored.pull.author.replace(/[^A-Za-z0-9[\]_-]/g, "")}` : "";
  return `ignored PR #${ignored.pull.number}${login} on \`${ignored.pull.headRef.slice(0, 100).replace(/`/g, "")}\`: ${ignored.reason}`;
}

/**
 * The open pull requests whose diff the controller must read: the task's own, on task branches, the reverts
 * `/autopilot rollback` asked GitHub for (on `revert-<PR>-<task branch>`, opened by Autopilot too), which pass the
 * same gates, and the candidates of a best-of round (on `<task branch>-candidate-K`, `candidate` set), whose
 * diffs the choice among them weighs.
 */
export function trustedOpenPulls(
  world: WorldSnapshot,
  branchPrefix: string,
): { pull: PullNode; issue: number; candidate?: number }[] {
  const out: { pull: PullNode; issue: number; candidate?: number }[] = [];
  for (const pull of world.pulls) {
    if (pull.state !== "open") continue;
    const candidate = candidateOfBranch(branchPrefix, pull.headRef);
    const issue =
      issueOfTaskBranch(branchPrefix, pull.headRef) ??
      issueOfRevertBranch(branchPrefix, pull.headRef)?.issue ??
      candidate?.issue ??
      null;
    if (issue === null) continue;
    // The head ref is the task branch itself, its revert branch or a candidate's (the functions above matched
    // all of it).
    const ctx = { repo: world.repo, branch: pull.headRef, botId: world.botId };
    if (distrustOf(pull, ctx) !== null) continue;
    out.push(candidate ? { pull, issue, candidate: candidate.candidate } : { pull, issue });
  }
  return out;
}
