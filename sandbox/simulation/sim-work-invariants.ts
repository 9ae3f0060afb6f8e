/**
 * The simulation's invariants on what work is given and what is kept: a task runs only once what it depends on
 * is done, an epic is never run itself, the agent is given only words a writer said or approved, and no commit a
 * worker reported pushed is lost. Each a named function over the store and what the simulation recorded, as in
 * sim-invariants.ts.
 */
import type { SimObservation, Violation } from "./sim-invariants.js";
import type { SimDispatch } from "./sim-worker.js";
import { commandOf, onTask } from "./sim-command-invariants.js";

const READY = "autopilot:ready";

function violation(o: SimObservation, invariant: string, detail: string): Violation {
  return { invariant, atSeconds: o.elapsed(), detail };
}

/**
 * A task is dispatched only once everything it depends on is closed: its `Depends on #N` lines and GitHub's
 * native "blocked by" relations (src/core/tasks/ready-tasks.ts: "every dependency closed"). A task in a cycle
 * never is. Checked at each dispatch.
 */
export function dependenciesDoneBeforeDispatch(o: SimObservation, dispatch: SimDispatch): Violation[] {
  const issue = o.store.getIssue(o.repo, dispatch.issue);
  if (!issue) return [];
  const deps = new Set([
    ...[...(issue.body ?? "").matchAll(/Depends on #(\d+)/g)].map((m) => Number(m[1])),
    ...issue.blockedBy,
  ]);
  const open = [...deps].filter((d) => o.store.getIssue(o.repo, d)?.state !== "closed");
  return open.length
    ? [
        violation(
          o,
          "dependenciesDoneBeforeDispatch",
          `#${dispatch.issue} dispatched while ${open.map((d) => `#${d}`).join(", ")} it depends on is open`,
        ),
      ]
    : [];
}

/**
 * An epic (an issue with native sub-issues) is never a task: its sub-issues are worked on, not it
 * (src/core/tasks/epics.ts). Checked at each dispatch.
 */
export function noEpicDispatched(o: SimObservation, dispatch: SimDispatch): Violation[] {
  const issue = o.store.getIssue(o.repo, dispatch.issue);
  if (!issue || issue.subIssues.length === 0) return [];
  return [
    violation(
      o,
      "noEpicDispatched",
      `epic #${dispatch.issue} dispatched (sub-issues ${issue.subIssues.map((n) => `#${n}`).join(", ")})`,
    ),
  ];
}

/**
 * When a writer approved an issue as a task: the times a writer set the ready label on it, or on an epic above
 * it whose label pooled it (src/core/reconcile/epic-pooling.ts labels a pooled sub-issue as Autopilot).
 */
function writerApprovals(o: SimObservation, number: number): number[] {
  const times: number[] = [];
  const seen = new Set<number>();
  for (let n: number | null = number; n !== null && !seen.has(n); ) {
    seen.add(n);
    const issue = o.store.getIssue(o.repo, n);
    if (!issue) break;
    for (const e of issue.events)
      if (e.event === "labeled" && e.label?.name === READY && o.writers.has(e.actor.toLowerCase()))
        times.push(e.createdAt.getTime());
    n = issue.parent;
  }
  return times;
}

/**
 * What the agent is given holds no word of a non-writer that no writer approved (issue 35: "nothing a non-writer
 * said … reached a prompt"): the task's text as the worker read it was written by a writer, or a writer approved
 * it (a ready label on the task, or on its epic) after it was last edited; and no comment of a non-writer is in
 * it. Checked with each job's first prompt, built by the product's prompt builder (sim-worker.ts).
 */
export function promptHoldsOnlyWritersWords(
  o: SimObservation,
  dispatch: SimDispatch,
  prompt: string,
): Violation[] {
  const issue = o.store.getIssue(o.repo, dispatch.issue);
  if (!issue) return [];
  const out: Violation[] = [];
  const lastEdit = issue.contentEdits?.at(-1);
  const author = lastEdit?.editor ?? issue.user;
  const writtenAt = (lastEdit?.at ?? issue.createdAt).getTime();
  const approved = writerApprovals(o, dispatch.issue).some((t) => t >= writtenAt);
  if (!o.writers.has(author.toLowerCase()) && !approved)
    out.push(
      violation(
        o,
        "promptHoldsOnlyWritersWords",
        `#${dispatch.issue}'s text, last written by ${author}, reached the agent (run ${dispatch.runId}) with no writer's approval since`,
      ),
    );
  const writersSaid = new Set(
    o.store
      .listComments(o.repo)
      .filter((c) => o.writers.has(c.user.toLowerCase()))
      .map((c) => c.body.trim()),
  );
  for (const c of o.store.listComments(o.repo, dispatch.issue)) {
    const body = c.body.trim();
    if (o.writers.has(c.user.toLowerCase()) || c.user.toLowerCase() === o.bot.toLowerCase()) continue;
    if (body.length < 8 || writersSaid.has(body) || !prompt.includes(body)) continue;
    out.push(
      violation(
        o,
        "promptHoldsOnlyWritersWords",
        `${c.user}'s comment ${c.id} on #${dispatch.issue} reached the agent (run ${dispatch.runId})`,
      ),
    );
  }
  return out;
}

/**
 * No commit lost: once the world has run its course, every commit a worker reported pushed is reachable from a
 * branch (its task branch) or was merged into the default branch. The store keeps no commit graph without its
 * git backend, so the graph is the pushes' record: a fast-forward push's new head has the old one as parent, and
 * a merged pull request's merge commit has the base and the pull request's head (a squash merge carries the
 * head's changes, so its commits are counted as merged). A writer's rollback after a push lets that push go.
 */
export async function noCommitLost(o: SimObservation): Promise<Violation[]> {
  const parents = new Map<string, string[]>();
  const link = (child: string, parent: string) => parents.set(child, [...(parents.get(child) ?? []), parent]);
  for (const push of o.store.listPushes(o.repo))
    if (!push.created && !push.deleted && !push.forced) link(push.after, push.before);
  for (const pull of o.store.listPulls(o.repo))
    if (pull.pull.merged && pull.pull.mergeCommitSha) {
      link(pull.pull.mergeCommitSha, pull.pull.base.sha);
      link(pull.pull.mergeCommitSha, pull.pull.head.sha);
    }
  const reachable = new Set<string>();
  const queue = (await o.store.listRefs(o.repo))
    .filter((r) => r.ref.startsWith("refs/heads/"))
    .map((r) => r.sha);
  // A best-of candidate's pull request closed once the round chose keeps its commits, and GitHub restores its
  // branch on request (docs/CONTROLLER.md "Best of N"): its head is not lost with its deleted branch.
  for (const pull of o.store.listPulls(o.repo))
    if (pull.state === "closed" && /^autopilot\/issue-\d+-candidate-\d$/.test(pull.pull.head.ref))
      queue.push(pull.pull.head.sha);
  while (queue.length) {
    const sha = queue.pop()!;
    if (reachable.has(sha)) continue;
    reachable.add(sha);
    queue.push(...(parents.get(sha) ?? []));
  }
  // A writer's `/autopilot rollback` of a task not merged closes its PR and deletes its branch on purpose
  // (src/core/reconcile/commands/rollback.ts): what was pushed before it is let go.
  const rolledBack = (d: SimDispatch) =>
    o.store
      .listComments(o.repo)
      .some(
        (c) =>
          o.writers.has(c.user.toLowerCase()) &&
          c.createdAt.getTime() >= d.at &&
          commandOf(c.body, ["rollback"], d.issue, onTask(o, c.issueNumber, d.issue)),
      );
  const out: Violation[] = [];
  for (const d of o.dispatches)
    for (const sha of d.pushed)
      if (!reachable.has(sha) && !rolledBack(d))
        out.push(
          violation(
            o,
            "noCommitLost",
            `${sha.slice(0, 7)}, pushed by run ${d.runId} for #${d.issue}, is on no branch and was never merged`,
          ),
        );
  // A person's own commit on a task branch (a fix of theirs) is theirs to lose, never Autopilot's to delete.
  for (const push of o.store.listPushes(o.repo)) {
    if (push.deleted || push.forced || !push.ref.startsWith("refs/heads/autopilot/")) continue;
    if (push.pusher.toLowerCase() === o.bot.toLowerCase() || reachable.has(push.after)) continue;
    out.push(
      violation(
        o,
        "noCommitLost",
        `${push.after.slice(0, 7)}, pushed by ${push.pusher} to ${push.ref.slice("refs/heads/".length)}, is on no branch and was never merged`,
      ),
    );
  }
  return out;
}
