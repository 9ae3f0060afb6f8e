/**
 * A task's status is its state label. The reconcile tracks the labels as its own effects will leave them and
 * sends at most ONE label change per issue.
 */
import type { AutopilotConfig } from "../config/index.js";
import type { Effect } from "../effects.js";
import { labelForStatus, type TaskStatus, taskStatusFromLabels } from "../tasks/task.js";
import { isEpicParent } from "../tasks/epics.js";
import { type Reconciling, taskRecord } from "./context.js";

export function hasLabel(labels: readonly string[], label: string | undefined): boolean {
  return !!label && labels.some((l) => l.toLowerCase() === label.toLowerCase());
}

/** The state labels (every status but skipped, whose label is the exclude label). */
export function stateLabels(L: AutopilotConfig["labels"]): string[] {
  return [L.ready, L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed];
}

/** The task's status as the labels stand now in this reconcile; null when the issue is not a task (or an epic). */
export function statusOf(ctx: Reconciling, n: number): TaskStatus | null {
  const issue = ctx.issues.get(n);
  if (!issue) return null;
  if (issue.state === "closed") return "done";
  // Every phase asks this of every open issue: the answer is kept per issue with its label array, which a
  // label change replaces (writeLabels below, the overlays in prepare.ts) rather than edits.
  const labels = ctx.labels.get(n) ?? issue.labels;
  const known = ctx.statusByIssue.get(n);
  if (known && known.labels === labels && known.names === ctx.config.labels) return known.status;
  const labeled = taskStatusFromLabels({ state: issue.state, labels }, ctx.config.labels);
  // An epic (a ready parent of sub-issues, src/core/reconcile/epic-pooling.ts) is not a task: its sub-issues are.
  const status = isEpicParent(issue, labeled) ? null : labeled;
  ctx.statusByIssue.set(n, { labels, names: ctx.config.labels, status });
  return status;
}

/** Gives the task exactly one state label (skipped: the exclude label, none of the state labels). */
export function setStatus(ctx: Reconciling, n: number, status: TaskStatus): void {
  const L = ctx.config.labels;
  const target = status === "skipped" ? L.exclude : labelForStatus(status, L);
  // The exclude label goes only when a skipped task is brought back (a person's exclude is respected).
  const fromSkipped = statusOf(ctx, n) === "skipped" && status !== "skipped";
  writeLabels(ctx, n, target, [...stateLabels(L), ...(fromSkipped ? [L.exclude] : [])]);
  if (target && target.toLowerCase() === L.ready.toLowerCase()) ctx.readyBy.set(n, ctx.snapshot.botLogin);
  if (status !== "skipped" && status !== "done") {
    const record = taskRecord(ctx, n);
    record.label = status;
    record.labelAt = ctx.now.toISOString();
  }
  if (status === "blocked" || status === "needs-human" || status === "timeout" || status === "failed")
    ctx.offRamps.add(n);
  else ctx.offRamps.delete(n);
}

export function clearStateLabels(ctx: Reconciling, n: number): void {
  writeLabels(ctx, n, null, stateLabels(ctx.config.labels));
  // Kept tasks (taken out) remember that Autopilot took their labels off, so a read that still shows the
  // label they had does not bring it back (prepare.ts, applySettleOverlay).
  const record = ctx.state.tasks[n];
  if (record) {
    record.label = CLEARED;
    record.labelAt = ctx.now.toISOString();
  }
}

/** `record.label` of a task whose state labels Autopilot removed (it is out of the pool until a writer's label). */
export const CLEARED = "none";

/**
 * Moves the task's labels to `target` (removing `remove`), as ONE setStateLabel effect per issue per
 * reconcile: a task sent back to ready and dispatched in the same reconcile gets a single change, relative
 * to the labels it had before this reconcile (none at all when it ends where it started).
 */
function writeLabels(ctx: Reconciling, n: number, target: string | null, remove: string[]): void {
  const same = (a: string, b: string | null) => b !== null && a.toLowerCase() === b.toLowerCase();
  const current = ctx.labels.get(n) ?? [];
  const next = current.filter((l) => !remove.some((r) => same(l, r)) || same(l, target));
  if (target && !hasLabel(next, target)) next.push(target);
  ctx.labels.set(n, next);

  const index = ctx.effects.findIndex((e) => e.type === "setStateLabel" && e.issue === n);
  const earlier = index >= 0 ? (ctx.effects[index] as Extract<Effect, { type: "setStateLabel" }>) : null;
  if (index >= 0) ctx.effects.splice(index, 1);
  const removeAll = [...new Set([...(earlier?.remove ?? []), ...remove])].filter((l) => !same(l, target));
  const base = ctx.baseLabels.get(n) ?? [];
  const changes = (target !== null && !hasLabel(base, target)) || removeAll.some((l) => hasLabel(base, l));
  if (changes) ctx.effects.push({ type: "setStateLabel", issue: n, add: target, remove: removeAll });
}
