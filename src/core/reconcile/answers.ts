/** The phase that takes answers to needs-human questions: the task goes back to the queue. */
import { commentAuthority, parseCommand } from "../tasks/commands.js";
import { transitionTask } from "../tasks/task.js";
import { taskIssueFor } from "./commands/comment-commands.js";
import { note, type Reconciling, taskRecord } from "./context.js";
import { react } from "./messages.js";
import type { CommentNode } from "../world.js";
import { setStatus, statusOf } from "./task-labels.js";

/**
 * A person with write access commented on a needs-human task after its question: back to the queue.
 * Level-triggered: every comment the snapshot holds on the task counts, not only the ones new to this
 * reconcile, so an answer that arrived before the worker's result was handled (the task still in progress
 * for the controller) is found once the task is needs-human. Without a known time of the question, only
 * comments new to this reconcile (`freshComments`) count (an old discussion is not an answer).
 */
export function processAnswers(ctx: Reconciling, freshComments: ReadonlySet<number>): void {
  const trackingNumber = ctx.tracking?.number ?? null;
  // Each comment's task, worked out once (not once per needs-human task), in comment order.
  let byTask: Map<number, CommentNode[]> | null = null;
  const commentsOf = (n: number) => {
    if (!byTask) {
      byTask = new Map();
      for (const c of [...ctx.snapshot.comments].sort((a, b) => a.id - b.id)) {
        const task = c.issue === trackingNumber ? null : taskIssueFor(ctx, c.issue);
        if (task === null) continue;
        const list = byTask.get(task);
        if (list) list.push(c);
        else byTask.set(task, [c]);
      }
    }
    return byTask.get(n) ?? [];
  };
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open" || statusOf(ctx, n) !== "needs-human") continue;
    const record = ctx.state.tasks[n];
    const askedAt = record?.since ?? ctx.results.get(n)?.updatedAt ?? null;
    const answer = commentsOf(n).find((c) => {
      if (askedAt ? Date.parse(c.createdAt) <= Date.parse(askedAt) : !freshComments.has(c.id)) return false;
      if (!commentAuthority(c, ctx.snapshot.botLogin, ctx.snapshot.permissions).authorized) return false;
      return parseCommand(c.body, { issue: n, trackingIssue: trackingNumber }) === null;
    });
    if (!answer) continue;
    const t = transitionTask("needs-human", { type: "unblock" });
    if ("refused" in t) continue;
    const login = answer.author ?? "someone";
    const r = taskRecord(ctx, n);
    r.result = "answered";
    r.reason = `answered by @${login}`;
    r.since = undefined;
    setStatus(ctx, n, "ready");
    if (!answer.acknowledged) react(ctx, answer.id, "+1");
    note(ctx, `#${n}: answered by ${login}; back in the queue`);
  }
}
