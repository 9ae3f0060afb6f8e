/** The answer to `/autopilot status [#N]`: the session in one line, and the task's place on the dashboard. */
import { epicRefusal } from "../epic-pooling.js";
import type { DashboardView, ReasonLine } from "../../dashboard/index.js";
import { escapeInline, formatTime } from "../../text/markdown.js";
import type { Reconciling } from "../context.js";
import { statusOf } from "../task-labels.js";

export function statusText(ctx: Reconciling, view: DashboardView, issue: number | null): string {
  const s = ctx.state.session;
  let head = `Autopilot is **${s.status}** (since ${formatTime(s.since)}). ${view.slots.length} of ${view.maxParallel} slots busy, ${view.queue.length} queued, ${view.review.length} in review, ${view.needsHuman.length} need a human, ${view.blocked.length + view.failed.length + view.timeouts.length} blocked/failed/timed out.`;
  const awaiting = view.awaiting;
  if (awaiting?.command === "start") head += " It waits for `/autopilot start`.";
  else if (awaiting?.next)
    head += ` Semi-auto: it waits for \`/autopilot run #${awaiting.next.issue}\` (next by score).`;
  if (issue === null) return head;
  const status = statusOf(ctx, issue);
  const lists: [string, ReasonLine[]][] = [
    ["in review", view.review],
    ["waiting for a human", view.needsHuman],
    ["blocked", view.blocked],
    ["timed out", view.timeouts],
    ["failed", view.failed],
    ["waiting", view.waiting],
    ["not in the pool", view.notInPool],
  ];
  let detail =
    status === null
      ? (epicRefusal(ctx, issue)?.replace(/^#\d+ /, "") ?? "is not an Autopilot task")
      : `is **${status}**`;
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
