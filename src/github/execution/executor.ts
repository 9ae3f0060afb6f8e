/**
 * Carries out the core's effects, one after another, each safe to repeat: a duplicate webhook delivery or a
 * replayed queued write leaves GitHub as executing it once would. Every check that makes an effect a no-op
 * uses the reconcile's snapshot, so most repeats cost no request at all.
 *
 * Each effect type is one entry of EFFECTS: what it acts on (`target`, so a fresh effect can supersede a
 * queued one), whether the snapshot shows it done (`alreadyDone`, no request) and how it is carried out
 * (`execute`). The effects with more to them have modules of their own beside this one: the labels
 * (label-effects.ts), comments and the pin (comment-effects.ts), the dispatch (dispatch-effect.ts), a refused
 * merge (merge-outcome.ts), the tracking issue (tracking-issue-effects.ts); what they all share is
 * effect-context.ts. A new effect type is one entry here (docs/ARCHITECTURE.md, CONTRIBUTING.md).
 */
import type { Effect } from "../../core/effects.js";
import { statusOf } from "../transport/errors.js";
import { promoteCandidate, promotionDone } from "./candidate-promotion.js";
import {
  commentAlreadyWritten,
  commentTarget,
  pin,
  pinAlreadyDone,
  writeComment,
} from "./comment-effects.js";
import { dispatch, releaseDispatchLocks } from "./dispatch-effect.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { branchPrefixOf, repoParams } from "./effect-context.js";
import { labelsAlreadyDone, setLabels } from "./label-effects.js";
import { withdrawMerge } from "./merge-mechanisms.js";
import { refusedMerge } from "./merge-outcome.js";
import { progressUnchanged, writeProgressComment } from "./progress-comment.js";
import { deleteBranchAt, existingRefsOf } from "./ref-deletions.js";
import { createSplitIssues, splitAlreadyDone } from "./split-issues.js";
import { executeRecovery, recoveryAlreadyDone } from "./task-recovery.js";
import { writeTracking } from "./tracking-issue-effects.js";

type EffectOf<T extends Effect["type"]> = Extract<Effect, { type: T }>;

interface EffectEntry<E extends Effect> {
  /** Stable identity of what the effect acts on. */
  target(effect: E): string;
  /** Why the effect would change nothing, judged from the snapshot (no request); null when it would. */
  alreadyDone(ctx: ExecContext, effect: E): string | null;
  /** Carries it out (not dry run, within the operation limit, breaker permitting). Outage errors propagate. */
  execute(ctx: ExecContext, effect: E): Promise<EffectOutcome>;
}

type EffectTable = { [T in Effect["type"]]: EffectEntry<EffectOf<T>> };

const notDone = () => null;

const EFFECTS: EffectTable = {
  setStateLabel: {
    target: (e) => `state#${e.issue}`,
    alreadyDone: labelsAlreadyDone,
    execute: setLabels,
  },
  addLabels: {
    target: (e) => `${e.type}#${e.issue}:${[...e.labels].sort().join(",")}`,
    alreadyDone: labelsAlreadyDone,
    execute: setLabels,
  },
  removeLabels: {
    target: (e) => `${e.type}#${e.issue}:${[...e.labels].sort().join(",")}`,
    alreadyDone: labelsAlreadyDone,
    execute: setLabels,
  },
  comment: {
    target: commentTarget,
    alreadyDone: commentAlreadyWritten,
    execute: writeComment,
  },
  react: {
    target: (e) => `react:${e.review ? "review:" : ""}${e.commentId}:${e.content}`,
    alreadyDone: notDone,
    async execute(ctx, effect) {
      const params = { ...repoParams(ctx), comment_id: effect.commentId, content: effect.content };
      // https://docs.github.com/en/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment
      await ctx.write(() =>
        effect.review
          ? ctx.client.request("POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions", params)
          : ctx.client.request("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", params),
      );
      return { effect, status: "done" };
    },
  },
  progressComment: {
    target: (e) => `progress#${e.issue}:${e.marker}`,
    alreadyDone: (ctx, e) => progressUnchanged(ctx.facts?.allComments ?? [], e),
    async execute(ctx, effect) {
      const written = await writeProgressComment(
        { ...ctx, comments: ctx.facts?.allComments ?? [], botId: ctx.world?.botId ?? null },
        effect,
      );
      return { effect, ...written };
    },
  },
  dispatchWorker: {
    target: (e) => `dispatch#${e.issue}`,
    alreadyDone(ctx, effect) {
      const run = ctx.world?.runs.find((r) => r.dispatchId === effect.dispatchId);
      return run ? `run ${run.id} already carries dispatch id ${effect.dispatchId}` : null;
    },
    execute: dispatch,
  },
  cancelRun: {
    target: (e) => `cancel:${e.runId}`,
    alreadyDone(ctx, effect) {
      const run = ctx.world?.runs.find((r) => r.id === effect.runId);
      return run && run.status === "completed" ? "run already completed" : null;
    },
    async execute(ctx, effect) {
      try {
        await ctx.write(() =>
          ctx.client.request("POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", {
            ...repoParams(ctx),
            run_id: effect.runId,
          }),
        );
        return { effect, status: "done" };
      } catch (error) {
        if (statusOf(error) === 409) return { effect, status: "skipped", detail: "run already finished" };
        throw error;
      }
    },
  },
  mergePr: {
    target: (e) => `merge#${e.pr}`,
    alreadyDone(ctx, effect) {
      const pr = ctx.world?.pulls.find((p) => p.number === effect.pr);
      return pr?.state === "merged" ? "already merged" : null;
    },
    async execute(ctx, effect) {
      try {
        await ctx.write(() =>
          ctx.client.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", {
            ...repoParams(ctx),
            pull_number: effect.pr,
            sha: effect.expectedHeadSha,
            merge_method: effect.method,
          }),
        );
        return { effect, status: "done" };
      } catch (error) {
        const status = statusOf(error);
        if (status === 405 || status === 409 || status === 422) return refusedMerge(ctx, effect, error);
        throw error;
      }
    },
  },
  withdrawMerge: {
    target: (e) => `withdraw#${e.pr}:${e.what}`,
    alreadyDone(ctx, effect) {
      const pr = ctx.world?.pulls.find((p) => p.number === effect.pr);
      if (pr && pr.state !== "open") return `PR #${effect.pr} is ${pr.state}`;
      if (effect.what === "auto-merge" && pr && !pr.autoMerge) return "auto-merge already off";
      if (effect.what === "queue" && pr && !pr.mergeQueue) return "not in the merge queue";
      return null;
    },
    execute: withdrawMerge,
  },
  closeIssue: {
    target: (e) => `close#${e.issue}`,
    alreadyDone(ctx, effect) {
      const issue = ctx.world?.issues.find((i) => i.number === effect.issue);
      return issue?.state === "closed" ? "already closed" : null;
    },
    async execute(ctx, effect) {
      await ctx.write(() =>
        ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
          ...repoParams(ctx),
          issue_number: effect.issue,
          state: "closed",
          state_reason: effect.reason,
        }),
      );
      return { effect, status: "done" };
    },
  },
  deleteBranch: {
    target: (e) => `branch:${e.branch}`,
    alreadyDone: notDone,
    async execute(ctx, effect) {
      if (effect.expectOid) {
        const done = await deleteBranchAt(ctx, effect.branch, effect.expectOid);
        return done.deleted
          ? { effect, status: "done" }
          : { effect, status: "skipped", detail: `kept: ${done.kept}` };
      }
      try {
        await ctx.write(() =>
          ctx.client.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", {
            ...repoParams(ctx),
            ref: `heads/${effect.branch}`,
          }),
        );
        return { effect, status: "done" };
      } catch (error) {
        const status = statusOf(error);
        if (status === 422 || status === 404)
          return { effect, status: "skipped", detail: "branch already gone" };
        throw error;
      }
    },
  },
  promoteCandidate: {
    target: (e) => `promote#${e.issue}`,
    alreadyDone: (ctx, e) => promotionDone(ctx.world, e),
    execute: promoteCandidate,
  },
  closePull: {
    target: (e) => `close-pull#${e.pr}`,
    alreadyDone: (ctx, e) => recoveryAlreadyDone(ctx.world, branchPrefixOf(ctx), e),
    execute: (ctx, e) => executeRecovery({ ...ctx, branchPrefix: branchPrefixOf(ctx) }, e),
  },
  reopenIssue: {
    target: (e) => `reopen#${e.issue}`,
    alreadyDone: (ctx, e) => recoveryAlreadyDone(ctx.world, branchPrefixOf(ctx), e),
    execute: (ctx, e) => executeRecovery({ ...ctx, branchPrefix: branchPrefixOf(ctx) }, e),
  },
  revertPull: {
    target: (e) => `revert#${e.pr}`,
    alreadyDone: (ctx, e) => recoveryAlreadyDone(ctx.world, branchPrefixOf(ctx), e),
    execute: (ctx, e) => executeRecovery({ ...ctx, branchPrefix: branchPrefixOf(ctx) }, e),
  },
  releaseDispatchLocks: {
    target: (e) => `locks#${e.issue}`,
    // A complete lock list without any of the task's locks: nothing to delete.
    alreadyDone: (ctx, e) => (existingRefsOf(ctx, e)?.length === 0 ? "no lock left" : null),
    execute: releaseDispatchLocks,
  },
  writeTrackingIssue: {
    target: () => "tracking",
    alreadyDone(ctx, effect) {
      const tracking = ctx.world?.trackingIssue;
      return effect.issue !== null && tracking?.number === effect.issue && tracking.body === effect.body
        ? "tracking issue body unchanged"
        : null;
    },
    execute: writeTracking,
  },
  pinIssue: {
    target: (e) => `pin#${e.issue}`,
    alreadyDone: pinAlreadyDone,
    execute: pin,
  },
  createSplitIssues: {
    target: (e) => `split#${e.parent}`,
    alreadyDone: splitAlreadyDone,
    execute: createSplitIssues,
  },
};

/** The table's entry for this effect's type (one cast, where TypeScript cannot follow the pairing). */
function entryOf<E extends Effect>(effect: E): EffectEntry<E> {
  return EFFECTS[effect.type] as unknown as EffectEntry<E>;
}

/** Stable identity of what an effect acts on, so a fresh effect can supersede a queued one. */
export function effectTarget(effect: Effect): string {
  return entryOf(effect).target(effect);
}

/** Effects that would change nothing, judged from the snapshot (no request). */
export function alreadyDone(ctx: ExecContext, effect: Effect): string | null {
  return entryOf(effect).alreadyDone(ctx, effect);
}

/** Executes one effect (not dry run, within the operation limit, breaker permitting). Outage errors propagate. */
export function executeEffect(ctx: ExecContext, effect: Effect): Promise<EffectOutcome> {
  return entryOf(effect).execute(ctx, effect);
}

/**
 * Writes the controller itself must make even over the operation limit: the state record, and an epic's
 * progress comment (the state records it as written: one left for later would not be decided again until its
 * text changes).
 */
export function isLimitExempt(effect: Effect): boolean {
  return effect.type === "writeTrackingIssue" || effect.type === "progressComment";
}
