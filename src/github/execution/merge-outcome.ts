import type { Effect } from "../../core/effects.js";
import {
  mergeHandedComment,
  mergeMechanismFor,
  mergeRefusalComment,
} from "../../core/gates/merge-refusal.js";
import { classifyFailure, describeError, refusalWords } from "../transport/errors.js";
import { handToGitHub } from "./merge-mechanisms.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { repoParams } from "./effect-context.js";

/** Whether the PR is merged now (GitHub's own answer; a failed read counts as not merged). */
async function mergedMeanwhile(ctx: ExecContext, pr: number): Promise<boolean> {
  try {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
        ...repoParams(ctx),
        pull_number: pr,
      }),
    );
    return (data as { merged?: boolean }).merged === true;
  } catch {
    return false;
  }
}

/**
 * GitHub refused the merge of a head every Autopilot gate passed. Where the branch's own rules decide (a merge
 * queue, required reviews or checks still to come, a branch that must be up to date), the head is handed to
 * GitHub's own mechanism (src/github/execution/merge-mechanisms.ts); otherwise, or when GitHub refuses that too, the
 * refusal is explained and Autopilot waits. Either way the one PR comment says what happens next.
 */
export async function refusedMerge(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "mergePr" }>,
  error: unknown,
): Promise<EffectOutcome> {
  // Another controller, GitHub's auto-merge or a person may have merged it since the snapshot: GitHub refuses
  // that merge too ("Pull Request is not mergeable"), and a merged PR needs no explanation. One read, only
  // after a refusal.
  if (await mergedMeanwhile(ctx, effect.pr)) return { effect, status: "skipped", detail: "already merged" };
  const message = refusalWords(error);
  const pull = ctx.world?.pulls.find((p) => p.number === effect.pr) ?? null;
  // GitHub's GraphQL mutations name the PR by its node id: without one, only the REST branch update can be used.
  const mechanism = mergeMechanismFor(message, pull?.mergeState);
  const via = mechanism === "update-branch" || pull?.nodeId ? mechanism : null;
  const common = {
    pr: effect.pr,
    issue: effect.issue,
    sha: effect.expectedHeadSha,
    attempt: effect.attempt ?? 1,
    message,
  };
  if (via) {
    const refusedToo = await handToGitHub(ctx, effect, via, pull);
    if (refusedToo === null) {
      await explainRefusal(
        ctx,
        effect,
        mergeHandedComment({ ...common, via, base: pull?.baseRef ?? "the base branch" }),
      );
      return {
        effect,
        status: "handed-to-github",
        detail: `${describeError(error)}; handed to GitHub: ${via}`,
      };
    }
    await explainRefusal(
      ctx,
      effect,
      mergeRefusalComment({ ...common, tried: { via, message: refusedToo } }),
    );
    return {
      effect,
      status: "not-mergeable",
      detail: `${describeError(error)}; ${via} refused: ${refusedToo}`,
    };
  }
  await explainRefusal(ctx, effect, mergeRefusalComment(common));
  return { effect, status: "not-mergeable", detail: describeError(error) };
}

/**
 * The one PR comment saying why GitHub refused the merge (and what GitHub does instead): created on the first
 * refusal, edited in place on later ones (the snapshot finds it by its marker), so the pull request never
 * fills with repeats. The next reconcile reads it back, which works the same when each controller run is a
 * fresh process.
 */
async function explainRefusal(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "mergePr" }>,
  body: string,
): Promise<void> {
  const existing = ctx.world?.pulls.find((p) => p.number === effect.pr)?.mergeRefusal?.commentId;
  try {
    if (existing) {
      await ctx.write(() =>
        ctx.client.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", {
          ...repoParams(ctx),
          comment_id: existing,
          body,
        }),
      );
    } else {
      await ctx.write(() =>
        ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
          ...repoParams(ctx),
          issue_number: effect.pr,
          body,
        }),
      );
    }
  } catch (error) {
    // A secondary rate limit pauses the repository's writes (src/github/gateway.ts); the merge is tried again.
    if (classifyFailure(error) === "secondary-rate-limit") throw error;
    ctx.log.warn(`could not explain the refused merge of PR #${effect.pr}: ${describeError(error)}`);
  }
}
