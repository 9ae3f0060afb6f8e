/**
 * The pull requests and branches of a best-of round's candidates (src/core/reconcile/runs/best-of.ts): which pull
 * request is a candidate's (Autopilot's own, on the candidate's branch), and their closing once the round is
 * over or the task left the state.
 */
import type { TaskRecord } from "../../dashboard/index.js";
import { candidateBranchName } from "../../contract.js";
import { partitionPulls } from "../../gates/pull-trust.js";
import type { PullNode } from "../../world.js";
import { type Reconciling, taskBranch } from "../context.js";

type Round = NonNullable<TaskRecord["bestOf"]>;

/** Candidate K's pull request: Autopilot's own, from this repository, on the candidate's branch (newest first). */
export function candidatePull(
  ctx: Reconciling,
  n: number,
  candidate: number,
  state?: PullNode["state"],
): PullNode | null {
  const branch = candidateBranchName(ctx.config.branchPrefix, n, candidate);
  const { trusted } = partitionPulls(ctx.pullsByRef.get(branch) ?? [], {
    repo: ctx.snapshot.repo,
    branch,
    botId: ctx.snapshot.botId,
  });
  return trusted.find((p) => state === undefined || p.state === state) ?? null;
}

/**
 * The task leaves the state (closed, skipped, done) with a round: its candidates' pull requests are closed and
 * their branches deleted, as no later reconcile will remember them.
 */
export function dropCandidatesOnExit(ctx: Reconciling, n: number, record: TaskRecord): void {
  const round = record.bestOf;
  if (!round) return;
  dropCandidates(ctx, n, record, round, "the task ended");
}

/** Every candidate's pull request closed (with a comment naming the winner) and its branch deleted. */
export function dropCandidates(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  round: Round,
  ended?: string,
): void {
  const winner = ended ? 0 : (round.winner ?? 0);
  if (winner > 0 && record.pr === undefined) return;
  const task = ended ?? (winner > 0 ? `the task continues as PR #${record.pr}` : "no candidate completed");
  for (let k = 1; k <= round.candidates.length; k++) {
    const pull = candidatePull(ctx, n, k, "open");
    const branch = candidateBranchName(ctx.config.branchPrefix, n, k);
    if (pull) {
      const why =
        k === winner
          ? `Candidate ${k} was chosen from best of ${round.of}: ${task}, from the same commits on \`${taskBranch(ctx, n)}\`.`
          : `Candidate ${k} was not chosen from best of ${round.of}${winner > 0 ? ` (candidate ${winner} was)` : ""}: ${task}.`;
      ctx.effects.push({
        type: "comment",
        issue: pull.number,
        key: `best-of-closed-${pull.number}`,
        body: why,
      });
      ctx.effects.push({ type: "closePull", pr: pull.number, issue: n });
      ctx.effects.push({ type: "deleteBranch", branch, expectOid: pull.headSha });
      continue;
    }
    const entry = round.candidates[k - 1];
    const key = `best-of-branch-${entry?.attempt ?? k}`;
    if (entry && !entry.pr && !record.notices?.includes(key)) {
      // A candidate without a pull request may have pushed work before it ended: its branch goes once.
      record.notices = [...(record.notices ?? []), key].slice(-12);
      ctx.effects.push({ type: "deleteBranch", branch });
    }
  }
}
