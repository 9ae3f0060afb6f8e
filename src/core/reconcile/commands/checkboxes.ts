/** The phase that reads the retry/skip checkboxes ticked on the dashboard, by someone with write access. */
import { hasWriteAccess, sameLogin } from "../../tasks/commands.js";
import { parseDashboard, readDashboardMarks } from "../../dashboard/index.js";
import { note, type Reconciling } from "../context.js";
import { incident } from "../messages.js";
import { retryTask, skipTask } from "./retry-skip.js";

/** Whether boxes were ticked: the dashboard must then be written again (the rewrite unticks them). */
export function processCheckboxes(ctx: Reconciling): { ticked: boolean } {
  const previous = ctx.input.state;
  if (!ctx.tracking || !previous) return { ticked: false };
  if (readDashboardMarks(ctx.tracking.body).checkedBoxes.length === 0) return { ticked: false };
  const parsed = parseDashboard(ctx.tracking.body);
  // Ticks count only on the body this state came from (a later state means they were already handled).
  if (!parsed.state || parsed.state.revision !== previous.revision) return { ticked: false };
  const editor = ctx.tracking.lastEditedBy ?? null;
  const boxes = parsed.checkedBoxes.map((b) => `${b.action} #${b.issue}`).join(", ");
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
  for (const box of parsed.checkedBoxes) {
    const outcome =
      box.action === "retry" ? retryTask(ctx, box.issue, editor) : skipTask(ctx, box.issue, editor);
    note(ctx, `checkbox ${box.action} #${box.issue} by ${editor}: ${outcome.ok ? "done" : outcome.message}`);
  }
  return { ticked: true };
}
