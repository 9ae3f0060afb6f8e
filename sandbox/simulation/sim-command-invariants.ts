/**
 * The simulation's invariant on the commands that give a task another round (docs/CONTROLLER.md, the commands
 * table): `fix`, `follow-up` and `rollback` start work only on a writer's word. A named function over the store,
 * as in sim-invariants.ts.
 */
import { commentOfInstructionsMarker } from "../../src/core/contract.js";
import type { SimObservation, Violation } from "./sim-invariants.js";

/**
 * Once the world has run its course: every set of instructions Autopilot quoted for a worker (its comment with
 * the instructions marker, src/core/reconcile/commands/fix-follow-up.ts) names a writer's `fix` or `follow-up`
 * of that task, and every task issue Autopilot opened again (a follow-up's new attempt) had a writer's
 * `follow-up` or `rollback` of it before.
 */
export function commandWorkOnlyByWriters(o: SimObservation): Violation[] {
  const out: Violation[] = [];
  const fail = (detail: string) =>
    out.push({ invariant: "commandWorkOnlyByWriters", atSeconds: o.elapsed(), detail });
  const comments = o.store.listComments(o.repo);
  const isBot = (login: string) => login.toLowerCase() === o.bot.toLowerCase();
  for (const quote of comments) {
    if (!isBot(quote.user)) continue;
    const named = commentOfInstructionsMarker(quote.body);
    if (named === null) continue;
    const command = comments.find((c) => c.id === named);
    const verbs = ["fix", "follow-up"];
    if (
      !command ||
      !o.writers.has(command.user.toLowerCase()) ||
      !commandOf(command.body, verbs, quote.issueNumber, onTask(o, command.issueNumber, quote.issueNumber))
    )
      fail(
        `#${quote.issueNumber}: Autopilot quoted instructions of comment ${named}${command ? ` by ${command.user}` : ""}, not a writer's fix or follow-up of it`,
      );
  }
  for (const issue of o.store.listIssues(o.repo)) {
    if (issue.pull) continue;
    for (const reopen of issue.events) {
      if (reopen.event !== "reopened" || !isBot(reopen.actor)) continue;
      const asked = comments.some(
        (c) =>
          o.writers.has(c.user.toLowerCase()) &&
          c.createdAt.getTime() <= reopen.createdAt.getTime() &&
          commandOf(c.body, ["follow-up", "rollback"], issue.number, onTask(o, c.issueNumber, issue.number)),
      );
      if (!asked)
        fail(`#${issue.number} opened again by Autopilot with no writer's follow-up or rollback of it`);
    }
  }
  return out;
}

/**
 * Once the world has run its course: every revert pull request Autopilot opened (`/autopilot rollback` of a merged
 * task, src/core/reconcile/commands/rollback.ts; GitHub names its branch `revert-<PR>-<head branch>`) reverts a
 * merged pull request of Autopilot's own from a task branch, and a writer asked for that task's rollback before.
 * Nothing else is ever reverted: not a person's pull request, not one off the task branches, not on anyone else's
 * word.
 */
export function rollbackRevertsOnlyAutopilotsMerges(o: SimObservation): Violation[] {
  const out: Violation[] = [];
  const fail = (detail: string) =>
    out.push({ invariant: "rollbackRevertsOnlyAutopilotsMerges", atSeconds: o.elapsed(), detail });
  const isBot = (login: string) => login.toLowerCase() === o.bot.toLowerCase();
  const comments = o.store.listComments(o.repo);
  for (const revert of o.store.listPulls(o.repo)) {
    const named = /^revert-(\d+)-/.exec(revert.pull.head.ref);
    if (!named || !isBot(revert.user)) continue;
    const reverted = o.store.getIssue(o.repo, Number(named[1]));
    const task = /^autopilot\/issue-(\d+)$/.exec(reverted?.pull?.head.ref ?? "");
    if (!reverted?.pull?.merged || !task || !isBot(reverted.user)) {
      fail(`PR #${revert.number} reverts #${named[1]}, which is not a merged task PR of Autopilot's`);
      continue;
    }
    const issue = Number(task[1]);
    const asked = comments.some(
      (c) =>
        o.writers.has(c.user.toLowerCase()) &&
        c.createdAt.getTime() <= revert.createdAt.getTime() &&
        commandOf(c.body, ["rollback"], issue, onTask(o, c.issueNumber, issue)),
    );
    if (!asked)
      fail(
        `PR #${revert.number} reverts #${reverted.number} (task #${issue}) with no writer's rollback of it`,
      );
  }
  return out;
}

/** Whether a comment on issue or PR `on` is on task `issue` itself: the issue, or its task branch's PR. */
export function onTask(o: SimObservation, on: number, issue: number): boolean {
  if (on === issue) return true;
  return o.store.getIssue(o.repo, on)?.pull?.head.ref === `autopilot/issue-${issue}`;
}

/**
 * Whether a comment's body holds `/autopilot <verb> #N` at the start of a line, or `/autopilot <verb>` with no
 * number in a comment on the task itself (`onTask`: where the commands default to it).
 */
export function commandOf(body: string, verbs: string[], issue: number, onTask: boolean): boolean {
  for (const line of body.split("\n")) {
    const m = /^\/autopilot\s+(\S+)(?:\s+#(\d+))?/.exec(line.trim());
    if (!m || !verbs.includes(m[1]!)) continue;
    if (m[2] === undefined ? onTask : Number(m[2]) === issue) return true;
  }
  return false;
}
