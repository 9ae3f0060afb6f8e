/** The phase that takes answers to needs-human questions: the task goes back to the queue. */
import { commentAuthority, parseCommand } from "../commands.js";
import { transitionTask } from "../task.js";
import { taskIssueFor } from "./comment-commands.js";
import { note, type Reconciling, taskRecord } from "./context.js";
import { react } from "./messages.js";
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
  const comments = [...ctx.snapshot.comments].sort((a, b) => a.id - b.id);
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open" || statusOf(ctx, n) !== "needs-human") continue;
    const record = ctx.state.tasks[n];
    const askedAt = record?.since ?? ctx.results.get(n)?.updatedAt ?? null;
    const answer = comments.find((c) => {
      if (c.issue === trackingNumber || taskIssueFor(ctx, c.issue) !== n) return false;
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
