/**
 * Carries out the core's effects, one after another, each safe to repeat: a duplicate webhook delivery or a
 * replayed queued write leaves GitHub as executing it once would. Every check that makes an effect a no-op
 * uses the reconcile's snapshot, so most repeats cost no request at all.
 */
import { dispatchLockRef } from "../../core/contract.js";
import { fetchWorkerRuns } from "../snapshot/worker-run-listing.js";
import type { Effect } from "../../core/effects.js";
import {
  mergeHandedComment,
  mergeMechanismFor,
  mergeRefusalComment,
} from "../../core/gates/merge-refusal.js";
import type { WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { classifyFailure, describeError, messageOf, refusalWords, statusOf } from "../transport/errors.js";
import { handToGitHub, withdrawMerge } from "./merge-mechanisms.js";
import { type LabelBatchContext, labelChange, moveLabelsTogether } from "./label-batch.js";
import { deleteBranchAt, existingRefsOf } from "./ref-deletions.js";
import { promoteCandidate, promotionDone } from "./candidate-promotion.js";
import { ISSUE_NODE_ID_QUERY, PIN_ISSUE_MUTATION } from "../queries.js";
import { graphqlAllowingNotFound, type SnapshotFacts, TRACKING_MARKER } from "../snapshot/snapshot.js";
import { executeRecovery, recoveryAlreadyDone } from "./task-recovery.js";
import { progressUnchanged, writeProgressComment } from "./progress-comment.js";

export type OutcomeStatus =
  /** Done now. */
  | "done"
  /** Nothing to do: GitHub already looks the way the effect wants. */
  | "skipped"
  /** Dry run: logged as "would …". */
  | "dry-run"
  /** Over the per-run operation budget: left for the next reconcile. */
  | "deferred"
  /** Held back by the open circuit breaker; replayed when it closes. */
  | "queued"
  /** GitHub said no (a 4xx other than the expected ones). */
  | "failed"
  /** The tracking issue changed since the snapshot (revision mismatch): re-run reconcile. */
  | "conflict"
  /** The merge was refused (405/409/422: not mergeable, or the head moved). */
  | "not-mergeable"
  /** The merge was refused and handed to GitHub's own mechanism (auto-merge, merge queue, branch update). */
  | "handed-to-github";

export interface EffectOutcome {
  effect: Effect;
  status: OutcomeStatus;
  detail?: string;
  /** Why a `deferred` effect was left for the next reconcile. */
  deferredBy?: "revision-conflict" | "operation-budget";
  /** The tracking issue created or updated. */
  issue?: number;
  /** The workflow run GitHub reported for a dispatch, when it does. */
  runId?: number;
}

export interface ExecContext {
  client: OctokitSurface;
  repo: RepoRef;
  log: GatewayLog;
  world: WorldSnapshot | null;
  facts: SnapshotFacts | null;
  botLogin: string;
  workerWorkflow: string;
  /** Reads the revision from a tracking-issue body's state marker; null when it has none (or it is corrupt). */
  revisionOf: (body: string) => number | null;
  /** Calls that change GitHub (counted by the breaker). */
  write: <T>(call: () => Promise<T>) => Promise<T>;
  /** Calls that only read. */
  read: <T>(call: () => Promise<T>) => Promise<T>;
  /** Mutable within one execute(): the tracking issue number (set when created) and keys written. */
  run: { trackingIssue: number | null; commentKeys: Set<string>; labels: Map<number, Set<string>> };
  /** Remember the tracking issue number for the next snapshot. */
  rememberTracking: (issue: number) => void;
}

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
 * Writes the controller itself must make even over budget: the state record, and an epic's progress comment
 * (the state records it as written: one left for later would not be decided again until its text changes).
 */
export function isBudgetExempt(effect: Effect): boolean {
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

const o = (ctx: ExecContext) => ({ owner: ctx.repo.owner, repo: ctx.repo.name });

/** The branch prefix the snapshot read with (revert branches are named after task branches). */
const branchPrefixOf = (ctx: ExecContext) => ctx.facts?.settings?.branchPrefix ?? "autopilot/";

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
          ...o(ctx),
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
            ...o(ctx),
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
            ...o(ctx),
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
          ...o(ctx),
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
            ...o(ctx),
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

/** Whether the PR is merged now (GitHub's own answer; a failed read counts as not merged). */
async function mergedMeanwhile(ctx: ExecContext, pr: number): Promise<boolean> {
  try {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...o(ctx), pull_number: pr }),
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
async function refusedMerge(
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
          ...o(ctx),
          comment_id: existing,
          body,
        }),
      );
    } else {
      await ctx.write(() =>
        ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
          ...o(ctx),
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
        ...o(ctx),
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
          ...o(ctx),
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
      ...o(ctx),
      issue_number: effect.issue,
      body,
    }),
  );
  if (marker) ctx.run.commentKeys.add(`${effect.issue}:${marker}`);
  return { effect, status: "done" };
}

async function dispatch(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): Promise<EffectOutcome> {
  if (effect.resend) {
    // A resend goes without the lock (its first send may have taken it), so it is the one dispatch that can
    // start a second run: read the runs again first, as the snapshot that decided it may be older than the run.
    const run = await runCarrying(ctx, effect.dispatchId);
    if (run !== null)
      return {
        effect,
        status: "skipped",
        detail: `run ${run} already carries dispatch ${effect.dispatchId}`,
      };
  }
  const lock = effect.resend ? "taken" : await takeDispatchLock(ctx, effect);
  if (lock === "lost") {
    return {
      effect,
      status: "skipped",
      detail: `another controller already dispatched #${effect.issue} attempt ${effect.attempt}`,
    };
  }
  const inputs: Record<string, string> = {
    ...(effect.inputs ?? {}),
    issue: String(effect.issue),
    attempt: String(effect.attempt),
    "dispatch-id": effect.dispatchId,
    "tracking-issue": ctx.run.trackingIssue === null ? "" : String(ctx.run.trackingIssue),
  };
  const send = (withInputs: Record<string, string>) =>
    ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...o(ctx),
        workflow_id: ctx.workerWorkflow,
        ref: ctx.world?.repo.defaultBranch ?? "main",
        inputs: withInputs,
        return_run_details: true,
      }),
    );
  const notes: string[] = [];
  if (typeof lock === "object") notes.push(`without its dispatch lock: ${lock.refused}`);
  let response: Awaited<ReturnType<typeof send>>;
  try {
    response = await send(inputs);
  } catch (error) {
    if (!undeclaredConfigDigest(error, inputs)) throw error;
    // A worker workflow written before `config-digest` existed: GitHub refuses the undeclared input. Such a
    // worker still never falls back to the defaults (it takes the default branch's file, or the dashboard's
    // last good configuration while that file is bad, or refuses), so the task goes on, and the log says how
    // to get the stricter check.
    const { "config-digest": _dropped, ...older } = inputs;
    const note =
      `${ctx.workerWorkflow} does not declare the \`config-digest\` input, so its worker cannot check that it runs ` +
      "under the configuration the controller decided with: add the input as templates/workflows/autopilot-worker.yml does";
    ctx.log.warn(note);
    notes.push(note);
    response = await send(older);
  }
  const data = response.data as { workflow_run_id?: number } | undefined;
  const outcome: EffectOutcome = { effect, status: "done" };
  if (notes.length > 0) outcome.detail = notes.join("; ");
  if (data && typeof data.workflow_run_id === "number") outcome.runId = data.workflow_run_id;
  return outcome;
}

/**
 * The worker run (the dispatched runs the snapshot would list) whose title carries this dispatch id; null when
 * none does, or when the read fails for another reason than a rate limit (the resend then goes: a lost run costs
 * the task more than a duplicate, which the next reconcile cancels). A rate limit goes up to the gateway, which
 * holds the dispatch for the next reconcile rather than resend it blind.
 */
async function runCarrying(ctx: ExecContext, dispatchId: string): Promise<number | null> {
  try {
    const runs = await fetchWorkerRuns(ctx, ctx.workerWorkflow);
    return runs.find((r) => r.dispatchId === dispatchId)?.id ?? null;
  } catch (error) {
    const kind = classifyFailure(error);
    if (kind === "rate-limit" || kind === "secondary-rate-limit") throw error;
    return null;
  }
}

/** GitHub's 422 for a dispatch input the workflow does not declare, when that input is `config-digest`. */
function undeclaredConfigDigest(error: unknown, inputs: Record<string, string>): boolean {
  return (
    "config-digest" in inputs &&
    statusOf(error) === 422 &&
    /unexpected inputs provided/i.test(messageOf(error)) &&
    messageOf(error).includes("config-digest")
  );
}

type DispatchLock = "taken" | "lost" | { refused: string };

/**
 * GitHub has no compare-and-swap for issue bodies, so the dashboard's revision check cannot stop two controllers
 * from dispatching the same task attempt. Creating a git ref is atomic: exactly one creator of
 * `refs/autopilot/dispatch/issue-N-attempt-A` succeeds and every other gets 422. The ref points at the default
 * branch's head as the snapshot saw it (any commit of the repository would do), so it costs one request a
 * dispatch; the head is read only when the snapshot did not give it.
 *
 * GitHub also answers 422 when it refuses the ref for another reason (a ruleset restricting ref creation, for
 * one), so a 422 is checked by reading the ref: there → another controller took it (`lost`); absent → the
 * refusal is something else (`refused`, with GitHub's words). Then the dispatch goes on without the lock, as
 * it did before locks existed: the tracking issue's revision check (its write comes before every dispatch and a
 * stale controller's write is refused) and the worker's claim of the task keep two controllers from running one
 * attempt twice, and the dashboard says the lock is missing (src/core/reconcile/runs/dispatch-locks.ts).
 */
async function takeDispatchLock(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): Promise<DispatchLock> {
  const branch = ctx.world?.repo.defaultBranch ?? "main";
  let sha = ctx.facts?.defaultBranchSha ?? null;
  if (!sha) {
    const head = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...o(ctx), ref: `heads/${branch}` }),
    );
    sha = (head.data as { object?: { sha?: string } }).object?.sha ?? null;
  }
  if (!sha) throw new Error(`cannot read the head of ${branch} to take the dispatch lock`);
  const ref = dispatchLockRef(effect.issue, effect.attempt);
  try {
    await ctx.write(() => ctx.client.request("POST /repos/{owner}/{repo}/git/refs", { ...o(ctx), ref, sha }));
    return "taken";
  } catch (error) {
    if (statusOf(error) !== 422) throw error;
    try {
      await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
          ...o(ctx),
          ref: ref.slice("refs/".length),
        }),
      );
      return "lost";
    } catch (readError) {
      if (statusOf(readError) !== 404) throw readError;
      // GitHub puts a ruleset's reason after the first line ("Repository rule violations found\n\n…").
      const words = messageOf(error).replace(/\s+/g, " ").trim().slice(0, 200);
      const refused = `GitHub refused to create ${ref} (422 ${words})`;
      ctx.log.warn(`${refused}; dispatching #${effect.issue} attempt ${effect.attempt} without the lock`);
      return { refused };
    }
  }
}

/** Deletes an ended task's dispatch lock refs; one already gone (or never created) is fine. */
async function releaseDispatchLocks(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "releaseDispatchLocks" }>,
): Promise<EffectOutcome> {
  let deleted = 0;
  for (let attempt = 1; attempt <= effect.attempts; attempt++) {
    try {
      await ctx.write(() =>
        ctx.client.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", {
          ...o(ctx),
          ref: dispatchLockRef(effect.issue, attempt).slice("refs/".length),
        }),
      );
      deleted++;
    } catch (error) {
      const status = statusOf(error);
      if (status !== 404 && status !== 422) throw error;
    }
  }
  return deleted > 0 ? { effect, status: "done" } : { effect, status: "skipped", detail: "no lock left" };
}

// ---------------------------------------------------------------------------------------------------------
// The tracking issue

interface RestIssue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  pull_request?: unknown;
}

/** Finds the open tracking issue by its marker (consistent REST listing, not search): newest first. */
async function findTrackingIssue(ctx: ExecContext): Promise<RestIssue | null> {
  const params: Record<string, unknown> = {
    ...o(ctx),
    state: "open",
    sort: "created",
    direction: "asc",
    per_page: 100,
  };
  if (ctx.botLogin) params.creator = ctx.botLogin;
  const response = await ctx.read(() => ctx.client.request("GET /repos/{owner}/{repo}/issues", params));
  const list = (response.data as RestIssue[]) ?? [];
  return list.find((i) => !i.pull_request && (i.body ?? "").includes(TRACKING_MARKER)) ?? null;
}

async function writeTracking(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "writeTrackingIssue" }>,
): Promise<EffectOutcome> {
  if (effect.body.length > 65_536) {
    return {
      effect,
      status: "failed",
      detail: `body is ${effect.body.length} characters, over GitHub's 65,536`,
    };
  }
  const body = effect.body.includes(TRACKING_MARKER) ? effect.body : `${TRACKING_MARKER}\n${effect.body}`;
  let number = effect.issue;
  let current: RestIssue | null = null;
  if (number === null) {
    current = await findTrackingIssue(ctx);
    if (current) number = current.number;
  } else {
    // Re-read before writing: the single-writer check.
    const response = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues/{issue_number}", {
        ...o(ctx),
        issue_number: number,
      }),
    );
    current = response.data as RestIssue;
  }
  if (current && number !== null) {
    const revision = ctx.revisionOf(current.body ?? "");
    if (revision !== effect.expectedRevision) {
      ctx.rememberTracking(number);
      return {
        effect,
        status: "conflict",
        issue: number,
        detail: `tracking issue #${number} is at revision ${revision ?? "none"}, expected ${effect.expectedRevision ?? "none"}`,
      };
    }
    if ((current.body ?? "") === body && current.title === effect.title) {
      ctx.run.trackingIssue = number;
      return { effect, status: "skipped", issue: number, detail: "unchanged" };
    }
    await ctx.write(() =>
      ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
        ...o(ctx),
        issue_number: number,
        title: effect.title,
        body,
      }),
    );
    ctx.run.trackingIssue = number;
    ctx.rememberTracking(number);
    return { effect, status: "done", issue: number };
  }
  const response = await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues", { ...o(ctx), title: effect.title, body }),
  );
  const created = (response.data as { number: number; node_id?: string }).number;
  ctx.run.trackingIssue = created;
  ctx.rememberTracking(created);
  return { effect, status: "done", issue: created, detail: "created" };
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
