/**
 * The plan gate (`planGate` in the configuration): a task it applies to (every task when `planGate.enabled`, or
 * one carrying `planGate.label`) gets a planning run first. The worker runs the agent once on a planning prompt,
 * keeps nothing it changed, posts the plan on the issue (src/core/tasks/task-plan.ts) and ends `needs_human`; the
 * task waits there, needing a human, until:
 *
 * - a writer says `/autopilot approve [#N]`: the plan's digest is approved, and every later worker of the task
 *   implements it (its `config` input names the digest; the worker reads the plan from Autopilot's own comment
 *   and refuses a comment that no longer has that digest);
 * - a writer comments anything else: an answer like any other (answers.ts), so the task goes back to the queue
 *   and the next planning run gets their words.
 *
 * The approval is of the plan for the task text approved then: an edit that takes the task out (text-approval.ts)
 * drops it, and a writer's new ready label starts with a new plan.
 */
import type { TaskRecord } from "../../dashboard/index.js";
import { postedBefore } from "../../tasks/task-plan.js";
import { note, type Reconciling } from "../context.js";
import { hasLabel, setStatus, statusOf } from "../task-labels.js";
import type { TaskCommandOutcome } from "./retry-skip.js";
import { approveSplit, splitOf } from "./split-command.js";

/** What the plan gate asks of the task's next worker: a planning run, the approved plan's digest, or nothing. */
export function planOfDispatch(ctx: Reconciling, n: number, record: TaskRecord): string | null {
  // `/autopilot split #N` (split-command.ts): a splitting run, until a writer approves its proposal.
  const split = splitOf(ctx, n);
  if (split) return split.approved ? null : "split";
  if (record.plan?.approvedBy) return record.plan.digest;
  const issue = ctx.issues.get(n);
  const gated =
    ctx.config.planGate.enabled || (issue !== undefined && hasLabel(issue.labels, ctx.config.planGate.label));
  return gated ? "propose" : null;
}

/**
 * A planning run's result: the plan it posted waits for a writer, unless a writer approved that very plan already
 * (from its comment, before this result was read): then it returns true and the task stays approved.
 */
export function planProposed(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  digest: string,
  at: string,
): boolean {
  if (record.plan?.approvedBy && record.plan.digest === digest) return true;
  record.plan = { digest, at };
  const what = splitOf(ctx, n) ? "sub-issues" : "plan";
  record.reason = `${what} proposed: waiting for a writer's \`/autopilot approve #${n}\` (or a comment with changes)`;
  note(ctx, `#${n}: plan ${digest.slice(0, 12)} proposed`);
  return false;
}

/**
 * Whether the task waits for a plan's approval: it needs a human right after a planning run (its last dispatch),
 * which posts the plan before it moves the task there. A plan a writer answered, or one a later worker's question
 * followed, no longer waits: approving it would implement what the writer asked to change.
 */
export function planWaits(ctx: Reconciling, n: number, record: TaskRecord | undefined): boolean {
  if (!record?.planRun || record.planRun !== record.dispatchId || record.plan?.approvedBy) return false;
  return statusOf(ctx, n) === "needs-human";
}

export function approvePlan(
  ctx: Reconciling,
  n: number,
  actor: string,
  writtenAt: string,
): TaskCommandOutcome {
  if (splitOf(ctx, n)) return approveSplit(ctx, n, actor, writtenAt);
  const record = ctx.state.tasks[n];
  if (record?.plan?.approvedBy)
    return { ok: false, message: `#${n}'s plan is already approved (by @${record.plan.approvedBy}).` };
  // Right after the planning run posted its plan: needing a human, or still in progress while the run's own
  // label move and result are on their way (a writer's answer since puts the task back in the queue: no plan
  // waits then, the answer asked for a new one).
  const status = statusOf(ctx, n);
  const after =
    !!record?.planRun &&
    record.planRun === record.dispatchId &&
    (status === "needs-human" || status === "in-progress");
  // The plan that run posted, as its result names it (Autopilot's own marker, written before the label moved):
  // the worker implementing it reads it back from Autopilot's comment only while it has this digest.
  const result = ctx.results.get(n);
  const digest =
    record && after && result?.dispatchId === record.dispatchId ? (result?.plan?.digest ?? null) : null;
  if (!record || !digest)
    return {
      ok: false,
      message: `#${n} has no plan waiting for approval now (a new plan may be on its way): approve the plan once it is posted.`,
    };
  if (!postedBefore(result?.plan, writtenAt))
    return {
      ok: false,
      message: `#${n}'s plan was revised after this approval was written: read the new plan, then approve it.`,
    };
  record.plan = { digest, at: ctx.now.toISOString(), approvedBy: actor.slice(0, 40) };
  record.result = "approved";
  record.reason = `plan approved by @${actor}`;
  record.since = undefined;
  setStatus(ctx, n, "ready");
  note(ctx, `#${n}: plan ${digest.slice(0, 12)} approved by ${actor} → ready`);
  return { ok: true, message: `Plan approved: a worker implements it.` };
}
