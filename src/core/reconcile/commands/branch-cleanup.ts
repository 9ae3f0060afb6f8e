/**
 * `/autopilot cleanup #N`: a failed, timed-out or skipped task's branch is deleted and its open PR closed; the
 * task keeps its state (a later `/autopilot retry #N` starts from the default branch). A running task, or one
 * in review or waiting on people, still needs its branch, so it is refused.
 */
import { epicRefusal } from "../epic-pooling.js";
import { note, type Reconciling, taskBranch } from "../context.js";
import type { TaskCommandOutcome } from "./retry-skip.js";
import { statusOf } from "../task-labels.js";
import { pullsFor } from "../pulls/task-pulls.js";

const CLEANABLE = ["failed", "timeout", "skipped"] as const;

export function cleanupTask(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  const issue = ctx.issues.get(n);
  if (!issue) return { ok: false, message: `#${n} is not an open issue Autopilot can see.` };
  const status = statusOf(ctx, n);
  if (status === null)
    return { ok: false, message: epicRefusal(ctx, n)?.concat(".") ?? `#${n} is not an Autopilot task.` };
  if (!(CLEANABLE as readonly string[]).includes(status))
    return {
      ok: false,
      message: `Cannot clean up #${n}: it is ${status}, and only failed, timed-out and skipped tasks' branches are cleaned up. To throw its work away and start over, use \`/autopilot rollback #${n}\`.`,
    };
  const branch = taskBranch(ctx, n);
  const open = pullsFor(ctx, n).filter((p) => p.state === "open");
  for (const pr of open) ctx.effects.push({ type: "closePull", pr: pr.number, issue: n });
  ctx.effects.push({ type: "deleteBranch", branch });
  note(ctx, `#${n}: cleanup by ${actor}: ${branch} deleted, ${open.length} PR(s) closed`);
  const closed = open.length > 0 ? ` and closed ${open.map((p) => `#${p.number}`).join(", ")}` : "";
  return {
    ok: true,
    message: `Cleaned up #${n}: deleted \`${branch}\`${closed}. It stays ${status}; \`/autopilot retry #${n}\` starts it again from the default branch.`,
  };
}
