/**
 * The last phase: status replies, history compaction, and the tracking issue write (only when the dashboard
 * changed). The tracking issue write comes FIRST among the effects: it records the dispatch ids and revision
 * before anything acts on them, and a write refused on a revision mismatch means another reconcile is acting,
 * so the executor skips the rest (the next reconcile decides again).
 */
import {
  compactState,
  dashboardDigest,
  parseDashboard,
  readDashboardMarks,
  renderDashboard,
  renderHistoryComment,
  TRACKING_ISSUE_TITLE,
} from "../dashboard/index.js";
import type { Effect } from "../effects.js";
import type { StatusRequest } from "./commands/comment-commands.js";
import { type Decision, note, type Reconciling } from "./context.js";
import { buildView } from "./build-view.js";
import { reply } from "./messages.js";
import type { Pool } from "./runs/pool-dispatch.js";
import type { ReviewLines } from "./pulls/reviews.js";
import type { SessionEnd } from "./session-end.js";
import { reportRoomBeside } from "../session/session-report.js";
import { reportText } from "./commands/report-reply.js";
import { statusText } from "./commands/status-reply.js";
import { DASHBOARD_REFRESH_MINUTES, SETTLE_MINUTES } from "./timing.js";

interface Decided {
  pool: Pool;
  reviewLines: ReviewLines;
  statusRequests: readonly StatusRequest[];
  /** Dashboard checkboxes were ticked: the dashboard is written even when nothing else changed. */
  checkboxesTicked: boolean;
  sessionEnd: SessionEnd;
}

export function writeTrackingIssue(ctx: Reconciling, decided: Decided): Decision {
  // Status replies and reports are written last, so they describe the decisions of this reconcile.
  const view = buildView(ctx, decided.pool, decided.reviewLines);
  for (const req of decided.statusRequests) {
    const text =
      req.kind === "report"
        ? reportText(ctx, view, { kind: "command", by: req.by })
        : statusText(ctx, view, req.issue);
    reply(ctx, req.commentIssue, { id: req.commentId, review: req.review }, req.line, text);
  }

  const tracking = ctx.tracking;
  const compaction = compactState(ctx.state, {
    force: decided.sessionEnd.completed,
    canFlush: tracking !== null,
  });
  const state = compaction.state;
  const effects: Effect[] = [];
  const completion = decided.sessionEnd.completionNotice;
  if (completion) {
    // One comment when a session completes: the notice, the session report (read from ctx.state, which still
    // holds the finished tasks compaction moves out) and the last batch of history, within GitHub's limit.
    // The finished tasks the history lists are counted in the report, not listed twice.
    const history = compaction.flush.length > 0 ? `\n\n${renderHistoryComment(compaction.flush)}` : "";
    const listed = new Set(compaction.flush.map((h) => h.issue));
    const report = reportText(
      ctx,
      view,
      { kind: "completed" },
      reportRoomBeside(completion.body + history),
      listed,
    );
    completion.body = `${completion.body}\n\n${report}${history}`;
  } else if (compaction.flush.length > 0 && tracking) {
    ctx.effects.push({
      type: "comment",
      issue: tracking.number,
      body: renderHistoryComment(compaction.flush),
      key: `history-${compaction.flush[0]!.issue}-${compaction.flush[compaction.flush.length - 1]!.issue}-${state.history.comments}`,
    });
  }

  const previous = ctx.input.state;
  // The body's marks only; its state block is validated only when no previous state came with it.
  const marks = tracking ? readDashboardMarks(tracking.body) : null;
  const worthShowing =
    state.session.reason !== "initial" ||
    ctx.effects.length > 0 ||
    Object.keys(state.tasks).length > 0 ||
    !!ctx.input.configError ||
    state.incidents.length > 0 ||
    // Ready work waiting for `/autopilot start` (session.autoStart false): the dashboard is where it says so.
    view.awaiting !== undefined;
  // A state that was just written while the snapshot shows no tracking issue: a stale read, not a deletion
  // (a deleted tracking issue reaches decide as state null and is recreated).
  const staleRead =
    !tracking &&
    previous !== null &&
    previous.revision > 0 &&
    previous.renderedAt !== null &&
    ctx.nowMs - Date.parse(previous.renderedAt) < SETTLE_MINUTES * 60_000;
  const creating = !tracking && worthShowing && !staleRead;

  // Pin once per tracking issue: right after creating it (`issue: 0` = the one this run creates), or once
  // when an existing one is not pinned. When the repository's pins are full the executor says so and goes on.
  let pin: Effect | null = null;
  if (creating) {
    state.pinRequested = 0;
    pin = { type: "pinIssue", issue: 0 };
  } else if (tracking?.pinned === false && state.pinRequested !== tracking.number) {
    if (state.pinRequested !== 0) pin = { type: "pinIssue", issue: tracking.number };
    state.pinRequested = tracking.number;
  }

  state.digest = dashboardDigest(state, view);
  const refreshDue =
    view.slots.length > 0 &&
    previous?.renderedAt != null &&
    ctx.nowMs - Date.parse(previous.renderedAt) >= DASHBOARD_REFRESH_MINUTES * 60_000;
  const needWrite =
    creating ||
    (tracking !== null &&
      (!previous ||
        !marks?.hasMarker ||
        decided.checkboxesTicked ||
        refreshDue ||
        previous.digest !== state.digest));
  if (needWrite) {
    state.revision =
      (previous?.revision ?? (tracking ? parseDashboard(tracking.body).state?.revision : undefined) ?? 0) + 1;
    state.renderedAt = ctx.now.toISOString();
    effects.push({
      type: "writeTrackingIssue",
      issue: tracking?.number ?? null,
      title: TRACKING_ISSUE_TITLE,
      body: renderDashboard(state, view, ctx.now),
      expectedRevision: tracking && previous ? previous.revision : null,
      ...(tracking ? { readBody: tracking.body } : {}),
    });
    note(
      ctx,
      tracking
        ? `update tracking issue #${tracking.number} (revision ${state.revision})`
        : "create the tracking issue",
    );
  }
  if (pin) effects.push(pin);
  if (tracking) effects.push(...closeDuplicates(ctx, tracking.number));
  return { state, effects: [...effects, ...ctx.effects], log: ctx.log, statistics: view.statistics };
}

/**
 * A younger open tracking issue beside the one in use: a create whose check for an older issue failed (a 5xx on
 * the listing after the create) reported the create as not done, and nobody else closes it. It is closed as a
 * duplicate with a pointer, as tracking-issue-effects.ts does when its check succeeds; a command given there
 * would otherwise never be read (only the oldest is).
 */
function closeDuplicates(ctx: Reconciling, tracking: number): Effect[] {
  return (ctx.snapshot.duplicateTrackingIssues ?? [])
    .filter((n) => n !== tracking)
    .flatMap((n): Effect[] => [
      {
        type: "comment",
        issue: n,
        body: `#${tracking} is Autopilot's tracking issue, and its commands are read there. This duplicate is closed.`,
        key: `duplicate-tracking-${n}`,
      },
      { type: "closeIssue", issue: n, reason: "not_planned" },
    ]);
}
