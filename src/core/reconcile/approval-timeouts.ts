/**
 * An approval that waits too long (design document 003, "Approval Flow": a gate request is created with a
 * timeout): the human gate's approval of a task's pull request, or a plan the plan gate proposed, still
 * unapproved `alerts.approvalTimeoutHours` after it began waiting is reported as timed out and handed to a person
 * — one alert (a comment mentioning the approver, the writer reviewers and `alerts.notify`, and the outgoing
 * webhook), once per pull request or plan, and a dashboard line that says so for as long as it waits.
 *
 * Nothing is approved or refused on anyone's behalf: the gate stays shut until a writer acts.
 */
import { type Alert, describeAlert, renderAlertComment } from "../session/alerts.js";
import { formatTime } from "../text/markdown.js";
import type { PullNode } from "../world.js";
import { note, type Reconciling, taskRecord } from "./context.js";
import { notice } from "./messages.js";
import { planWaits } from "./commands/plan-approval.js";
import { recipients, approversOf } from "./task-alerts.js";

/** Whether `since` is longer ago than the configured timeout. */
function timedOut(ctx: Reconciling, since: string): boolean {
  const hours = ctx.config.alerts.approvalTimeoutHours;
  const waitedMs = ctx.nowMs - Date.parse(since);
  return hours !== null && !Number.isNaN(waitedMs) && waitedMs >= hours * 3_600_000;
}

function handedTo(mentions: readonly string[]): string {
  return mentions.length
    ? `handed to ${mentions.map((m) => `@${m}`).join(", ")}`
    : "handed to a person (no one to mention: set `alerts.notify`)";
}

/** Raises the alert once (its key among the task's notices); the dashboard's words either way. */
function timeOut(ctx: Reconciling, n: number, alert: Alert, since: string): string {
  const record = taskRecord(ctx, n);
  const key = `alert-${alert.key}`;
  if (!record.notices?.includes(key)) {
    notice(ctx, n, record, key, renderAlertComment(alert));
    ctx.alerts.push(alert);
    note(ctx, `alert: ${describeAlert(alert)}`);
  }
  return `approval timed out (waiting since ${formatTime(since)}), ${handedTo(alert.mentions)}`;
}

/**
 * A pull request the human gate holds past the timeout: the dashboard line's reason, with the timeout said when
 * it has passed (src/core/reconcile/pulls/reviews.ts asks while the gate waits for an approval).
 */
export function humanGateTimeout(ctx: Reconciling, n: number, pr: PullNode, reason: string): string {
  const since = taskRecord(ctx, n).since ?? pr.createdAt;
  if (!timedOut(ctx, since)) return reason;
  const alert: Alert = {
    key: `approval-timeout-pr-${pr.number}`,
    kind: "approval-timeout",
    issue: n,
    headline: `The human gate's approval of PR #${pr.number} (#${n}) timed out`,
    what: `It has waited for an approval since ${formatTime(since)}, longer than alerts.approvalTimeoutHours: ${reason}`,
    todo:
      "Someone with write access: review the pull request and approve it (every gate then merges it) or " +
      "request changes; `/autopilot skip #" +
      `${n}\` leaves the task.`,
    mentions: recipients(
      ctx,
      approversOf(ctx, n),
      pr.reviews.map((r) => r.author),
    ),
  };
  return `${timeOut(ctx, n, alert, since)}: ${reason}`;
}

/** Every plan the plan gate proposed that has waited past the timeout: its alert, and its dashboard reason. */
export function timeOutPlanApprovals(ctx: Reconciling): void {
  for (const [n, record] of Object.entries(ctx.state.tasks)) {
    const task = Number(n);
    const plan = record.plan;
    if (!plan || ctx.issues.get(task)?.state !== "open" || !planWaits(ctx, task, record)) continue;
    if (!timedOut(ctx, plan.at)) continue;
    // `/autopilot split` (commands/split-command.ts) waits on its proposed sub-issues the same way.
    const split = ctx.state.splits?.[n] !== undefined;
    const what = split ? "sub-issues" : "plan";
    const alert: Alert = {
      key: `approval-timeout-plan-${task}-${plan.digest.slice(0, 12)}`,
      kind: "approval-timeout",
      issue: task,
      headline: `The approval of #${task}'s ${split ? "proposed sub-issues" : "plan"} timed out`,
      what: `The ${split ? "sub-issues proposed" : "plan posted"} ${formatTime(plan.at)} ${split ? "have" : "has"} waited longer than alerts.approvalTimeoutHours for a writer.`,
      todo: split
        ? `Someone with write access: read the sub-issues proposed on this issue; \`/autopilot approve #${task}\` creates them, a comment with what to change gets a new proposal, \`/autopilot skip #${task}\` leaves the issue.`
        : `Someone with write access: read the plan on this issue; \`/autopilot approve #${task}\` lets a worker implement it, a comment with what to change gets a new plan, \`/autopilot skip #${task}\` leaves the task.`,
      mentions: recipients(ctx, approversOf(ctx, task)),
    };
    record.reason = `${what} proposed: ${timeOut(ctx, task, alert, plan.at)}; \`/autopilot approve #${task}\` or a comment with changes`;
  }
}
