/**
 * Alerts (src/core/session/alerts.ts) as a reconcile raises them: a task this reconcile moved into an off-ramp
 * (blocked, needs-human, timeout, failed), the session paused by consecutive failures or aborted, every agent
 * limited, and a review left waiting on people past `alerts.reviewReminderHours`.
 *
 * Each alert is one comment, once: its key names the event (the task's state and attempt, the session's
 * transition, the pull request), the task record remembers it among its notices, and the executor writes no
 * second comment carrying the same marker, so a reconcile repeated after a conflict or a webhook delivered
 * twice alerts no one twice. The same alerts go to the outgoing webhook (src/app/alert-webhook.ts) through
 * `Decision.alerts`.
 */
import {
  type Alert,
  type AlertKind,
  alertCommentKey,
  alertRecipients,
  describeAlert,
  renderAlertComment,
  taskTodo,
} from "../session/alerts.js";
import { hasWriteAccess, sameLogin } from "../tasks/commands.js";
import type { Effect } from "../effects.js";
import { formatTime } from "../text/markdown.js";
import type { PullNode } from "../world.js";
import { note, type Reconciling, taskBranch, taskRecord } from "./context.js";
import { notice } from "./messages.js";
import { statusOf } from "./task-labels.js";
import { planWaits } from "./commands/plan-approval.js";

const OFF_RAMP_WORDS: Record<string, string> = {
  blocked: "is blocked",
  "needs-human": "needs a human",
  timeout: "timed out",
  failed: "failed",
};

/** Remembers the writer whose ready label approved the task being dispatched (the one alerts mention). */
export function recordApprover(ctx: Reconciling, n: number): void {
  const by = ctx.readyBy.get(n) ?? null;
  if (!by || sameLogin(by, ctx.snapshot.botLogin)) return;
  if (hasWriteAccess(ctx.snapshot.permissions, by)) taskRecord(ctx, n).approvedBy = by;
}

/** The writer who approved task `n`, as recorded when it was dispatched (recordApprover). */
export function approversOf(ctx: Reconciling, n: number): (string | null)[] {
  return [ctx.state.tasks[n]?.approvedBy ?? null];
}

export function recipients(
  ctx: Reconciling,
  approvers: readonly (string | null)[],
  reviewers: readonly (string | null)[] = [],
): string[] {
  return alertRecipients({
    approvers,
    reviewers,
    notify: ctx.config.alerts.notify,
    permissions: ctx.snapshot.permissions,
    botLogin: ctx.snapshot.botLogin,
  });
}

/** One alert for every task this reconcile moved into an off-ramp. */
export function raiseTaskAlerts(ctx: Reconciling): void {
  for (const n of [...ctx.offRamps].sort((a, b) => a - b)) {
    const status = statusOf(ctx, n);
    if (status === null || !(status in OFF_RAMP_WORDS)) continue;
    const kind = status as AlertKind;
    const record = taskRecord(ctx, n);
    const title = ctx.issues.get(n)?.title ?? "";
    // A planning run's plan waits for a writer (plan-approval.ts): approving is what they do, not answering.
    const waitsOnPlan = kind === "needs-human" && planWaits(ctx, n, record);
    // `/autopilot split` (split-command.ts) waits on its proposal of sub-issues the same way.
    const split = ctx.state.splits?.[n] !== undefined;
    const alert: Alert = {
      key: `${n}-${status}-a${record.attempt}`,
      kind,
      issue: n,
      headline: `#${n} ${waitsOnPlan ? `has ${split ? "sub-issues" : "a plan"} waiting for approval` : OFF_RAMP_WORDS[status]}${title ? `: ${title}` : ""}`,
      what: record.reason ?? ctx.results.get(n)?.reason ?? "no reason given",
      todo: waitsOnPlan
        ? split
          ? `Read the sub-issues proposed on this issue: \`/autopilot approve #${n}\` creates them and works them as an epic; a comment with what to change (from someone with write access) gets a new proposal.`
          : `Read the plan posted on this issue: \`/autopilot approve #${n}\` lets a worker implement it; a comment with what to change (from someone with write access) gets a new plan.`
        : taskTodo(kind, n, taskBranch(ctx, n)),
      mentions: recipients(ctx, approversOf(ctx, n)),
    };
    const key = alertCommentKey(alert);
    if (record.notices?.includes(key)) continue;
    notice(ctx, n, record, key, renderAlertComment(alert));
    ctx.alerts.push(alert);
    note(ctx, `alert: ${describeAlert(alert)}`);
  }
}

/** A session-wide alert on the tracking issue (consecutive failures, an abort, every agent limited). */
export function raiseSessionAlert(
  ctx: Reconciling,
  alert: Omit<Alert, "mentions" | "issue">,
  tasks: readonly number[],
): void {
  const full: Alert = {
    ...alert,
    issue: null,
    mentions: recipients(
      ctx,
      tasks.flatMap((n) => approversOf(ctx, n)),
    ),
  };
  if (ctx.tracking) {
    const comment: Effect = {
      type: "comment",
      issue: ctx.tracking.number,
      body: renderAlertComment(full),
      key: alertCommentKey(full),
    };
    ctx.effects.push(comment);
  }
  ctx.alerts.push(full);
  note(ctx, `alert: ${describeAlert(full)}`);
}

/** The longest one report of "every agent limited" pauses dispatching. */
const AGENTS_LIMITED_MAX_MS = 24 * 3_600_000;

/** A writer's `/autopilot resume` or `start`: dispatch again now, whatever the agents' reported reset. */
export function liftAgentsLimit(ctx: Reconciling, by: string): boolean {
  if (!ctx.state.agentsLimitedUntil || Date.parse(ctx.state.agentsLimitedUntil) <= ctx.nowMs) return false;
  ctx.state.agentsLimitedUntil = null;
  note(ctx, `${by} lifted the pause for the agents' limits: dispatching goes on`);
  return true;
}

/**
 * Every agent a worker had was limited: no task is dispatched before the earliest reset reported, and people
 * are told once per such pause (a later worker's report of an earlier reset shortens it, without a new alert).
 */
export function pauseForLimitedAgents(ctx: Reconciling, n: number, reportedMs: number): void {
  const state = ctx.state;
  // The reset time comes from what an agent CLI printed: one run must not hold the repository for longer than a
  // day (a later run that is still limited pauses it again); a writer's `/autopilot resume` lifts it at once.
  const untilMs = Math.min(reportedMs, ctx.nowMs + AGENTS_LIMITED_MAX_MS);
  const current = state.agentsLimitedUntil ? Date.parse(state.agentsLimitedUntil) : Number.NaN;
  const active = !Number.isNaN(current) && current > ctx.nowMs;
  if (untilMs <= ctx.nowMs) return;
  if (active) {
    if (untilMs < current) state.agentsLimitedUntil = new Date(untilMs).toISOString();
    return;
  }
  const until = new Date(untilMs).toISOString();
  state.agentsLimitedUntil = until;
  note(ctx, `every agent is limited: dispatching pauses until ${until}`);
  raiseSessionAlert(
    ctx,
    {
      key: `agents-limited-${until}`,
      kind: "agents-limited",
      headline: `Every agent is limited: dispatching pauses until ${formatTime(until)}`,
      what: `The worker of #${n} found every configured agent (the primary and each fallback) rate- or usage-limited: ${ctx.state.tasks[n]?.reason ?? "no reason given"}`,
      todo:
        "Nothing, if waiting is fine: Autopilot dispatches again after the reset. To dispatch now, comment " +
        "`/autopilot resume`; otherwise raise the agents' limits or add a fallback agent with another account " +
        "(`agents.fallbacks`).",
    },
    [n],
  );
}

/** Whether dispatching waits for every agent's limit to reset; clears a pause that has passed. */
export function agentsLimitedNow(ctx: Reconciling): string | null {
  const until = ctx.state.agentsLimitedUntil;
  if (!until) return null;
  if (Date.parse(until) > ctx.nowMs) return until;
  ctx.state.agentsLimitedUntil = null;
  note(ctx, "the agents' limits have reset: dispatching goes on");
  return null;
}

/**
 * A pull request that has waited on people longer than `alerts.reviewReminderHours` gets one reminder that
 * mentions its writer reviewers, the approver and `alerts.notify`. Returns the dashboard line's reason: marked as
 * waiting on people once reminded.
 */
export function remindReview(ctx: Reconciling, n: number, pr: PullNode, reason: string): string {
  const hours = ctx.config.alerts.reviewReminderHours;
  const record = taskRecord(ctx, n);
  const since = record.since ?? pr.createdAt;
  const key = `alert-remind-${pr.number}`;
  const reminded = record.notices?.includes(key) ?? false;
  const waitedMs = ctx.nowMs - Date.parse(since);
  if (!reminded && hours !== null && !Number.isNaN(waitedMs) && waitedMs >= hours * 3_600_000) {
    const reviewers = pr.reviews.map((r) => r.author);
    const alert: Alert = {
      key: `remind-${pr.number}`,
      kind: "review-waiting",
      issue: n,
      headline: `PR #${pr.number} of #${n} has waited for a person since ${formatTime(since)}`,
      what: reason,
      todo: taskTodo("review-waiting", n, taskBranch(ctx, n)),
      mentions: recipients(ctx, approversOf(ctx, n), reviewers),
    };
    notice(ctx, n, record, key, renderAlertComment(alert));
    ctx.alerts.push(alert);
    note(ctx, `alert: ${describeAlert(alert)}`);
  } else if (!reminded) return reason;
  return `waiting on people since ${formatTime(since)} (reminded): ${reason}`;
}
