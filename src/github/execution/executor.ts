/**
 * Carries out the core's effects, one after another, each safe to repeat: a duplicate webhook delivery or a
 * replayed queued write leaves GitHub as executing it once would. Every check that makes an effect a no-op
 * uses the reconcile's snapshot, so most repeats cost no request at all. The effects with more to them have
 * modules of their own beside this one: the dispatch (dispatch-effect.ts), a refused merge (merge-outcome.ts),
 * the tracking issue (tracking-issue-effects.ts); what they all share is effect-context.ts.
 */
import { describeError } from "../transport/errors.js";
import { ISSUE_NODE_ID_QUERY, PIN_ISSUE_MUTATION } from "../queries.js";
import { graphqlAllowingNotFound } from "../snapshot/snapshot.js";
import type { Effect } from "../../core/effects.js";
import { statusOf } from "../transport/errors.js";
import { withdrawMerge } from "./merge-mechanisms.js";
import { type LabelBatchContext, labelChange, moveLabelsTogether } from "./label-batch.js";
import { deleteBranchAt, existingRefsOf } from "./ref-deletions.js";
import { promoteCandidate, promotionDone } from "./candidate-promotion.js";
import { executeRecovery, recoveryAlreadyDone } from "./task-recovery.js";
import { progressUnchanged, writeProgressComment } from "./progress-comment.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { branchPrefixOf, repoParams } from "./effect-context.js";
import { refusedMerge } from "./merge-outcome.js";
import { dispatch, releaseDispatchLocks } from "./dispatch-effect.js";
import { writeTracking } from "./tracking-issue-effects.js";

/** Stable identity of what an effect acts on, so a fresh effect can supersede a queued one. */
export function effectTarget(effect: Effect): string {
  switch (effect.type) {
    case "setStateLabel":
      return `state#${effect.issue}`;
    case "addLabels":
    case "removeLabels":
      return `${effect.type}#${effect.issue}:${[...effect.labels].sort().join(",")}`;
    case "comment":
      return `comment#${effect.issue}:${effect.key ?? effect.body}`;
    case "react":
      return `react:${effect.commentId}:${effect.content}`;
    case "progressComment":
      return `progress#${effect.issue}:${effect.marker}`;
    case "dispatchWorker":
      return `dispatch#${effect.issue}`;
    case "cancelRun":
      return `cancel:${effect.runId}`;
    case "mergePr":
      return `merge#${effect.pr}`;
    case "withdrawMerge":
      return `withdraw#${effect.pr}:${effect.what}`;
    case "closeIssue":
      return `close#${effect.issue}`;
    case "deleteBranch":
      return `branch:${effect.branch}`;
    case "promoteCandidate":
      return `promote#${effect.issue}`;
    case "closePull":
      return `close-pull#${effect.pr}`;
    case "reopenIssue":
      return `reopen#${effect.issue}`;
    case "revertPull":
      return `revert#${effect.pr}`;
    case "releaseDispatchLocks":
      return `locks#${effect.issue}`;
    case "writeTrackingIssue":
      return "tracking";
    case "pinIssue":
      return `pin#${effect.issue}`;
  }
}

/**
 * Writes the controller itself must make even over the operation limit: the state record, and an epic's progress comment
 * (the state records it as written: one left for later would not be decided again until its text changes).
 */
export function isLimitExempt(effect: Effect): boolean {
  return effect.type === "writeTrackingIssue" || effect.type === "progressComment";
}

function commentMarker(key: string): string {
  return `<!-- autopilot:${key.replace(/-{2,}/g, "-").replace(/[<>]/g, "")} -->`;
}

/** An issue's labels as the snapshot and this run's writes know them; null when the snapshot does not have it. */
function labelsOf(ctx: ExecContext, issue: number): Set<string> | null {
  const known = ctx.run.labels.get(issue);
  if (known) return known;
  const node =
    ctx.world?.issues.find((i) => i.number === issue) ??
    ctx.world?.pulls.find((p) => p.number === issue) ??
    null;
  if (!node) return null;
  const set = new Set(node.labels);
  ctx.run.labels.set(issue, set);
  return set;
}

/** Effects that would change nothing, judged from the snapshot (no request). */
export function alreadyDone(ctx: ExecContext, effect: Effect): string | null {
  const world = ctx.world;
  switch (effect.type) {
    case "setStateLabel": {
      const labels = labelsOf(ctx, effect.issue);
      if (!labels) return null;
      const adds = effect.add !== null && !labels.has(effect.add);
      const removes = effect.remove.some((l) => l !== effect.add && labels.has(l));
      return adds || removes ? null : "labels already as wanted";
    }
    case "addLabels": {
      const labels = labelsOf(ctx, effect.issue);
      return labels && effect.labels.every((l) => labels.has(l)) ? "labels already present" : null;
    }
    case "removeLabels": {
      const labels = labelsOf(ctx, effect.issue);
      return labels && effect.labels.every((l) => !labels.has(l)) ? "labels already absent" : null;
    }
    case "comment": {
      if (!effect.key) return null;
      const marker = commentMarker(effect.key);
      if (ctx.run.commentKeys.has(`${effect.issue}:${marker}`)) return "comment already written in this run";
      // Only Autopilot's own comment counts: a key copied into someone else's comment must not silence it.
      const exists = ctx.facts?.allComments.some(
        (c) => c.issue === effect.issue && c.fromApp === true && c.body.includes(marker),
      );
      return exists ? "a comment with this key exists" : null;
    }
    case "progressComment":
      return progressUnchanged(ctx.facts?.allComments ?? [], effect);
    case "dispatchWorker": {
      const run = world?.runs.find((r) => r.dispatchId === effect.dispatchId);
      return run ? `run ${run.id} already carries dispatch id ${effect.dispatchId}` : null;
    }
    case "cancelRun": {
      const run = world?.runs.find((r) => r.id === effect.runId);
      return run && run.status === "completed" ? "run already completed" : null;
    }
    case "mergePr": {
      const pr = world?.pulls.find((p) => p.number === effect.pr);
      return pr?.state === "merged" ? "already merged" : null;
    }
    case "withdrawMerge": {
      const pr = world?.pulls.find((p) => p.number === effect.pr);
      if (pr && pr.state !== "open") return `PR #${effect.pr} is ${pr.state}`;
      if (effect.what === "auto-merge" && pr && !pr.autoMerge) return "auto-merge already off";
      if (effect.what === "queue" && pr && !pr.mergeQueue) return "not in the merge queue";
      return null;
    }
    case "closeIssue": {
      const issue = world?.issues.find((i) => i.number === effect.issue);
      return issue?.state === "closed" ? "already closed" : null;
    }
    case "closePull":
    case "reopenIssue":
    case "revertPull":
      return recoveryAlreadyDone(world, branchPrefixOf(ctx), effect);
    case "promoteCandidate":
      return promotionDone(world, effect);
    case "writeTrackingIssue": {
      const tracking = world?.trackingIssue;
      if (effect.issue !== null && tracking?.number === effect.issue && tracking.body === effect.body) {
        return "tracking issue body unchanged";
      }
      return null;
    }
    case "releaseDispatchLocks":
      // A complete lock list without any of the task's locks: nothing to delete.
      return existingRefsOf(ctx, effect)?.length === 0 ? "no lock left" : null;
    case "pinIssue": {
      const tracking = world?.trackingIssue;
      const number = effect.issue > 0 ? effect.issue : ctx.run.trackingIssue;
      return tracking && tracking.number === number && tracking.pinned ? "already pinned" : null;
    }
    default:
      return null;
  }
}

/** Executes one effect (not dry run, within budget, breaker permitting). Outage errors propagate. */
export async function executeEffect(ctx: ExecContext, effect: Effect): Promise<EffectOutcome> {
  switch (effect.type) {
    case "setStateLabel":
    case "addLabels":
    case "removeLabels":
      return setLabels(ctx, effect);
    case "comment":
      return comment(ctx, effect);
    case "react":
      await ctx.write(() =>
        ctx.client.request("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", {
          ...repoParams(ctx),
          comment_id: effect.commentId,
          content: effect.content,
        }),
      );
      return { effect, status: "done" };
    case "progressComment": {
      const written = await writeProgressComment(
        { ...ctx, comments: ctx.facts?.allComments ?? [], botId: ctx.world?.botId ?? null },
        effect,
      );
      return { effect, ...written };
    }
    case "dispatchWorker":
      return dispatch(ctx, effect);
    case "cancelRun":
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
    case "mergePr":
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
    case "withdrawMerge":
      return withdrawMerge(ctx, effect);
    case "closeIssue":
      await ctx.write(() =>
        ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
          ...repoParams(ctx),
          issue_number: effect.issue,
          state: "closed",
          state_reason: effect.reason,
        }),
      );
      return { effect, status: "done" };
    case "deleteBranch":
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
    case "closePull":
    case "reopenIssue":
    case "revertPull":
      return executeRecovery({ ...ctx, branchPrefix: branchPrefixOf(ctx) }, effect);
    case "promoteCandidate":
      return promoteCandidate(ctx, effect);
    case "releaseDispatchLocks":
      return releaseDispatchLocks(ctx, effect);
    case "writeTrackingIssue":
      return writeTracking(ctx, effect);
    case "pinIssue":
      return pin(ctx, effect);
  }
}

async function setLabels(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "setStateLabel" | "addLabels" | "removeLabels" }>,
): Promise<EffectOutcome> {
  const { issue, add: toAdd, remove: toRemove } = labelChange(effect, labelsOf(ctx, effect.issue));
  // In one GraphQL request when the node ids are known (src/github/execution/label-batch.ts), else by name over REST.
  const moved = (await moveLabelsTogether(labelBatchOf(ctx), [effect], 1)).length > 0;
  if (!moved && toAdd.length > 0) {
    const added = await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", {
        ...repoParams(ctx),
        issue_number: issue,
        labels: toAdd,
      }),
    );
    // The answer lists the issue's labels with their node ids: the next transition to these goes in one request.
    const ids = ctx.facts?.labelIds;
    if (ids && Array.isArray(added.data))
      for (const label of added.data as { name?: unknown; node_id?: unknown }[])
        if (typeof label.name === "string" && typeof label.node_id === "string")
          ids.set(label.name, label.node_id);
  }
  for (const name of moved ? [] : toRemove) {
    try {
      await ctx.write(() =>
        ctx.client.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", {
          ...repoParams(ctx),
          issue_number: issue,
          name,
        }),
      );
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  }
  recordLabels(ctx, issue, toAdd, toRemove);
  return { effect, status: toAdd.length + toRemove.length > 0 ? "done" : "skipped" };
}

/** What the label writes need of the executor's context (src/github/execution/label-batch.ts). */
export function labelBatchOf(ctx: ExecContext): LabelBatchContext {
  return {
    client: ctx.client,
    log: ctx.log,
    write: ctx.write,
    issueNodeIds: ctx.facts?.issueNodeIds ?? null,
    labelIds: ctx.facts?.labelIds ?? null,
    labelsOf: (issue) => labelsOf(ctx, issue),
  };
}

/** Records labels written in this run, so later effects judge the issue as it is now. */
export function recordLabels(ctx: ExecContext, issue: number, add: string[], remove: string[]): void {
  const set = labelsOf(ctx, issue) ?? new Set<string>();
  for (const l of add) set.add(l);
  for (const l of remove) set.delete(l);
  ctx.run.labels.set(issue, set);
}

async function comment(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "comment" }>,
): Promise<EffectOutcome> {
  const marker = effect.key ? commentMarker(effect.key) : null;
  const body = marker ? `${effect.body}\n\n${marker}` : effect.body;
  await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      ...repoParams(ctx),
      issue_number: effect.issue,
      body,
    }),
  );
  if (marker) ctx.run.commentKeys.add(`${effect.issue}:${marker}`);
  return { effect, status: "done" };
}

const PINS_FULL = /(maximum|limit|full|too many|more than|cannot pin more|already has \d)/i;

async function pin(ctx: ExecContext, effect: Extract<Effect, { type: "pinIssue" }>): Promise<EffectOutcome> {
  const number = effect.issue > 0 ? effect.issue : ctx.run.trackingIssue;
  if (number === null) return { effect, status: "skipped", detail: "no tracking issue yet" };
  let nodeId =
    ctx.facts?.issueNodeIds.get(number) ??
    (ctx.world?.trackingIssue?.number === number ? ctx.facts?.trackingNodeId : null) ??
    null;
  if (!nodeId) {
    const data = await graphqlAllowingNotFound<{
      repository: { issue: { id: string; isPinned: boolean | null } | null } | null;
    }>(ctx, ISSUE_NODE_ID_QUERY, { owner: ctx.repo.owner, name: ctx.repo.name, number });
    const issue = data.repository?.issue;
    if (!issue) return { effect, status: "failed", detail: `issue #${number} not found` };
    if (issue.isPinned) return { effect, status: "skipped", detail: "already pinned" };
    nodeId = issue.id;
  }
  try {
    await ctx.write(() => ctx.client.graphql(PIN_ISSUE_MUTATION, { issueId: nodeId }));
    return { effect, status: "done", issue: number };
  } catch (error) {
    const e = error as { name?: string; errors?: { message?: string }[] };
    if (e?.name !== "GraphqlResponseError") throw error;
    const message = (e.errors ?? []).map((x) => x.message ?? "").join("; ");
    if (/pin/i.test(message) && PINS_FULL.test(message)) {
      const note: Effect = {
        type: "comment",
        issue: number,
        key: "pins-full",
        body:
          "Autopilot could not pin this dashboard: the repository already has the most pinned issues GitHub " +
          "allows. Unpin one (or pin this issue by hand) to keep the dashboard at the top of the issue list; " +
          "Autopilot works the same either way.",
      };
      if (!alreadyDone(ctx, note)) await comment(ctx, note as Extract<Effect, { type: "comment" }>);
      ctx.log.warn(`could not pin #${number}: ${message}`);
      return { effect, status: "skipped", issue: number, detail: "the repository's pins are full" };
    }
    return { effect, status: "failed", detail: message || describeError(error) };
  }
}
