/**
 * The open tasks as this reconcile leaves them: every open issue with a state label other than the exclude
 * label, with its status and its record. What the dashboard's statistics (view-statistics.ts) and the session
 * report (commands/report-reply.ts) count, so the two count the same tasks.
 */
import type { TaskRecord } from "../dashboard/index.js";
import type { IssueNode } from "../world.js";
import type { TaskStatus } from "../tasks/task.js";
import type { Reconciling } from "./context.js";
import { statusOf } from "./task-labels.js";

interface OpenTask {
  n: number;
  issue: IssueNode;
  /** An open issue is never `done` (that is a closed one) and a skipped one is not counted. */
  status: Exclude<TaskStatus, "skipped" | "done">;
  record: TaskRecord | undefined;
}

export function* openTasks(ctx: Reconciling): Generator<OpenTask> {
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open") continue;
    const status = statusOf(ctx, n);
    if (status === null || status === "skipped" || status === "done") continue;
    yield { n, issue, status, record: ctx.state.tasks[n] };
  }
}
