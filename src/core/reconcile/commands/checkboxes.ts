/**
 * The phase that reads the checkboxes ticked on the dashboard, by someone with write access: a task's retry or
 * skip, and the session's pause, resume and stop (000 §4.2's control bar), each acting as its command does.
 *
 * Who ticked is who last edited the tracking issue's body as GitHub records it (the GraphQL `editor` with
 * `lastEditedAt`, read by the snapshot in both modes: the hosted app and the controller inside Actions read the
 * same issue): an edit by anyone without write access, by Autopilot's own bot, or by no one GitHub names is
 * ignored with an incident on the dashboard, and the rewrite unticks the boxes.
 */
import { hasWriteAccess, sameLogin } from "../../tasks/commands.js";
import { parseDashboard, readDashboardMarks } from "../../dashboard/index.js";
import type { SessionEvent } from "../../session/session.js";
import { note, type Reconciling } from "../context.js";
import { incident } from "../messages.js";
import { liveCount } from "../runs/worker-runs.js";
import { sessionEvent } from "../session-events.js";
import { liftAgentsLimit } from "../task-alerts.js";
import { retryTask, skipTask } from "./retry-skip.js";

/** Whether boxes were ticked: the dashboard must then be written again (the rewrite unticks them). */
export function processCheckboxes(ctx: Reconciling): { ticked: boolean } {
  const previous = ctx.input.state;
  if (!ctx.tracking || !previous) return { ticked: false };
  const marks = readDashboardMarks(ctx.tracking.body);
  if (marks.checkedBoxes.length === 0 && marks.sessionBoxes.length === 0) return { ticked: false };
  const parsed = parseDashboard(ctx.tracking.body);
  // Ticks count only on the body this state came from (a later state means they were already handled).
  if (!parsed.state || parsed.state.revision !== previous.revision) return { ticked: false };
  const editor = ctx.tracking.lastEditedBy ?? null;
  const boxes = [...parsed.sessionBoxes, ...parsed.checkedBoxes.map((b) => `${b.action} #${b.issue}`)].join(
    ", ",
  );
  if (
    !editor ||
    sameLogin(editor, ctx.snapshot.botLogin) ||
    !hasWriteAccess(ctx.snapshot.permissions, editor)
  ) {
    incident(
      ctx,
      "checkbox_refused",
      `Ticked ${boxes} ignored: the last edit was by ${editor ? `@${editor}` : "an unknown user"}, and only people with write access can steer Autopilot.`,
    );
    note(ctx, `checkboxes ${boxes} ignored: editor ${editor ?? "unknown"} has no write access`);
    return { ticked: true };
  }
  for (const box of parsed.sessionBoxes) {
    const event: SessionEvent =
      box === "resume"
        ? { type: box, actor: editor }
        : { type: box, actor: editor, activeWorkers: liveCount(ctx) };
    const lifted = box === "resume" && liftAgentsLimit(ctx, editor);
    // Answered on the dashboard itself: the session line says who did what, an incident says why not.
    const outcome = sessionEvent(ctx, event, true);
    if (outcome.refused && !lifted) incident(ctx, "checkbox_refused", `The ${box} box: ${outcome.refused}`);
    note(ctx, `checkbox ${box} by ${editor}: ${outcome.refused && !lifted ? outcome.refused : "done"}`);
  }
  for (const box of parsed.checkedBoxes) {
    const outcome =
      box.action === "retry" ? retryTask(ctx, box.issue, editor) : skipTask(ctx, box.issue, editor);
    note(ctx, `checkbox ${box.action} #${box.issue} by ${editor}: ${outcome.ok ? "done" : outcome.message}`);
  }
  return { ticked: true };
}
