/**
 * One reconcile's decisions: `decide(snapshot, state, config, now) → { state', effects, log }`, pure.
 *
 * Level-triggered (DESIGN §1.2): everything is derived from what the snapshot shows and the little the state
 * remembers, so a duplicate or lost webhook changes nothing — deciding again on the world the effects
 * produced (or on the same snapshot with the resulting state) yields no new effects.
 *
 * Order inside one decide:
 *  1. bootstrap the state (rebuild it from GitHub when the tracking issue's state block is missing/corrupt);
 *  2. a controller `workflow_dispatch` start, then comments (commands, needs-human answers), then ticked
 *     dashboard checkboxes — all authorized against write access;
 *  3. worker results and runs: outcomes, crashes, stalled runs;
 *  4. the PR gates of tasks in review: merge, feedback to a worker, or wait (with one-time explanations);
 *  5. the pool: readiness, scoring, dispatch into free slots;
 *  6. session bookkeeping (checkpointed pauses/stops, completion, budget);
 *  7. history compaction and the tracking issue write (only when the dashboard changed).
 *
 * Effects come out in execution order. The tracking issue write comes FIRST: it records the dispatch ids and
 * revision before anything acts on them, and a write refused on a revision mismatch means another reconcile
 * is acting, so the executor should skip the rest (the next reconcile decides again).
 */
import {
  commandHelp,
  commentAuthority,
  hasWriteAccess,
  parseCommand,
  refusalText,
  sameLogin,
} from "./commands.js";
import {
  applyConfigOverrides,
  type AutopilotConfig,
  type ConfigError,
  renderConfigError,
} from "./config/index.js";
import {
  type ConfigOverrides,
  compactState,
  type DashboardState,
  type DashboardView,
  dashboardDigest,
  emptyState,
  type HistoryEntry,
  newTaskRecord,
  parseDashboard,
  type ReasonLine,
  rebuildState,
  renderDashboard,
  renderHistoryComment,
  type SlotLine,
  type TaskRecord,
  TRACKING_ISSUE_TITLE,
} from "./dashboard/index.js";
import type { Effect, Reaction } from "./effects.js";
import {
  describeKinds,
  evaluatePullRequest,
  feedbackComment,
  humanGateComment,
  noChecksComment,
  parseHumanGateMarker,
} from "./gates.js";
import { evaluateDiffGate } from "./diff-gate.js";
import { ignoredPullMessage, partitionPulls } from "./pull-trust.js";
import { buildTaskGraph, readyTasks, type TaskGraph } from "./graph.js";
import { escapeInline, formatTime, quietLogin, truncate } from "./markdown.js";
import { formatScoreParts, rankTasks } from "./scoring.js";
import { judgeTaskText, lastEditAt, taskDigest, textChangedComment } from "./task-text.js";
import { isDispatching, reduceSession, type SessionEvent } from "./session.js";
import type { IssueNode, PullNode, RunNode, WorldSnapshot } from "./world.js";
import { computeStatistics, formatDuration, type SessionStatistics, type TaskRecordLike } from "./stats.js";
import {
  decideOnFailure,
  decideOnWorkerOutcome,
  labelForStatus,
  type TaskStatus,
  taskStatusFromLabels,
  trackConsecutiveFailures,
  transitionTask,
} from "./task.js";
import { renderSessionBudgetMarker, sessionOverBudget, sessionSpend } from "./session-budget.js";
import { usdBudgetNotes } from "./pricing.js";
import type { WorkerOutcome, WorkerResult } from "./worker-result.js";

/** A dispatch whose run has not appeared yet counts as live for this long. */
export const DISPATCH_GRACE_MINUTES = 10;
/** A run that succeeded without a visible result is given this long for the result to show before it counts as a crash. */
export const RESULT_GRACE_MINUTES = 2;
/** A cancel that did not take is asked again after this long. */
export const CANCEL_RETRY_MINUTES = 15;
/**
 * A merge that did not happen is tried again after this long: one GitHub refused, or one a controller recorded
 * and was stopped (killed, redeployed) before sending. `mergePr` carries the head SHA, so asking twice is safe.
 */
export const MERGE_RETRY_MINUTES = 2;
/**
 * A dispatch whose run has not appeared after this long is sent once more with the same dispatch id: the
 * controller may have been stopped between recording it and sending it. Runs appear within seconds, and a
 * run that does carry the id makes the executor skip the second dispatch (and the worker's claim the run).
 */
export const DISPATCH_RESEND_MINUTES = 2;
/** For this long after Autopilot changed a label or closed an issue, its own record of the change wins over a stale read. */
export const SETTLE_MINUTES = 10;
/** Incidents (state rebuilt, refused checkboxes, …) are shown this long. */
export const INCIDENT_DAYS = 7;
/** With workers running, the dashboard (elapsed times) is refreshed at least this often. */
export const DASHBOARD_REFRESH_MINUTES = 30;

export interface DecideInput {
  snapshot: WorldSnapshot;
  /** The state parsed from the tracking issue (`parseDashboard(body).state`); null when missing or corrupt. */
  state: DashboardState | null;
  /** The configuration in force: the file's, or the last good one when the file is bad. */
  config: AutopilotConfig;
  /** The file's problems when `.github/autopilot.yml` is bad (shown on the dashboard). */
  configError?: ConfigError | null;
  now: Date;
  /** Makes dispatch ids unique per reconcile: `<issue>-<attempt>-<seed>` (e.g. base-36 time). */
  dispatchIdSeed: string;
  /** A `workflow_dispatch` of the controller workflow: start a session with these overrides. */
  start?: { actor: string; overrides?: ConfigOverrides | null } | null;
}

export interface Decision {
  state: DashboardState;
  effects: Effect[];
  log: string[];
}

export function decide(input: DecideInput): Decision {
  return new Reconcile(input).run();
}

// ---------------------------------------------------------------------------------------------------------

class Reconcile {
  private readonly snapshot: WorldSnapshot;
  private readonly now: Date;
  private readonly nowMs: number;
  private config: AutopilotConfig;
  private state: DashboardState;
  private readonly effects: Effect[] = [];
  private readonly log: string[] = [];
  private readonly tracking: WorldSnapshot["trackingIssue"];
  private readonly issues = new Map<number, IssueNode>();
  /** Labels as they will be once this reconcile's label effects ran. */
  private readonly labels = new Map<number, string[]>();
  /** Labels as they were before this reconcile changed any (after the settle overlay). */
  private readonly baseLabels = new Map<number, string[]>();
  private readonly readyBy = new Map<number, string | null>();
  private readonly results = new Map<number, WorkerResult>();
  private readonly reviewLines = new Map<number, ReasonLine>();
  private readonly statusRequests: {
    commentIssue: number;
    commentId: number;
    issue: number | null;
    line: string;
  }[] = [];
  private forceWrite = false;
  /** Comments by people with write access on tasks, new to this reconcile (possible answers). */
  private readonly freshComments = new Set<number>();
  private completedNow = false;

  constructor(private readonly input: DecideInput) {
    this.snapshot = input.snapshot;
    this.now = input.now;
    this.nowMs = input.now.getTime();
    this.config = input.config;
    this.tracking = input.snapshot.trackingIssue;
    for (const issue of this.snapshot.issues) {
      if (issue.isPullRequest) continue;
      this.issues.set(issue.number, issue);
      this.labels.set(issue.number, [...issue.labels]);
      this.readyBy.set(issue.number, issue.readyLabeledBy ?? null);
    }
    for (const r of this.snapshot.workerResults) {
      const known = this.results.get(r.issue);
      if (
        !known ||
        r.attempt > known.attempt ||
        (r.attempt === known.attempt && r.updatedAt >= known.updatedAt)
      ) {
        this.results.set(r.issue, r);
      }
    }
    this.state = input.state ? structuredClone(input.state) : this.bootstrap();
    this.ignoreForeignLabels();
    this.applyOverrides();
    this.applySettleOverlay();
    // Incidents stay on the dashboard for a week.
    this.state.incidents = this.state.incidents.filter(
      (i) => !(this.nowMs - Date.parse(i.at) > INCIDENT_DAYS * 86_400_000),
    );
    for (const [n, labels] of this.labels) this.baseLabels.set(n, [...labels]);
  }

  /**
   * Label and close writes take a moment to show up in what GitHub returns. Within SETTLE_MINUTES of a change
   * Autopilot made, the state's record of it wins over an older-looking snapshot, so a duplicate delivery
   * served from a stale read does not decide the same thing twice. After that, the snapshot wins (a person's
   * relabeling is honoured, a write that never happened is noticed).
   */
  private applySettleOverlay(): void {
    const fresh = (at: string | undefined) => !!at && this.nowMs - Date.parse(at) < SETTLE_MINUTES * 60_000;
    for (const [key, record] of Object.entries(this.state.tasks)) {
      const n = Number(key);
      const issue = this.issues.get(n);
      if (!issue || !record.label || !fresh(record.labelAt)) continue;
      // A worker that finished has labeled its task itself (review, blocked, needs-human) AFTER Autopilot's
      // in-progress: the snapshot is newer than the record then, not staler. Overlaying it would hide the
      // worker's label, and the next label change (a feedback round's re-dispatch) would be computed against
      // labels the issue does not have — leaving the task labeled review while a worker runs on it.
      if (this.finishedUnhandled(n)) continue;
      if (this.statusOf(n) !== record.label) this.overlayStatus(n, record.label as TaskStatus);
    }
    for (const r of this.state.recent) {
      const issue = this.issues.get(r.issue);
      if (!issue || !fresh(r.at)) continue;
      if (r.outcome === "skipped") this.overlayStatus(r.issue, "skipped");
      else if (issue.state === "open") this.issues.set(r.issue, { ...issue, state: "closed" });
    }
  }

  /** The current dispatch's worker finished (its result is in). */
  private finishedCurrent(n: number): boolean {
    const record = this.state.tasks[n];
    const result = this.results.get(n);
    return !!record?.dispatchId && result?.dispatchId === record.dispatchId && result.status === "finished";
  }

  /** The current dispatch's worker finished and this controller has not acted on its result yet. */
  private finishedUnhandled(n: number): boolean {
    const record = this.state.tasks[n];
    return this.finishedCurrent(n) && record?.handled !== record?.dispatchId;
  }

  private overlayStatus(n: number, status: TaskStatus): void {
    const target = status === "skipped" ? this.L.exclude : labelForStatus(status, this.L);
    const all = [...this.stateLabels(), this.L.exclude];
    const next = (this.labels.get(n) ?? []).filter(
      (l) => !all.some((x) => x.toLowerCase() === l.toLowerCase()),
    );
    if (target) next.push(target);
    this.labels.set(n, next);
    if (status === "ready") this.readyBy.set(n, this.snapshot.botLogin);
  }

  run(): Decision {
    this.workflowDispatchStart();
    this.processComments();
    this.processCheckboxes();
    this.processClosedIssues();
    this.processTaskText();
    this.processWorkers();
    this.processAnswers();
    this.recordDiffGates();
    this.processReviews();
    this.budgetCheck();
    const pool = this.processPool();
    this.finishSession(pool.pending);
    return this.finish(pool);
  }

  // -------------------------------------------------------------------------------------------------------
  // Bootstrap and configuration

  private bootstrap(): DashboardState {
    const L = this.input.config.labels;
    const offRamped = this.snapshot.issues.some((i) =>
      [L.blocked, L.needsHuman, L.timeout, L.failed].some((l) => hasLabel(i.labels, l)),
    );
    // Work in flight without a tracking issue means the tracking issue was lost (deleted, or never written).
    const inFlight =
      this.snapshot.workerResults.length > 0 ||
      this.snapshot.runs.some((r) => r.status !== "completed") ||
      this.snapshot.issues.some((i) => [L.inProgress, L.review].some((l) => hasLabel(i.labels, l)));
    if (!this.tracking && !inFlight && !offRamped) return emptyState(this.now);
    if (!this.tracking && !inFlight) {
      // A first run in a repository that already has off-ramped tasks: pick up what GitHub shows, quietly.
      return rebuildState(this.snapshot, this.now, this.input.config);
    }
    const state = rebuildState(this.snapshot, this.now, this.input.config);
    const message = this.tracking
      ? "The state block of this issue was missing or unreadable; Autopilot rebuilt it from labels, pull requests, worker results and runs."
      : "The tracking issue was missing (deleted?); Autopilot opened this one and rebuilt its state from labels, pull requests, worker results and runs.";
    state.incidents.push({
      at: this.now.toISOString(),
      kind: this.tracking ? "state_rebuilt" : "tracking_issue_missing",
      message,
    });
    this.note(
      this.tracking
        ? "state block missing or corrupt: rebuilt from GitHub"
        : "tracking issue missing: state rebuilt from GitHub",
    );
    return state;
  }

  /** An incident, unless the same one is already on the dashboard. */
  private incidentOnce(kind: string, message: string): void {
    const text = truncate(message, 400);
    if (!this.state.incidents.some((i) => i.kind === kind && i.message === text))
      this.incident(kind, message);
  }

  private incident(kind: string, message: string): void {
    this.state.incidents.push({ at: this.now.toISOString(), kind, message: truncate(message, 400) });
  }

  private applyOverrides(): void {
    if (!this.state.overrides) return;
    const result = applyConfigOverrides(
      this.input.config,
      this.state.overrides,
      "workflow_dispatch overrides",
    );
    if (result.ok) this.config = result.config;
    else this.note(`ignoring invalid workflow_dispatch overrides: ${result.error.message}`);
  }

  private get L() {
    return this.config.labels;
  }

  // -------------------------------------------------------------------------------------------------------
  // Session

  private liveCount(): number {
    return this.liveIssues().size;
  }

  private session(event: SessionEvent, quiet = false): { refused?: string; message?: string } {
    const t = reduceSession(this.state.session, event, this.now);
    if (t.refused) {
      this.note(`session: ${event.type} refused: ${t.refused.reason}`);
      return { refused: t.refused.reason };
    }
    const from = this.state.session.status;
    this.state.session = t.state;
    this.note(`session: ${from} → ${t.state.status} (${event.type})`);
    let message: string | undefined;
    for (const e of t.effects) {
      if (e.type === "resetConsecutiveFailures") {
        this.state.consecutiveFailures = 0;
        this.state.failedInARow = [];
      }
      if (e.type === "notify") {
        message = e.message;
        if (!quiet && (e.level === "warning" || t.state.status === "completed") && this.tracking) {
          this.effects.push({
            type: "comment",
            issue: this.tracking.number,
            body: e.message,
            key: `session-${t.state.status}-${t.state.since}`,
          });
        }
      }
    }
    return message === undefined ? {} : { message };
  }

  private workflowDispatchStart(): void {
    const start = this.input.start;
    if (!start) return;
    const overrides = start.overrides && Object.keys(start.overrides).length > 0 ? start.overrides : null;
    if (JSON.stringify(overrides) !== JSON.stringify(this.state.overrides)) {
      this.state.overrides = overrides;
      this.config = this.input.config;
      this.applyOverrides();
      this.note(`workflow_dispatch overrides: ${JSON.stringify(overrides)}`);
    }
    this.session({ type: "start", actor: start.actor }, true);
  }

  // -------------------------------------------------------------------------------------------------------
  // Comments: commands and needs-human answers

  private processComments(): void {
    const trackingNumber = this.tracking?.number ?? null;
    const processed = new Set(this.state.processed);
    const cursor = this.state.cursor;
    const comments = [...this.snapshot.comments].sort((a, b) => a.id - b.id);
    for (const c of comments) {
      if (processed.has(c.id) || c.acknowledged || (cursor && c.id <= cursor.id)) continue;
      processed.add(c.id);
      this.state.processed.push(c.id);
      if (!this.state.cursor || c.id > this.state.cursor.id)
        this.state.cursor = { id: c.id, at: c.createdAt };

      const authority = commentAuthority(c, this.snapshot.botLogin, this.snapshot.permissions);
      if (authority.ignored) continue;
      const onTracking = trackingNumber !== null && c.issue === trackingNumber;
      const task = onTracking ? null : this.taskIssueFor(c.issue);
      if (!onTracking && task === null) continue;
      const parsed = parseCommand(c.body, {
        issue: onTracking ? c.issue : task!,
        trackingIssue: trackingNumber,
      });
      const login = c.author ?? "someone";

      if (!parsed) {
        // Answers to needs-human questions are looked for after the workers' results (processAnswers).
        if (task !== null && authority.authorized) this.freshComments.add(c.id);
        continue;
      }
      if (!authority.authorized) {
        this.react(c.id, "confused");
        const key = login.toLowerCase().slice(0, 40);
        if (!this.state.refused.includes(key)) {
          this.state.refused.push(key);
          this.reply(c.issue, c.id, parsed.line, refusalText(login));
        }
        this.note(`comment ${c.id}: ${parsed.line} by ${login} refused (no write access)`);
        continue;
      }
      if (parsed.kind === "invalid") {
        this.react(c.id, "confused");
        this.reply(
          c.issue,
          c.id,
          parsed.line,
          `Sorry, ${parsed.problem}. Here is what Autopilot understands:\n\n${commandHelp()}`,
        );
        continue;
      }
      const command = parsed.command;
      this.note(`comment ${c.id}: ${parsed.line} by ${login}`);
      switch (command.name) {
        case "help":
          this.react(c.id, "+1");
          this.reply(c.issue, c.id, parsed.line, commandHelp());
          break;
        case "status":
          this.react(c.id, "+1");
          this.statusRequests.push({
            commentIssue: c.issue,
            commentId: c.id,
            issue: command.issue,
            line: parsed.line,
          });
          break;
        case "start":
        case "pause":
        case "resume":
        case "stop": {
          const event: SessionEvent =
            command.name === "pause" || command.name === "stop"
              ? { type: command.name, actor: login, activeWorkers: this.liveCount() }
              : { type: command.name, actor: login };
          const result = this.session(event, true);
          if (result.refused) {
            this.react(c.id, "confused");
            this.reply(c.issue, c.id, parsed.line, result.refused);
            break;
          }
          this.react(c.id, "+1");
          if (command.name === "start") this.state.overrides = null;
          const status = this.state.session.status;
          if ((status === "pausing" || status === "stopping") && result.message) {
            this.reply(
              c.issue,
              c.id,
              parsed.line,
              result.message.replace(/@(\S+)/g, (_m, l: string) => quietLogin(l)),
            );
          }
          break;
        }
        case "retry":
        case "skip": {
          const outcome =
            command.name === "retry"
              ? this.retryTask(command.issue, login)
              : this.skipTask(command.issue, login);
          this.react(c.id, outcome.ok ? "+1" : "confused");
          if (outcome.message) this.reply(c.issue, c.id, parsed.line, outcome.message);
          break;
        }
      }
    }
    this.state.processed = this.state.processed.slice(-300);
  }

  /** The task issue a comment on `n` speaks for: `n` itself when it is an Autopilot task, or the task of an Autopilot PR. */
  private taskIssueFor(n: number): number | null {
    const issue = this.issues.get(n);
    if (issue) {
      const L = this.L;
      const ours =
        this.state.tasks[n] !== undefined ||
        [L.ready, L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed, L.exclude].some((l) =>
          hasLabel(issue.labels, l),
        );
      return ours ? n : null;
    }
    const pr = this.snapshot.pulls.find((p) => p.number === n);
    if (!pr) return null;
    const m = new RegExp(`^${escapeRegExp(this.config.branchPrefix)}issue-(\\d+)$`).exec(pr.headRef);
    return m ? Number(m[1]) : null;
  }

  /**
   * A person with write access commented on a needs-human task after its question: back to the queue.
   * Level-triggered: every comment the snapshot holds on the task counts, not only the ones new to this
   * reconcile, so an answer that arrived before the worker's result was handled (the task still in progress
   * for the controller) is found once the task is needs-human. Without a known time of the question, only
   * comments new to this reconcile count (an old discussion is not an answer).
   */
  private processAnswers(): void {
    const trackingNumber = this.tracking?.number ?? null;
    const comments = [...this.snapshot.comments].sort((a, b) => a.id - b.id);
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open" || this.statusOf(n) !== "needs-human") continue;
      const record = this.state.tasks[n];
      const askedAt = record?.since ?? this.results.get(n)?.updatedAt ?? null;
      const answer = comments.find((c) => {
        if (c.issue === trackingNumber || this.taskIssueFor(c.issue) !== n) return false;
        if (askedAt ? Date.parse(c.createdAt) <= Date.parse(askedAt) : !this.freshComments.has(c.id))
          return false;
        if (!commentAuthority(c, this.snapshot.botLogin, this.snapshot.permissions).authorized) return false;
        return parseCommand(c.body, { issue: n, trackingIssue: trackingNumber }) === null;
      });
      if (!answer) continue;
      const t = transitionTask("needs-human", { type: "unblock" });
      if ("refused" in t) continue;
      const login = answer.author ?? "someone";
      const r = this.record(n);
      r.result = "answered";
      r.reason = `answered by @${login}`;
      r.since = undefined;
      this.setStatus(n, "ready");
      if (!answer.acknowledged) this.react(answer.id, "+1");
      this.note(`#${n}: answered by ${login}; back in the queue`);
    }
  }

  private processCheckboxes(): void {
    if (!this.tracking || !this.input.state) return;
    const parsed = parseDashboard(this.tracking.body);
    if (parsed.checkedBoxes.length === 0) return;
    // Ticks count only on the body this state came from (a later state means they were already handled).
    if (!parsed.state || parsed.state.revision !== this.input.state.revision) return;
    this.forceWrite = true; // the rewrite unticks them
    const editor = this.tracking.lastEditedBy ?? null;
    const boxes = parsed.checkedBoxes.map((b) => `${b.action} #${b.issue}`).join(", ");
    if (
      !editor ||
      sameLogin(editor, this.snapshot.botLogin) ||
      !hasWriteAccess(this.snapshot.permissions, editor)
    ) {
      this.incident(
        "checkbox_refused",
        `Ticked ${boxes} ignored: the last edit was by ${editor ? `@${editor}` : "an unknown user"}, and only people with write access can steer Autopilot.`,
      );
      this.note(`checkboxes ${boxes} ignored: editor ${editor ?? "unknown"} has no write access`);
      return;
    }
    for (const box of parsed.checkedBoxes) {
      const outcome =
        box.action === "retry" ? this.retryTask(box.issue, editor) : this.skipTask(box.issue, editor);
      this.note(
        `checkbox ${box.action} #${box.issue} by ${editor}: ${outcome.ok ? "done" : outcome.message}`,
      );
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Retry and skip (commands and checkboxes)

  private retryTask(n: number, actor: string): { ok: boolean; message?: string } {
    const issue = this.issues.get(n);
    if (!issue) return { ok: false, message: `#${n} is not an open issue Autopilot can see.` };
    if (issue.state === "closed") return { ok: false, message: `#${n} is closed; reopen it first.` };
    const status = this.statusOf(n);
    const record = this.state.tasks[n];
    if (status === "ready" && record?.waitUntil && Date.parse(record.waitUntil) > this.nowMs) {
      record.waitUntil = undefined;
      this.note(`#${n}: wait cleared by ${actor}`);
      return { ok: true };
    }
    if (status === null)
      return { ok: false, message: `#${n} is not an Autopilot task (it has no \`${this.L.ready}\` label).` };
    const t = transitionTask(status, status === "skipped" ? { type: "reopen" } : { type: "retry" });
    if ("refused" in t) return { ok: false, message: `Cannot retry #${n}: ${t.refused}.` };
    const r = this.record(n);
    r.retries += t.retryDelta;
    r.failures = 0;
    r.feedbackRounds = 0;
    r.feedbackSha = undefined;
    r.waitUntil = undefined;
    r.since = undefined;
    r.merge = undefined;
    r.cancelAt = undefined;
    r.notices = undefined;
    if (r.dispatchId) r.handled = r.dispatchId;
    r.result = "retry";
    r.reason = `retried by @${actor}`;
    this.state.recent = this.state.recent.filter((x) => x.issue !== n);
    this.setStatus(n, "ready");
    this.note(`#${n}: retry by ${actor} (attempt ${r.attempt + 1} next)`);
    return { ok: true };
  }

  private skipTask(n: number, actor: string): { ok: boolean; message?: string } {
    const issue = this.issues.get(n);
    if (!issue) return { ok: false, message: `#${n} is not an open issue Autopilot can see.` };
    const status = this.statusOf(n);
    if (status === null) return { ok: false, message: `#${n} is not an Autopilot task.` };
    const t = transitionTask(status, { type: "skip" });
    if ("refused" in t) return { ok: false, message: `Cannot skip #${n}: ${t.refused}.` };
    for (const run of this.liveRunsOf(n)) this.cancel(run, n, "skipped");
    this.setStatus(n, "skipped");
    this.retire(n, "skipped", null);
    this.note(`#${n}: skipped by ${actor}`);
    return {
      ok: true,
      message: `Skipped #${n}: Autopilot leaves it alone now (label \`${this.L.exclude}\`). To bring it back, run \`/autopilot retry #${n}\`.`,
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // Closed issues

  /** Tasks whose issue was closed (by a merged PR's "Closes #N" or by a person) leave the state. */
  private processClosedIssues(): void {
    for (const key of Object.keys(this.state.tasks)) {
      const n = Number(key);
      const issue = this.issues.get(n);
      if (!issue) {
        const merged = this.pullsFor(n).find((p) => p.state === "merged");
        if (merged) this.done(n, merged);
        else if (!this.isLive(n)) {
          this.retire(n, "closed", null);
          // It left the pool (closed, or its labels removed) without a write of Autopilot's: there is no stale
          // read of ours to settle, so it is not held closed — a writer's new ready label counts at once.
          this.state.recent = this.state.recent.filter((r) => r.issue !== n);
          this.note(`#${n}: no longer among the open issues; counted as closed`);
        }
        continue;
      }
      if (issue.state !== "closed") continue;
      for (const run of this.liveRunsOf(n)) this.cancel(run, n, "issue closed");
      const merged = this.pullsFor(n).find((p) => p.state === "merged");
      if (merged) this.done(n, merged);
      else {
        this.clearStateLabels(n);
        this.retire(n, issue.stateReason === "completed" ? "done" : "closed", null);
        this.note(`#${n}: closed on GitHub`);
      }
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Workers: results, crashes, stalls

  private processWorkers(): void {
    const candidates = new Set<number>();
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open") continue;
      const r = this.state.tasks[n];
      if (this.statusOf(n) === "in-progress" || (r?.dispatchId && r.handled !== r.dispatchId))
        candidates.add(n);
      if (this.liveRunsOf(n).length > 0) candidates.add(n);
    }
    for (const n of [...candidates].sort((a, b) => a - b)) this.processWorker(n);
  }

  private processWorker(n: number): void {
    const status = this.statusOf(n);
    let record = this.state.tasks[n];
    const result = this.results.get(n);

    // Another controller won this attempt's dispatch lock: its run carries another dispatch id. Follow that run
    // instead of waiting for ours, which was never sent (and must not be re-sent).
    if (record?.dispatchId && !this.snapshot.runs.some((r) => r.dispatchId === record!.dispatchId)) {
      const winner = this.snapshot.runs.find(
        (r) =>
          r.issue === n &&
          r.attempt === record!.attempt &&
          r.dispatchId &&
          r.dispatchId !== record!.dispatchId,
      );
      if (winner?.dispatchId) {
        this.note(
          `#${n}: attempt ${record.attempt} runs as ${winner.dispatchId} (dispatched by another controller)`,
        );
        record.dispatchId = winner.dispatchId;
      }
    }

    // Adopt a dispatch the state does not know (state rebuilt, or a run started by another controller).
    if (result && (!record || (result.dispatchId !== record.dispatchId && result.attempt > record.attempt))) {
      record = this.record(n);
      record.attempt = Math.max(record.attempt, result.attempt);
      record.dispatchId = result.dispatchId;
      record.dispatchedAt ??= result.startedAt;
    }

    if (result && record && result.dispatchId === record.dispatchId && result.status === "finished") {
      if (record.handled !== result.dispatchId) {
        if (result.result === "claimed_elsewhere") {
          record.handled = result.dispatchId;
          this.note(`#${n}: worker ${result.dispatchId} found the task claimed elsewhere`);
        } else if (
          status === "in-progress" ||
          status === "ready" ||
          (status !== null && status === WORKER_LABELS[result.result ?? "failed"])
        ) {
          this.handleOutcome(n, record, result);
        } else {
          this.account(record, result);
          record.handled = result.dispatchId;
          this.note(`#${n}: worker finished (${result.result}) but the task is ${status}; labels left alone`);
        }
      }
      this.checkDuplicateRuns(n);
      return;
    }

    const live = this.liveState(n);
    if (live.live) {
      if (live.phase === "dispatched") this.resendDispatch(n);
      this.checkDuplicateRuns(n);
      this.checkStall(n, live.run ?? null);
      return;
    }
    if (!record?.dispatchId || record.handled === record.dispatchId) {
      if (status === "in-progress") {
        // Labeled in-progress without any dispatch we know of: give it back to the pool, no penalty.
        this.setStatus(n, "ready");
        this.note(`#${n}: in progress without a worker run; back to ready`);
      }
      return;
    }
    // Dispatched, not live, no finished result: the run ended without a result (or never appeared).
    const run = this.snapshot.runs.find((r) => r.dispatchId === record!.dispatchId);
    const why = run
      ? `the worker run ended (${run.conclusion ?? "unknown"}) without a result`
      : `the worker run never appeared within ${DISPATCH_GRACE_MINUTES} minutes of the dispatch`;
    if (status !== "in-progress" && status !== "ready") {
      record.handled = record.dispatchId;
      return;
    }
    if (
      run?.conclusion === "success" &&
      this.nowMs - Date.parse(run.updatedAt) < RESULT_GRACE_MINUTES * 60_000
    ) {
      // A job that succeeded wrote its result before it ended: the read of the comments lags the read of the
      // runs. Waiting costs a reconcile; a crash would cost a retry (and three of them pause the session).
      this.note(`#${n}: run ${run.id} succeeded; waiting for its result to show`);
      return;
    }
    this.crash(n, record, why, run ? "crash" : "lost");
  }

  /** Sends a recorded dispatch whose run never appeared once more (see DISPATCH_RESEND_MINUTES). */
  private resendDispatch(n: number): void {
    const record = this.state.tasks[n];
    if (!record?.dispatchId || !isDispatching(this.state.session.status)) return;
    const key = `resend:${record.dispatchId}`;
    const since = Date.parse(record.dispatchedAt ?? "");
    if (record.notices?.includes(key) || Number.isNaN(since)) return;
    if (this.nowMs - since < DISPATCH_RESEND_MINUTES * 60_000) return;
    record.notices = [...(record.notices ?? []), key].slice(-12);
    const effect: Effect = {
      type: "dispatchWorker",
      issue: n,
      attempt: record.attempt,
      dispatchId: record.dispatchId,
      resend: true,
    };
    if (this.state.overrides) effect.inputs = { config: JSON.stringify(this.state.overrides) };
    this.freezeText(n, effect);
    this.effects.push(effect);
    this.note(`#${n}: no run for dispatch ${record.dispatchId} yet; sending it again`);
  }

  private handleOutcome(n: number, record: TaskRecord, result: WorkerResult): void {
    const outcome = result.result ?? "failed";
    this.account(record, result);
    record.handled = result.dispatchId;
    record.result = outcome;
    record.reason = result.reason ? truncate(result.reason, 300) : undefined;
    record.cancelAt = undefined;
    if (result.prNumber) record.pr = result.prNumber;
    if (result.humanGate.fired) {
      record.gate = [
        ...new Set([...(record.gate ?? []), ...result.humanGate.rules.map((r) => truncate(r.rule, 120))]),
      ].slice(0, 20);
    }
    const decision = decideOnWorkerOutcome(outcome);
    this.note(
      `#${n}: worker ${result.dispatchId} finished: ${outcome}${result.reason ? ` (${truncate(result.reason, 120)})` : ""}`,
    );

    const consecutive = trackConsecutiveFailures(
      this.state.consecutiveFailures,
      outcome,
      this.config.consecutiveErrorThreshold,
    );
    this.countFailure(
      n,
      outcome === "complete" ? "reset" : decision.failure ? "failure" : "none",
      consecutive.count,
    );

    if (outcome === "complete") {
      const pr = this.pullsFor(n).find((p) => p.state === "open" || p.state === "merged");
      if (!result.prNumber && !pr) {
        this.failTask(n, record, "the worker reported completion but no pull request was found");
        return;
      }
      record.failures = 0;
      record.since = this.now.toISOString();
      this.setStatus(n, "review");
      return;
    }
    if (decision.resumeLater) {
      if (outcome === "rate_limited" || outcome === "usage_limited") {
        const resume = result.resumeAt ? Date.parse(result.resumeAt) : Number.NaN;
        const until = Number.isNaN(resume) ? this.nowMs + this.config.rateLimit.maxWaitMs : resume;
        if (until > this.nowMs) record.waitUntil = new Date(until).toISOString();
      }
      this.setStatus(n, "ready");
      return;
    }
    if (decision.failure) {
      this.failTask(n, record, result.reason ?? decision.note);
      return;
    }
    record.since = result.updatedAt;
    this.setStatus(n, decision.status);
  }

  /** Failure of an attempt: the error strategy decides (retry with backoff, give up, or abort the session). */
  private failTask(
    n: number,
    record: TaskRecord,
    reason: string,
    strategy = this.config.errorStrategy,
  ): void {
    record.failures += 1;
    const d = decideOnFailure({
      strategy,
      attempt: record.failures,
      maxRetries: this.config.maxRetries,
      retryBaseMs: this.config.retryBaseMs,
      retryMaxMs: this.config.retryMaxMs,
    });
    record.reason = truncate(reason, 300);
    if (d.action === "retry") {
      record.retries += 1;
      record.waitUntil = new Date(this.nowMs + d.delayMs).toISOString();
      record.reason = truncate(`${reason} — ${d.reason}, in ${formatDuration(d.delayMs)}`, 300);
      this.setStatus(n, "ready");
      this.note(`#${n}: ${d.reason} after ${formatDuration(d.delayMs)}`);
    } else {
      record.since = this.now.toISOString();
      this.setStatus(n, "failed");
      this.note(`#${n}: failed (${d.reason})`);
      if (d.action === "abort") {
        this.session({
          type: "abort",
          issue: n,
          detail: `task #${n} failed`,
          activeWorkers: this.liveCount(),
        });
      }
    }
    if (
      this.state.consecutiveFailures >= this.config.consecutiveErrorThreshold &&
      this.state.session.status === "running"
    ) {
      this.session({
        type: "consecutiveFailures",
        count: this.state.consecutiveFailures,
        threshold: this.config.consecutiveErrorThreshold,
        issues: [...this.state.failedInARow],
        activeWorkers: this.liveCount(),
      });
    }
  }

  /** A run that ended without a result (or never appeared): back to ready with the retry count raised. */
  private crash(n: number, record: TaskRecord, why: string, kind: "crash" | "lost"): void {
    record.handled = record.dispatchId;
    record.result = kind;
    record.cancelAt = undefined;
    const consecutive = trackConsecutiveFailures(
      this.state.consecutiveFailures,
      "failed",
      this.config.consecutiveErrorThreshold,
    );
    this.countFailure(n, "failure", consecutive.count);
    this.note(`#${n}: ${why}`);
    // A crash always gets the retry treatment (seed 001: crash → reset to pending), bounded by maxRetries.
    this.failTask(n, record, why, "retry");
  }

  private countFailure(n: number, kind: "reset" | "failure" | "none", count: number): void {
    if (kind === "reset") {
      this.state.consecutiveFailures = 0;
      this.state.failedInARow = [];
    } else if (kind === "failure") {
      this.state.consecutiveFailures = count;
      this.state.failedInARow = [...this.state.failedInARow, n].slice(-50);
    }
  }

  private account(record: TaskRecord, result: WorkerResult): void {
    record.iterations += result.iterations;
    record.tokensIn += result.tokens.input;
    record.tokensOut += result.tokens.output;
    record.costUsd = round4(record.costUsd + result.costUsd);
  }

  private checkStall(n: number, run: RunNode | null): void {
    if (run?.status !== "in_progress") return;
    const record = this.state.tasks[n];
    const result = this.results.get(n);
    const times = [Date.parse(run.createdAt), Date.parse(record?.dispatchedAt ?? "")];
    if (result && record && result.dispatchId === record.dispatchId) times.push(Date.parse(result.updatedAt));
    const progressAt = Math.max(...times.filter((t) => !Number.isNaN(t)));
    const idleMs = this.nowMs - progressAt;
    if (idleMs <= this.config.timeoutMinutes * 60_000) return;
    this.cancel(
      run,
      n,
      `no progress for ${formatDuration(idleMs)} (timeout ${this.config.timeoutMinutes} min)`,
    );
  }

  private checkDuplicateRuns(n: number): void {
    const runs = this.liveRunsOf(n);
    if (runs.length < 2) return;
    const record = this.state.tasks[n];
    const keep =
      runs.find((r) => r.dispatchId && r.dispatchId === record?.dispatchId) ??
      [...runs].sort((a, b) => a.id - b.id)[0]!;
    for (const run of runs) if (run !== keep) this.cancel(run, n, "a second live run for the same task");
  }

  private cancel(run: RunNode, n: number, why: string): void {
    const record = this.record(n);
    const key = `cancel:${run.id}`;
    const asked =
      record.notices?.includes(key) &&
      record.cancelAt &&
      this.nowMs - Date.parse(record.cancelAt) < CANCEL_RETRY_MINUTES * 60_000;
    if (asked) return;
    record.cancelAt = this.now.toISOString();
    record.notices = [...(record.notices ?? []).filter((k) => k !== key), key].slice(-12);
    this.effects.push({ type: "cancelRun", runId: run.id, issue: n });
    this.note(`#${n}: cancel run ${run.id}: ${why}`);
  }

  // -------------------------------------------------------------------------------------------------------
  // Liveness

  private runIssue(run: RunNode): number | null {
    if (run.issue) return run.issue;
    const m = run.dispatchId ? /^(\d+)-/.exec(run.dispatchId) : null;
    return m ? Number(m[1]) : null;
  }

  private liveRunsOf(n: number): RunNode[] {
    return this.snapshot.runs.filter((r) => r.status !== "completed" && this.runIssue(r) === n);
  }

  private liveState(n: number): { live: boolean; run?: RunNode; phase?: SlotLine["phase"] } {
    const runs = this.liveRunsOf(n);
    const record = this.state.tasks[n];
    if (runs.length > 0) {
      const run = runs.find((r) => r.dispatchId && r.dispatchId === record?.dispatchId) ?? runs[0]!;
      if (record && run.dispatchId === record.dispatchId) record.runId = run.id;
      const cancelling = record?.cancelAt !== undefined && record.notices?.includes(`cancel:${run.id}`);
      return {
        live: true,
        run,
        phase: cancelling ? "cancelling" : run.status === "in_progress" ? "running" : "queued",
      };
    }
    if (!record?.dispatchId || record.handled === record.dispatchId) return { live: false };
    const ours = this.snapshot.runs.find((r) => r.dispatchId === record.dispatchId);
    if (ours) return { live: false }; // it completed
    const result = this.results.get(n);
    if (
      result &&
      result.dispatchId === record.dispatchId &&
      result.status === "running" &&
      this.nowMs - Date.parse(result.updatedAt) < this.config.timeoutMinutes * 60_000
    ) {
      return { live: true, phase: "running" };
    }
    const dispatchedAt = Date.parse(record.dispatchedAt ?? "");
    if (!Number.isNaN(dispatchedAt) && this.nowMs - dispatchedAt < DISPATCH_GRACE_MINUTES * 60_000) {
      return { live: true, phase: "dispatched" };
    }
    return { live: false };
  }

  private isLive(n: number): boolean {
    return this.liveState(n).live;
  }

  /** Every task with a live worker (run queued/in progress, or a recent dispatch whose run has not appeared). */
  private liveIssues(): Set<number> {
    const out = new Set<number>();
    for (const run of this.snapshot.runs) {
      const n = this.runIssue(run);
      if (n !== null && run.status !== "completed") out.add(n);
    }
    for (const key of Object.keys(this.state.tasks)) if (this.isLive(Number(key))) out.add(Number(key));
    return out;
  }

  // -------------------------------------------------------------------------------------------------------
  // Review gates

  private processReviews(): void {
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open" || this.statusOf(n) !== "review") continue;
      if (this.liveState(n).live && !this.finishedCurrent(n)) {
        // A worker is still pushing to the branch (a feedback round): its commits are not final, so nothing is
        // merged or sent back until it has finished.
        this.reviewLines.set(n, {
          issue: n,
          title: issue.title,
          reason: "a worker is updating the pull request",
          pr: this.state.tasks[n]?.pr ?? null,
        });
        continue;
      }
      this.processReview(n, issue);
    }
  }

  private processReview(n: number, issue: IssueNode): void {
    const record = this.record(n);
    const prs = this.pullsFor(n);
    const pr = prs.find((p) => p.state === "open");
    if (!pr) {
      const merged = prs.find((p) => p.state === "merged");
      if (merged) {
        this.done(n, merged);
        return;
      }
      const closed = prs.find((p) => p.state === "closed");
      if (closed) {
        record.reason = `PR #${closed.number} was closed without merging`;
        record.since = this.now.toISOString();
        this.setStatus(n, "failed");
        this.note(`#${n}: PR #${closed.number} closed unmerged → failed`);
        return;
      }
      this.reviewLines.set(n, {
        issue: n,
        title: issue.title,
        reason: `no open pull request on \`${this.branch(n)}\``,
        pr: null,
      });
      return;
    }
    record.pr = pr.number;
    const result = this.results.get(n);
    const gateRules = [...(record.gate ?? [])];
    const marker = parseHumanGateMarker(pr.body);
    if (marker) for (const rule of marker) if (!gateRules.includes(rule)) gateRules.push(rule);
    if (result?.humanGate.fired && result.prNumber === pr.number) {
      for (const r of result.humanGate.rules) if (!gateRules.includes(r.rule)) gateRules.push(r.rule);
    }
    // The worker's reading above is an early warning; the controller's own, from the API at this head, decides
    // and can only add rules.
    const verified = this.verifiedGate(pr);
    if ("waiting" in verified) {
      this.reviewLines.set(n, { issue: n, title: issue.title, reason: verified.waiting, pr: pr.number });
      return;
    }
    for (const r of verified.rules) if (!gateRules.includes(r)) gateRules.unshift(r);
    if (gateRules.length > 0) record.gate = gateRules.slice(0, 20).map((r) => truncate(r, 120));

    const evaluation = evaluatePullRequest(pr, {
      requiredChecks: this.config.merge.requiredChecks,
      botLogin: this.snapshot.botLogin,
      permissions: this.snapshot.permissions,
      humanGateRules: gateRules,
      feedbackSha: record.feedbackSha ?? null,
      autoMerge: this.config.merge.auto,
      now: this.now,
      checksTimeoutMinutes: this.config.merge.checksTimeoutMinutes,
    });

    // One-time explanations.
    if (evaluation.humanGate.required && !evaluation.humanGate.approved) {
      this.notice(n, record, `gate-${pr.number}`, humanGateComment(pr, gateRules));
    }
    if (evaluation.checks.state === "none" && evaluation.checks.overdue) {
      this.notice(
        n,
        record,
        `no-checks-${pr.number}`,
        noChecksComment(pr, this.config.merge.checksTimeoutMinutes, evaluation.checks.missing),
      );
    }

    let verdict = evaluation.verdict;
    if (record.result === "feedback" && record.feedbackSha === pr.headSha) {
      // The feedback for this head went out; a worker has not come back with a new commit yet.
      verdict = { action: "wait", reason: "feedback sent; waiting for a worker" };
    }
    switch (verdict.action) {
      case "merge": {
        if (
          record.merge &&
          record.merge.sha === pr.headSha &&
          this.nowMs - Date.parse(record.merge.at) < MERGE_RETRY_MINUTES * 60_000
        ) {
          this.reviewLines.set(n, {
            issue: n,
            title: issue.title,
            reason: "every gate passed; merging",
            pr: pr.number,
          });
          return;
        }
        record.merge = { sha: pr.headSha, at: this.now.toISOString() };
        this.effects.push({
          type: "mergePr",
          pr: pr.number,
          issue: n,
          method: this.config.merge.method,
          expectedHeadSha: pr.headSha,
        });
        this.reviewLines.set(n, {
          issue: n,
          title: issue.title,
          reason: "every gate passed; merging",
          pr: pr.number,
        });
        this.note(`#${n}: merge PR #${pr.number} at ${pr.headSha.slice(0, 7)}`);
        return;
      }
      case "feedback": {
        if (record.feedbackRounds >= this.config.merge.maxFeedbackRounds) {
          record.reason = truncate(
            `${verdict.kinds.join(", ")} after ${record.feedbackRounds} feedback rounds (merge.maxFeedbackRounds)`,
            300,
          );
          record.since = this.now.toISOString();
          this.setStatus(n, "failed");
          this.note(`#${n}: feedback rounds exhausted → failed`);
          return;
        }
        record.feedbackRounds += 1;
        record.feedbackSha = pr.headSha;
        record.result = "feedback";
        record.reason = truncate(
          `PR #${pr.number}: ${describeKinds(verdict.kinds)} (feedback round ${record.feedbackRounds})`,
          300,
        );
        record.merge = undefined;
        this.effects.push({
          type: "comment",
          issue: n,
          body: feedbackComment(
            pr,
            verdict.kinds,
            verdict.summary,
            record.feedbackRounds,
            this.config.merge.maxFeedbackRounds,
          ),
          key: `feedback-${n}-${record.feedbackRounds}`,
        });
        this.setStatus(n, "ready");
        this.note(
          `#${n}: PR #${pr.number} ${describeKinds(verdict.kinds)} → back to a worker (round ${record.feedbackRounds})`,
        );
        return;
      }
      case "fail": {
        record.reason = truncate(verdict.reason, 300);
        record.since = this.now.toISOString();
        this.setStatus(n, "failed");
        this.note(`#${n}: ${verdict.reason} → failed`);
        return;
      }
      case "wait": {
        const gate =
          evaluation.humanGate.required &&
          !evaluation.humanGate.approved &&
          !verdict.reason.startsWith("human gate")
            ? "; the human gate also needs an approval of the latest commit"
            : "";
        this.reviewLines.set(n, {
          issue: n,
          title: issue.title,
          reason: `${verdict.reason}${gate}`,
          pr: pr.number,
        });
        return;
      }
    }
  }

  private notice(n: number, record: TaskRecord, key: string, body: string): void {
    if (record.notices?.includes(key)) return;
    record.notices = [...(record.notices ?? []), key].slice(-12);
    this.effects.push({ type: "comment", issue: n, body, key });
    this.note(`#${n}: notice ${key}`);
  }

  private done(n: number, pr: PullNode): void {
    if (this.issues.get(n)?.state === "open")
      this.effects.push({ type: "closeIssue", issue: n, reason: "completed" });
    this.clearStateLabels(n);
    if (this.config.merge.deleteBranch && pr.headRef === this.branch(n)) {
      this.effects.push({ type: "deleteBranch", branch: pr.headRef });
    }
    this.retire(n, "done", pr.number);
    this.note(`#${n}: done (PR #${pr.number} merged)`);
  }

  /** Moves a finished task out of the state into the history counters and the pending history comment. */
  private retire(n: number, outcome: HistoryEntry["outcome"], pr: number | null): void {
    const record = this.state.tasks[n] ?? newTaskRecord();
    const h = this.state.history;
    if (outcome === "done") {
      h.completed += 1;
      if (pr) h.merges += 1;
      h.completedIterations += record.iterations;
      if (!h.fastest || record.iterations < h.fastest.iterations)
        h.fastest = { issue: n, iterations: record.iterations };
      if (!h.slowest || record.iterations > h.slowest.iterations)
        h.slowest = { issue: n, iterations: record.iterations };
    } else if (outcome === "skipped") h.skipped += 1;
    else h.closed += 1;
    h.iterations += record.iterations;
    h.tokensIn += record.tokensIn;
    h.tokensOut += record.tokensOut;
    h.costUsd = round4(h.costUsd + record.costUsd);
    this.state.pendingHistory.push({
      issue: n,
      title: truncate(this.issues.get(n)?.title ?? `#${n}`, 80),
      outcome,
      at: this.now.toISOString(),
      iterations: record.iterations,
      tokens: record.tokensIn + record.tokensOut,
      costUsd: record.costUsd,
      attempts: record.attempt,
      ...(pr ? { pr } : {}),
    });
    this.state.recent = [
      ...this.state.recent.filter((r) => r.issue !== n),
      { issue: n, outcome, at: this.now.toISOString() },
    ].slice(-100);
    delete this.state.tasks[n];
  }

  // -------------------------------------------------------------------------------------------------------
  // Pool and dispatch

  private processPool(): PoolResult {
    const L = this.L;
    // The issues as this reconcile leaves them (label changes, settle overlay); pull requests stay for "Depends on #PR".
    const issues = this.snapshot.issues.map((i) => ({
      ...(this.issues.get(i.number) ?? i),
      labels: this.labels.get(i.number) ?? i.labels,
    }));
    const graph = buildTaskGraph(issues, { owner: this.snapshot.repo.owner, name: this.snapshot.repo.name });
    const { ready, waiting } = readyTasks(graph, {
      readyLabel: L.ready,
      excludeLabel: L.exclude,
      stateLabels: [L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed],
    });
    const notInPool: ReasonLine[] = [];
    const waits: ReasonLine[] = waiting.map((w) => ({
      issue: w.number,
      title: this.issues.get(w.number)?.title ?? "",
      reason: w.reason,
    }));
    const live = this.liveIssues();
    let waitingForTime = false;
    const candidates = ready.filter((node) => {
      const n = node.number;
      const by = this.readyBy.get(n) ?? null;
      if (!by || !(sameLogin(by, this.snapshot.botLogin) || hasWriteAccess(this.snapshot.permissions, by))) {
        notInPool.push({
          issue: n,
          title: node.issue.title,
          reason: by
            ? `the \`${L.ready}\` label was added by ${quietLogin(by)}, who has no write access`
            : `who added the \`${L.ready}\` label is unknown`,
        });
        return false;
      }
      if (live.has(n)) return false;
      const wait = this.state.tasks[n]?.waitUntil;
      if (wait && Date.parse(wait) > this.nowMs) {
        waitingForTime = true;
        waits.push({
          issue: n,
          title: node.issue.title,
          reason: `waiting until ${formatTime(wait)}: ${this.state.tasks[n]?.reason ?? "backoff"}`,
        });
        return false;
      }
      return true;
    });
    const scoring = {
      weights: this.config.scoring,
      labels: { critical: L.critical, quickWin: L.quickWin },
      retries: Object.fromEntries(Object.entries(this.state.tasks).map(([k, r]) => [Number(k), r.retries])),
    };
    let ranked = rankTasks(candidates, scoring);

    // A session that never ran starts by itself when ready work appears (the ready label of someone with
    // write access is the go-ahead); a completed one comes back to running.
    const s = this.state.session;
    if (ranked.length > 0 && s.status === "idle" && s.reason === "initial") {
      this.session({ type: "start" }, true);
      this.state.session.detail = "ready work appeared";
    } else if (ranked.length > 0 && s.status === "completed") {
      this.session({ type: "newWork", issues: ranked.slice(0, 10).map((t) => t.issue) }, true);
    }

    // A merge requested now closes its issue, and the tasks waiting only on it become ready on the next reconcile
    // (the merge's own events bring it at once). The free slots wait for them instead of going to whatever is
    // ready this moment: the order of work follows the scores, not which dependency happened to merge first.
    const merging = new Set(this.effects.flatMap((e) => (e.type === "mergePr" ? [e.issue] : [])));
    const unblocking =
      merging.size > 0 &&
      waiting.some(
        (w) =>
          w.code === "dependencies" &&
          !!w.waitingOn?.length &&
          w.waitingOn.every((d) => typeof d === "number" && merging.has(d)),
      );
    if (unblocking)
      this.note(`dispatch waits for the merge of ${[...merging].map((n) => `#${n}`).join(", ")}`);
    if (isDispatching(this.state.session.status) && !unblocking) {
      const free = this.config.maxParallel - live.size;
      const chosen = ranked.slice(0, Math.max(0, free));
      for (const task of chosen) this.dispatch(task.issue, formatScoreParts(task.parts), task.total);
      const taken = new Set(chosen.map((t) => t.issue));
      ranked = ranked.filter((t) => !taken.has(t.issue));
    }
    const pending = ranked.length > 0 || waitingForTime;
    return { graph, ranked, waits, notInPool, pending };
  }

  private dispatch(n: number, why: string, score: number): void {
    const record = this.record(n);
    const result = this.results.get(n);
    const attempt = Math.max(record.attempt, result?.attempt ?? 0) + 1;
    const dispatchId = `${n}-${attempt}-${this.input.dispatchIdSeed}`;
    record.attempt = attempt;
    record.dispatchId = dispatchId;
    record.dispatchedAt = this.now.toISOString();
    record.startedAt ??= this.now.toISOString();
    record.runId = undefined;
    record.waitUntil = undefined;
    record.cancelAt = undefined;
    record.merge = undefined;
    this.setStatus(n, "in-progress");
    const effect: Effect = { type: "dispatchWorker", issue: n, attempt, dispatchId };
    if (this.state.overrides) effect.inputs = { config: JSON.stringify(this.state.overrides) };
    this.freezeText(n, effect);
    this.effects.push(effect);
    this.note(`#${n}: dispatch attempt ${attempt} (${dispatchId}), score ${score}: ${why}`);
  }

  // -------------------------------------------------------------------------------------------------------
  // Whose words count: the approved task text, and status labels only Autopilot sets

  /**
   * The text a writer approved is frozen at dispatch and handed to the worker (`task-digest`), which refuses
   * any other. Processed before the workers and the pool, so a task whose text changed is neither dispatched
   * nor merged.
   */
  private freezeText(n: number, effect: Extract<Effect, { type: "dispatchWorker" }>): void {
    const issue = this.issues.get(n);
    if (!issue) return;
    const record = this.record(n);
    record.text ??= {
      digest: taskDigest(issue.title, issue.body),
      since: lastEditAt(issue.edits ?? [], issue.readyLabeledAt ?? this.now.toISOString()),
    };
    effect.inputs = { ...(effect.inputs ?? {}), "task-digest": record.text.digest };
  }

  /**
   * Judges every open task's title and body against what a writer approved (src/core/task-text.ts): every
   * edit since by a writer is approved again; any other change takes the task out until a writer labels it.
   */
  private processTaskText(): void {
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open" || issue.edits === undefined) continue;
      const status = this.statusOf(n);
      if (status === null || status === "skipped" || status === "done") continue;
      const record = this.state.tasks[n];
      const readyBy = issue.readyLabeledBy ?? null;
      const relabeled =
        !!issue.readyLabeledAt &&
        !!readyBy &&
        hasWriteAccess(this.snapshot.permissions, readyBy) &&
        (!record?.text || Date.parse(issue.readyLabeledAt) > Date.parse(record.text.since));
      // A writer's new ready label approves the text as it was then, whatever was frozen before.
      const frozen =
        record?.text && !relabeled
          ? record.text
          : { digest: null, since: issue.readyLabeledAt ?? record?.text?.since ?? null };
      const verdict = judgeTaskText({
        title: issue.title,
        body: issue.body,
        frozen,
        edits: issue.edits,
        isWriter: (login) => hasWriteAccess(this.snapshot.permissions, login),
      });
      if (verdict.kind === "refreeze") {
        this.record(n).text = verdict.frozen;
        this.note(`#${n}: the task text was edited by a writer; the new text is approved`);
      } else if (verdict.kind === "unchanged" && relabeled && record?.text) {
        record.text = {
          digest: taskDigest(issue.title, issue.body),
          since: lastEditAt(issue.edits, issue.readyLabeledAt!),
        };
      } else if (verdict.kind === "takeOut") {
        this.takeOutChangedText(n, verdict.editors);
      }
    }
  }

  private takeOutChangedText(n: number, editors: (string | null)[]): void {
    const issue = this.issues.get(n)!;
    for (const run of this.liveRunsOf(n)) this.cancel(run, n, "the task text changed after approval");
    this.clearStateLabels(n);
    const record = this.state.tasks[n];
    if (record) {
      record.text = undefined;
      record.merge = undefined;
      if (record.dispatchId) record.handled = record.dispatchId;
      record.result = "text_changed";
      record.reason = "the task text was edited after approval by someone without write access";
    }
    const digest = taskDigest(issue.title, issue.body);
    this.effects.push({
      type: "comment",
      issue: n,
      body: textChangedComment({ editors, readyLabel: this.L.ready }),
      key: `text-changed-${digest.slice(0, 16)}`,
    });
    const who = editors.filter((e): e is string => !!e).map((e) => quietLogin(e));
    this.incidentOnce(
      "task_text_changed",
      `#${n} was taken out: its text was edited ${who.length ? `by ${who.join(", ")} (no write access)` : "by someone Autopilot cannot name"} after it was approved. A person with write access adds the \`${this.L.ready}\` label again to put it back.`,
    );
    this.note(`#${n}: taken out, the task text changed after approval`);
  }

  /**
   * Status labels other than ready count only when Autopilot set them (the snapshot names the labeled event's
   * actor by account id): anyone else's is removed from the issue, reported, and not believed meanwhile.
   */
  private ignoreForeignLabels(): void {
    for (const issue of this.snapshot.issues) {
      const foreign = issue.foreignLabels ?? [];
      if (!foreign.length || issue.state !== "open" || !this.labels.has(issue.number)) continue;
      const n = issue.number;
      const drop = (labels: string[]) =>
        labels.filter((l) => !foreign.some((f) => f.label.toLowerCase() === l.toLowerCase()));
      this.labels.set(n, drop(this.labels.get(n) ?? []));
      this.effects.push({ type: "removeLabels", issue: n, labels: foreign.map((f) => f.label) });
      for (const f of foreign) {
        const message = `The \`${f.label}\` label on #${n} was set by ${f.by ? quietLogin(f.by) : "someone Autopilot cannot name"}, not by Autopilot: it was removed and does not count (status labels other than \`${this.L.ready}\` are Autopilot's; use the /autopilot commands).`;
        this.incidentOnce("foreign_label", message);
      }
      this.note(
        `#${n}: ignored status labels not set by Autopilot: ${foreign.map((f) => f.label).join(", ")}`,
      );
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Session bookkeeping

  private finishSession(pending: boolean): void {
    const s = this.state.session.status;
    const live = this.liveCount();
    if ((s === "pausing" || s === "stopping") && live === 0)
      this.session({ type: "workersCheckpointed" }, true);
    if (this.state.session.status !== "running" || live > 0 || pending) return;
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open") continue;
      const status = this.statusOf(n);
      if (status === "in-progress" || status === "review") return;
    }
    this.session({ type: "allTasksDone" });
    this.completedNow = true;
  }

  private budgetCheck(): void {
    if (this.state.session.status !== "running") return;
    // Running workers' reported spend counts too (src/core/session-budget.ts).
    const used = sessionSpend(this.state, this.results.values()).total;
    const over = sessionOverBudget(this.config.budgets.session, used);
    if (over) this.session({ type: "budgetExhausted", detail: over, activeWorkers: this.liveCount() });
  }

  // -------------------------------------------------------------------------------------------------------
  // Dashboard and write

  private finish(pool: PoolResult): Decision {
    // Status replies are written last, so they describe the decisions of this reconcile.
    const view = this.buildView(pool);
    for (const req of this.statusRequests) {
      this.reply(req.commentIssue, req.commentId, req.line, this.statusText(view, req.issue));
    }

    const compaction = compactState(this.state, {
      force: this.completedNow,
      canFlush: this.tracking !== null,
    });
    this.state = compaction.state;
    const effects: Effect[] = [];
    if (compaction.flush.length > 0) {
      const completion = this.effects.find(
        (e): e is Extract<Effect, { type: "comment" }> =>
          e.type === "comment" && !!e.key?.startsWith("session-completed-"),
      );
      if (completion) {
        // One comment when a session completes: the notice and the last batch of history.
        completion.body = `${completion.body}\n\n${renderHistoryComment(compaction.flush)}`;
      } else if (this.tracking) {
        this.effects.push({
          type: "comment",
          issue: this.tracking.number,
          body: renderHistoryComment(compaction.flush),
          key: `history-${compaction.flush[0]!.issue}-${compaction.flush[compaction.flush.length - 1]!.issue}-${this.state.history.comments}`,
        });
      }
    }

    const previous = this.input.state;
    const parsed = this.tracking ? parseDashboard(this.tracking.body) : null;
    const worthShowing =
      this.state.session.reason !== "initial" ||
      this.effects.length > 0 ||
      Object.keys(this.state.tasks).length > 0 ||
      !!this.input.configError ||
      this.state.incidents.length > 0;
    // A state that was just written while the snapshot shows no tracking issue: a stale read, not a deletion
    // (a deleted tracking issue reaches decide as state null and is recreated).
    const staleRead =
      !this.tracking &&
      previous !== null &&
      previous.revision > 0 &&
      previous.renderedAt !== null &&
      this.nowMs - Date.parse(previous.renderedAt) < SETTLE_MINUTES * 60_000;
    const creating = !this.tracking && worthShowing && !staleRead;

    // Pin once per tracking issue: right after creating it (`issue: 0` = the one this run creates), or once
    // when an existing one is not pinned. When the repository's pins are full the executor says so and goes on.
    let pin: Effect | null = null;
    if (creating) {
      this.state.pinRequested = 0;
      pin = { type: "pinIssue", issue: 0 };
    } else if (this.tracking?.pinned === false && this.state.pinRequested !== this.tracking.number) {
      if (this.state.pinRequested !== 0) pin = { type: "pinIssue", issue: this.tracking.number };
      this.state.pinRequested = this.tracking.number;
    }

    this.state.digest = dashboardDigest(this.state, view);
    const refreshDue =
      view.slots.length > 0 &&
      previous?.renderedAt != null &&
      this.nowMs - Date.parse(previous.renderedAt) >= DASHBOARD_REFRESH_MINUTES * 60_000;
    const needWrite =
      creating ||
      (this.tracking !== null &&
        (!previous ||
          !parsed?.hasMarker ||
          this.forceWrite ||
          refreshDue ||
          previous.digest !== this.state.digest));
    if (needWrite) {
      this.state.revision = (previous?.revision ?? parsed?.state?.revision ?? 0) + 1;
      this.state.renderedAt = this.now.toISOString();
      effects.push({
        type: "writeTrackingIssue",
        issue: this.tracking?.number ?? null,
        title: TRACKING_ISSUE_TITLE,
        body: renderDashboard(this.state, view, this.now),
        expectedRevision: this.tracking && previous ? previous.revision : null,
      });
      this.note(
        this.tracking
          ? `update tracking issue #${this.tracking.number} (revision ${this.state.revision})`
          : "create the tracking issue",
      );
    }
    if (pin) effects.push(pin);
    return { state: this.state, effects: [...effects, ...this.effects], log: this.log };
  }

  private buildView(pool: PoolResult): DashboardView {
    const L = this.L;
    const view: DashboardView = {
      repo: { owner: this.snapshot.repo.owner, name: this.snapshot.repo.name },
      dryRun: this.config.dryRun,
      maxParallel: this.config.maxParallel,
      maxIterations: this.config.maxIterations,
      ...(this.config.isolation === "none" ? { unisolated: true } : {}),
      slots: [],
      queue: pool.ranked.map((t) => ({
        issue: t.issue,
        title: t.title,
        score: t.total,
        why: formatScoreParts(t.parts),
      })),
      waiting: pool.waits.sort((a, b) => a.issue - b.issue),
      review: [],
      needsHuman: [],
      blocked: [],
      timeouts: [],
      failed: [],
      notInPool: pool.notInPool,
      cycles: pool.graph.cycles,
      graph: { nodes: [], edges: [] },
      statistics: this.statistics(),
      progress: { done: 0, total: 0 },
      configProblems: this.input.configError ? renderConfigError(this.input.configError) : null,
      budget: {
        marker: renderSessionBudgetMarker(
          this.config.budgets.session,
          sessionSpend(this.state, this.results.values()),
        ),
        notes: usdBudgetNotes(this.config),
      },
    };
    for (const n of [...this.liveIssues()].sort((a, b) => a - b)) {
      const live = this.liveState(n);
      const record = this.state.tasks[n];
      const result = this.results.get(n);
      const current = result && record && result.dispatchId === record.dispatchId ? result : null;
      view.slots.push({
        issue: n,
        title: this.issues.get(n)?.title ?? "",
        attempt: record?.attempt ?? live.run?.attempt ?? 1,
        iteration: current ? current.iterations : null,
        maxIterations: current ? current.maxIterations : null,
        startedAt: current?.startedAt ?? live.run?.createdAt ?? record?.dispatchedAt ?? null,
        runId: live.run?.id ?? null,
        runUrl: live.run?.url ?? null,
        phase: live.phase ?? "running",
      });
    }
    let open = 0;
    for (const [n, issue] of [...this.issues].sort((a, b) => a[0] - b[0])) {
      if (issue.state !== "open") continue;
      const status = this.statusOf(n);
      if (status === null || status === "skipped") continue;
      open += 1;
      const record = this.state.tasks[n];
      const line: ReasonLine = {
        issue: n,
        title: issue.title,
        reason: record?.reason ?? this.results.get(n)?.reason ?? "no reason given",
        since: record?.since ?? (status === "needs-human" ? (this.results.get(n)?.updatedAt ?? null) : null),
        pr: record?.pr ?? null,
      };
      if (status === "review")
        view.review.push(this.reviewLines.get(n) ?? { ...line, reason: "waiting for the gates" });
      else if (status === "needs-human") view.needsHuman.push(line);
      else if (status === "blocked") view.blocked.push(line);
      else if (status === "timeout") view.timeouts.push(line);
      else if (status === "failed") view.failed.push(line);
    }
    view.progress = { done: this.state.history.completed, total: this.state.history.completed + open };

    // Graph: tasks in flight first, then the queue, then the rest; edges among the shown ones.
    const order: number[] = [];
    const seen = new Set<number>();
    const add = (n: number) => {
      if (!seen.has(n) && this.issues.has(n)) {
        seen.add(n);
        order.push(n);
      }
    };
    for (const line of [
      ...view.slots,
      ...view.review,
      ...view.queue,
      ...view.waiting,
      ...view.needsHuman,
      ...view.blocked,
      ...view.timeouts,
      ...view.failed,
    ]) {
      add(line.issue);
    }
    const inGraph = new Set(order.slice(0, 200));
    const deps = new Set<number>();
    for (const e of pool.graph.edges) if (inGraph.has(e.from) && this.issues.has(e.to)) deps.add(e.to);
    for (const d of deps) add(d);
    view.graph.nodes = order.slice(0, 250).map((n) => {
      const issue = this.issues.get(n)!;
      const status = this.statusOf(n);
      const waiting = view.waiting.some((w) => w.issue === n);
      return {
        issue: n,
        status: issue.state === "closed" ? "done" : waiting ? "waiting" : (status ?? "waiting"),
      };
    });
    const shown = new Set(view.graph.nodes.map((x) => x.issue));
    view.graph.edges = pool.graph.edges
      .filter((e) => shown.has(e.from) && shown.has(e.to))
      .map((e) => [e.from, e.to] as [number, number]);
    void L;
    return view;
  }

  private statistics(): SessionStatistics {
    const tasks: TaskRecordLike[] = [];
    for (const [n, issue] of this.issues) {
      if (issue.state !== "open") continue;
      const status = this.statusOf(n);
      if (status === null || status === "skipped") continue;
      const r = this.state.tasks[n];
      tasks.push({
        issue: n,
        status,
        iterations: r?.iterations ?? 0,
        attempts: r?.attempt ?? 0,
        startedAt: r?.startedAt ?? null,
        tokens: r ? { input: r.tokensIn, output: r.tokensOut } : null,
        costUsd: r?.costUsd ?? 0,
      });
    }
    const stats = computeStatistics(tasks, this.now, { sessionStartedAt: this.state.session.startedAt });
    const h = this.state.history;
    const completedIterations = stats.iterations.average * stats.tasks.completed + h.completedIterations;
    const completed = stats.tasks.completed + h.completed;
    stats.tasks.completed = completed;
    stats.tasks.skipped += h.skipped;
    stats.tasks.total += h.completed + h.skipped + h.closed;
    stats.iterations.total += h.iterations;
    stats.iterations.average = completed > 0 ? Math.round((completedIterations / completed) * 100) / 100 : 0;
    stats.iterations.fastest = pickExtreme(stats.iterations.fastest, h.fastest, (a, b) => a < b);
    stats.iterations.slowest = pickExtreme(stats.iterations.slowest, h.slowest, (a, b) => a > b);
    stats.merges.successful += h.merges;
    stats.tokens.input += h.tokensIn;
    stats.tokens.output += h.tokensOut;
    stats.tokens.total = stats.tokens.input + stats.tokens.output;
    stats.costUsd = round4(stats.costUsd + h.costUsd);
    return stats;
  }

  private statusText(view: DashboardView, issue: number | null): string {
    const s = this.state.session;
    const head = `Autopilot is **${s.status}** (since ${formatTime(s.since)}). ${view.slots.length} of ${view.maxParallel} slots busy, ${view.queue.length} queued, ${view.review.length} in review, ${view.needsHuman.length} need a human, ${view.blocked.length + view.failed.length + view.timeouts.length} blocked/failed/timed out.`;
    if (issue === null) return head;
    const status = this.statusOf(issue);
    const lists: [string, ReasonLine[]][] = [
      ["in review", view.review],
      ["waiting for a human", view.needsHuman],
      ["blocked", view.blocked],
      ["timed out", view.timeouts],
      ["failed", view.failed],
      ["waiting", view.waiting],
      ["not in the pool", view.notInPool],
    ];
    let detail = status === null ? "is not an Autopilot task" : `is **${status}**`;
    const slot = view.slots.find((x) => x.issue === issue);
    if (slot)
      detail += ` — attempt ${slot.attempt}${slot.iteration !== null ? `, iteration ${slot.iteration}/${slot.maxIterations ?? view.maxIterations}` : ""} (${slot.phase})`;
    const rank = view.queue.findIndex((q) => q.issue === issue);
    if (rank >= 0)
      detail += ` — #${rank + 1} in the queue (score ${view.queue[rank]!.score}: ${escapeInline(view.queue[rank]!.why)})`;
    for (const [label, list] of lists) {
      const line = list.find((x) => x.issue === issue);
      if (line) detail += ` — ${label}: ${escapeInline(line.reason, 300)}`;
    }
    return `#${issue} ${detail}.\n\n${head}`;
  }

  // -------------------------------------------------------------------------------------------------------
  // Helpers

  private record(n: number): TaskRecord {
    let r = this.state.tasks[n];
    if (!r) {
      r = newTaskRecord();
      this.state.tasks[n] = r;
    }
    return r;
  }

  private statusOf(n: number): TaskStatus | null {
    const issue = this.issues.get(n);
    if (!issue) return null;
    return taskStatusFromLabels({ state: issue.state, labels: this.labels.get(n) ?? issue.labels }, this.L);
  }

  private stateLabels(): string[] {
    const L = this.L;
    return [L.ready, L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed];
  }

  /** Gives the task exactly one state label (skipped: the exclude label, none of the state labels). */
  private setStatus(n: number, status: TaskStatus): void {
    const target = status === "skipped" ? this.L.exclude : labelForStatus(status, this.L);
    // The exclude label goes only when a skipped task is brought back (a person's exclude is respected).
    const fromSkipped = this.statusOf(n) === "skipped" && status !== "skipped";
    this.writeLabels(n, target, [...this.stateLabels(), ...(fromSkipped ? [this.L.exclude] : [])]);
    if (target && target.toLowerCase() === this.L.ready.toLowerCase())
      this.readyBy.set(n, this.snapshot.botLogin);
    if (status !== "skipped" && status !== "done") {
      const record = this.record(n);
      record.label = status;
      record.labelAt = this.now.toISOString();
    }
  }

  private clearStateLabels(n: number): void {
    this.writeLabels(n, null, this.stateLabels());
  }

  /**
   * Moves the task's labels to `target` (removing `remove`), as ONE setStateLabel effect per issue per
   * reconcile: a task sent back to ready and dispatched in the same reconcile gets a single change, relative
   * to the labels it had before this reconcile (none at all when it ends where it started).
   */
  private writeLabels(n: number, target: string | null, remove: string[]): void {
    const same = (a: string, b: string | null) => b !== null && a.toLowerCase() === b.toLowerCase();
    const current = this.labels.get(n) ?? [];
    const next = current.filter((l) => !remove.some((r) => same(l, r)) || same(l, target));
    if (target && !hasLabel(next, target)) next.push(target);
    this.labels.set(n, next);

    const index = this.effects.findIndex((e) => e.type === "setStateLabel" && e.issue === n);
    const earlier = index >= 0 ? (this.effects[index] as Extract<Effect, { type: "setStateLabel" }>) : null;
    if (index >= 0) this.effects.splice(index, 1);
    const removeAll = [...new Set([...(earlier?.remove ?? []), ...remove])].filter((l) => !same(l, target));
    const base = this.baseLabels.get(n) ?? [];
    const changes = (target !== null && !hasLabel(base, target)) || removeAll.some((l) => hasLabel(base, l));
    if (changes) this.effects.push({ type: "setStateLabel", issue: n, add: target, remove: removeAll });
  }

  /** The task's PRs (its branch, or the PR its worker reported), newest first. */
  private pullsFor(n: number): PullNode[] {
    if (!this.pullIndex) {
      this.pullIndex = { byRef: new Map(), byNumber: new Map() };
      for (const p of this.snapshot.pulls) {
        const list = this.pullIndex.byRef.get(p.headRef) ?? [];
        list.push(p);
        this.pullIndex.byRef.set(p.headRef, list);
        this.pullIndex.byNumber.set(p.number, p);
      }
    }
    // Only the task branch counts (a PR number a worker reported proves nothing), and on it only the PRs the
    // App opened from this repository; the rest are reported once.
    const { trusted, ignored } = partitionPulls(this.pullIndex.byRef.get(this.branch(n)) ?? [], {
      repo: this.snapshot.repo,
      branch: this.branch(n),
      botId: this.snapshot.botId,
    });
    for (const x of ignored) {
      if (this.state.ignoredPulls.includes(x.pull.number)) continue;
      this.state.ignoredPulls = [...this.state.ignoredPulls, x.pull.number].slice(-100);
      this.incident("ignored_pull", ignoredPullMessage(x));
      this.note(`#${n}: ${ignoredPullMessage(x)}`);
    }
    return trusted;
  }

  /**
   * The controller's own gate rules for a PR's head (src/core/diff-gate.ts), read once per head SHA and kept in
   * the state (`recordDiffGates`); `waiting` while the diff at this head is unread or unreadable (nothing merges
   * then).
   */
  private verifiedGate(pr: PullNode): { rules: string[] } | { waiting: string } {
    // Snapshots without diff facts (built by hand, not by src/github) carry no verdict of their own.
    if (this.snapshot.pullDiffs === undefined) return { rules: [] };
    const cached = this.state.diffGates.find((g) => g.pr === pr.number && g.sha === pr.headSha);
    if (cached) return { rules: cached.rules };
    const diff = this.snapshot.pullDiffs.find((d) => d.pr === pr.number && d.sha === pr.headSha);
    if (diff?.error)
      return { waiting: truncate(`could not read the diff of PR #${pr.number}: ${diff.error}`, 200) };
    return { waiting: `reading the diff of PR #${pr.number} at ${pr.headSha.slice(0, 7)}` };
  }

  /**
   * Keeps the verdict of every diff read this reconcile (one head per PR), whether or not a review looks at it
   * now: src/github reads only heads without one, so a PR whose worker is still pushing is not read again on
   * every reconcile.
   */
  private recordDiffGates(): void {
    for (const diff of this.snapshot.pullDiffs ?? []) {
      if (diff.error) continue;
      const rules = evaluateDiffGate(diff, this.config.humanGate);
      const others = this.state.diffGates.filter((g) => g.pr !== diff.pr);
      this.state.diffGates = [...others, { pr: diff.pr, sha: diff.sha, rules }].slice(-30);
    }
  }

  private pullIndex: { byRef: Map<string, PullNode[]>; byNumber: Map<number, PullNode> } | null = null;

  private branch(n: number): string {
    return `${this.config.branchPrefix}issue-${n}`;
  }

  private react(commentId: number, content: Reaction): void {
    this.effects.push({ type: "react", commentId, content });
  }

  private reply(issue: number, commentId: number, line: string, text: string): void {
    this.effects.push({
      type: "comment",
      issue,
      body: `> ${escapeInline(line, 120)}\n\n${text}`,
      key: `reply-${commentId}`,
    });
  }

  private note(message: string): void {
    this.log.push(message);
  }
}

/** The state a worker labels its own task with when it ends with these outcomes (src/worker/job.ts). */
const WORKER_LABELS: Partial<Record<WorkerOutcome, TaskStatus>> = {
  complete: "review",
  blocked: "blocked",
  needs_human: "needs-human",
};

interface PoolResult {
  graph: TaskGraph;
  ranked: ReturnType<typeof rankTasks>;
  waits: ReasonLine[];
  notInPool: ReasonLine[];
  /** Work that will need a slot later (ranked but not dispatched, or waiting for a reset/backoff). */
  pending: boolean;
}

// ---------------------------------------------------------------------------------------------------------

function hasLabel(labels: readonly string[], label: string | undefined): boolean {
  return !!label && labels.some((l) => l.toLowerCase() === label.toLowerCase());
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

function pickExtreme(
  a: { issue: number; iterations: number } | null,
  b: { issue: number; iterations: number } | null,
  better: (x: number, y: number) => boolean,
): { issue: number; iterations: number } | null {
  if (!a) return b;
  if (!b) return a;
  return better(b.iterations, a.iterations) ? b : a;
}
