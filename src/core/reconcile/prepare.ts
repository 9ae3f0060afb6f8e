/**
 * The first phase: what the reconcile starts from. The state (parsed, or rebuilt), the configuration with the
 * session's overrides, the labels believed (status labels Autopilot did not set are not), the settle overlay
 * over stale reads, and a `workflow_dispatch` start of the controller.
 */
import { type AutopilotConfig, applyConfigOverrides } from "../config/index.js";
import type { DashboardState } from "../dashboard/index.js";
import { hasWriteAccess } from "../tasks/commands.js";
import { quietLogin } from "../text/markdown.js";
import { labelForStatus, type TaskStatus } from "../tasks/task.js";
import type { IssueNode, PullNode } from "../world.js";
import type { WorkerResult } from "../tasks/worker-result.js";
import { bootstrapState } from "./bootstrap-state.js";
import { type DecideInput, note, type Reconciling } from "./context.js";
import { incidentOnce } from "./messages.js";
import { sessionEvent } from "./session-events.js";
import { CLEARED, clearStateLabels, stateLabels, statusOf } from "./task-labels.js";
import { INCIDENT_DAYS, SETTLE_MINUTES } from "./timing.js";
import { finishedUnhandled, liveRunsByIssue } from "./runs/worker-runs.js";

export function prepare(input: DecideInput): Reconciling {
  const { snapshot } = input;
  const issues = new Map<number, IssueNode>();
  const labels = new Map<number, string[]>();
  const readyBy = new Map<number, string | null>();
  for (const issue of snapshot.issues) {
    if (issue.isPullRequest) continue;
    issues.set(issue.number, issue);
    // The snapshot's own array: the phases replace an issue's labels (task-labels.ts), never edit them.
    labels.set(issue.number, issue.labels);
    readyBy.set(issue.number, issue.readyLabeledBy ?? null);
  }
  const log: string[] = [];
  let state: DashboardState;
  if (input.state) state = structuredClone(input.state);
  else {
    const bootstrap = bootstrapState(input);
    state = bootstrap.state;
    if (bootstrap.log) log.push(bootstrap.log);
  }
  if (input.lastGoodConfig !== undefined) state.lastGoodConfig = input.lastGoodConfig;
  const opened = input.circuitOpened;
  if (opened && !(state.circuit && Date.parse(state.circuit.openedAt) >= Date.parse(opened.openedAt)))
    state.circuit = { openedAt: opened.openedAt, failure: opened.failure?.slice(0, 200) ?? null };
  const overridden = withOverrides(input.config, state);
  const baseLabels = new Map<number, readonly string[]>();
  let ctx: Reconciling = {
    input,
    snapshot,
    now: input.now,
    nowMs: input.now.getTime(),
    config: overridden.config,
    tracking: snapshot.trackingIssue,
    issues,
    results: latestResults(snapshot.workerResults),
    pullsByRef: pullsByRef(snapshot.pulls),
    liveRunsByIssue: liveRunsByIssue(snapshot.runs),
    baseLabels,
    state,
    effects: [],
    log,
    labels,
    readyBy,
    offRamps: new Set(),
    alerts: [],
    events: [],
    wakes: [],
    statusByIssue: new Map(),
  };
  // Status labels are judged by the configuration's own names, before any override.
  ignoreForeignLabels(ctx, input.config.labels);
  if (overridden.log) note(ctx, overridden.log);
  const clearAgain = applySettleOverlay(ctx, issues);
  // Incidents stay on the dashboard for a week.
  state.incidents = state.incidents.filter(
    (i) => !(ctx.nowMs - Date.parse(i.at) > INCIDENT_DAYS * 86_400_000),
  );
  // No copies: the phases replace an issue's label array (task-labels.ts), they never change one in place.
  for (const [n, l] of labels) baseLabels.set(n, l);
  // Against the labels GitHub shows (the base just set): a write, not an overlay.
  for (const n of clearAgain) {
    clearStateLabels(ctx, n);
    note(ctx, `#${n}: taken out, yet labeled again by no writer; labels taken off again`);
  }
  if (input.start) ctx = startFromDispatch(ctx, input.start);
  return ctx;
}

/** The configuration with the state's `workflow_dispatch` overrides, and the log line when they are invalid. */
function withOverrides(
  config: AutopilotConfig,
  state: DashboardState,
): { config: AutopilotConfig; log: string | null } {
  if (!state.overrides) return { config, log: null };
  const result = applyConfigOverrides(config, state.overrides, "workflow_dispatch overrides");
  if (result.ok) return { config: result.config, log: null };
  return { config, log: `ignoring invalid workflow_dispatch overrides: ${result.error.message}` };
}

/** A `workflow_dispatch` of the controller: new overrides (the configuration changes with them) and a start. */
function startFromDispatch(ctx: Reconciling, start: NonNullable<DecideInput["start"]>): Reconciling {
  const overrides = start.overrides && Object.keys(start.overrides).length > 0 ? start.overrides : null;
  let next = ctx;
  if (JSON.stringify(overrides) !== JSON.stringify(ctx.state.overrides)) {
    ctx.state.overrides = overrides;
    const overridden = withOverrides(ctx.input.config, ctx.state);
    if (overridden.log) note(ctx, overridden.log);
    next = { ...ctx, config: overridden.config };
    note(next, `workflow_dispatch overrides: ${JSON.stringify(overrides)}`);
  }
  sessionEvent(next, { type: "start", actor: start.actor }, true);
  return next;
}

/** Per issue, the result of the latest attempt (the latest update within one attempt). */
function latestResults(all: readonly WorkerResult[]): Map<number, WorkerResult> {
  const results = new Map<number, WorkerResult>();
  for (const r of all) {
    const known = results.get(r.issue);
    if (
      !known ||
      r.attempt > known.attempt ||
      (r.attempt === known.attempt && r.updatedAt >= known.updatedAt)
    ) {
      results.set(r.issue, r);
    }
  }
  return results;
}

function pullsByRef(pulls: readonly PullNode[]): Map<string, PullNode[]> {
  const byRef = new Map<string, PullNode[]>();
  for (const p of pulls) {
    const list = byRef.get(p.headRef) ?? [];
    list.push(p);
    byRef.set(p.headRef, list);
  }
  return byRef;
}

/**
 * Status labels other than ready count only when Autopilot set them (the snapshot names the labeled event's
 * actor by account id): anyone else's is removed from the issue, reported, and not believed meanwhile.
 */
function ignoreForeignLabels(ctx: Reconciling, L: AutopilotConfig["labels"]): void {
  for (const issue of ctx.snapshot.issues) {
    const foreign = issue.foreignLabels ?? [];
    if (!foreign.length || issue.state !== "open" || !ctx.labels.has(issue.number)) continue;
    const n = issue.number;
    const drop = (labels: string[]) =>
      labels.filter((l) => !foreign.some((f) => f.label.toLowerCase() === l.toLowerCase()));
    ctx.labels.set(n, drop(ctx.labels.get(n) ?? []));
    ctx.effects.push({ type: "removeLabels", issue: n, labels: foreign.map((f) => f.label) });
    for (const f of foreign) {
      const message = `The \`${f.label}\` label on #${n} was set by ${f.by ? quietLogin(f.by) : "someone Autopilot cannot name"}, not by Autopilot: it was removed and does not count (status labels other than \`${L.ready}\` are Autopilot's; use the /autopilot commands).`;
      incidentOnce(ctx, "foreign_label", message);
    }
    note(ctx, `#${n}: ignored status labels not set by Autopilot: ${foreign.map((f) => f.label).join(", ")}`);
  }
}

/**
 * Label and close writes take a moment to show up in what GitHub returns. Within SETTLE_MINUTES of a change
 * Autopilot made, the state's record of it wins over an older-looking snapshot, so a duplicate delivery
 * served from a stale read does not decide the same thing twice. After that, the snapshot wins (a person's
 * relabeling is honoured, a write that never happened is noticed).
 */
function applySettleOverlay(ctx: Reconciling, issues: Map<number, IssueNode>): number[] {
  const clearAgain: number[] = [];
  const fresh = (at: string | undefined) => !!at && ctx.nowMs - Date.parse(at) < SETTLE_MINUTES * 60_000;
  for (const [key, record] of Object.entries(ctx.state.tasks)) {
    const n = Number(key);
    const issue = issues.get(n);
    if (issue && record.label === CLEARED && !fresh(record.labelAt)) {
      // Taken out, and past the settle window the task still shows a state label no writer set since: the clear
      // did not land, or a write of Autopilot's own that raced the take-out (a retry of the run the take-out
      // cancelled) put a label back. Autopilot's own label is no writer's word: the labels come off again.
      if (!relabeledByWriter(ctx, issue, record.labelAt) && statusOf(ctx, n) !== null) clearAgain.push(n);
      continue;
    }
    if (!issue || !record.label || !fresh(record.labelAt)) continue;
    // A worker that finished has labeled its task itself (review, blocked, needs-human) AFTER Autopilot's
    // in-progress: the snapshot is newer than the record then, not staler. Overlaying it would hide the
    // worker's label, and the next label change (a feedback round's re-dispatch) would be computed against
    // labels the issue does not have — leaving the task labeled review while a worker runs on it.
    if (finishedUnhandled(ctx, n)) continue;
    if (record.label === CLEARED) {
      // Taken out: the labels stay off, but a writer's ready label set since puts the task back at once (what
      // the take-out comment asks for; such a label is a person's, not a stale read of Autopilot's).
      if (!relabeledByWriter(ctx, issue, record.labelAt) && statusOf(ctx, n) !== null) overlayCleared(ctx, n);
      continue;
    }
    if (statusOf(ctx, n) !== record.label) overlayStatus(ctx, n, record.label as TaskStatus);
  }
  for (const r of ctx.state.recent) {
    const issue = issues.get(r.issue);
    if (!issue || !fresh(r.at)) continue;
    if (r.outcome === "skipped") overlayStatus(ctx, r.issue, "skipped");
    else if (issue.state === "open") issues.set(r.issue, { ...issue, state: "closed" });
  }
  return clearAgain;
}

/** A writer's ready label on a task taken out at `clearedAt`, set since (what the take-out comment asks for). */
function relabeledByWriter(ctx: Reconciling, issue: IssueNode, clearedAt: string | undefined): boolean {
  const readyAt = Date.parse(issue.readyLabeledAt ?? "");
  const by = issue.readyLabeledBy;
  return readyAt > Date.parse(clearedAt ?? "") && !!by && hasWriteAccess(ctx.snapshot.permissions, by);
}

/** Believes the state's record that Autopilot took the task's state labels off (no effect: they are off). */
function overlayCleared(ctx: Reconciling, n: number): void {
  const all = stateLabels(ctx.config.labels).map((l) => l.toLowerCase());
  ctx.labels.set(
    n,
    (ctx.labels.get(n) ?? []).filter((l) => !all.includes(l.toLowerCase())),
  );
}

/** Believes the status the state recorded over the snapshot's labels (no effect: the label is already set). */
function overlayStatus(ctx: Reconciling, n: number, status: TaskStatus): void {
  const L = ctx.config.labels;
  const target = status === "skipped" ? L.exclude : labelForStatus(status, L);
  const all = [...stateLabels(L), L.exclude];
  const next = (ctx.labels.get(n) ?? []).filter((l) => !all.some((x) => x.toLowerCase() === l.toLowerCase()));
  if (target) next.push(target);
  ctx.labels.set(n, next);
  if (status === "ready") ctx.readyBy.set(n, ctx.snapshot.botLogin);
}
