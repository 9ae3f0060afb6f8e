/**
 * The stale-branch sweep (`cleanup.staleBranchDays`): the branch of a failed, timed-out or skipped task is
 * deleted (and its open PR closed) once nothing was pushed to it for that many days — and only when GitHub's
 * record of who pushed to it names Autopilot's own account for every push. A branch a person pushed to (a fix
 * of their own, work they mean to pick up) is never deleted by the sweep; `/autopilot cleanup #N` is the
 * person's way to do that. The record is GitHub's "List repository activities" (the account whose token moved
 * the ref, compared by account id as src/core/gates/pull-trust.ts compares PR authors), read by the controller
 * itself (src/github/snapshot/branch-activity.ts): commit author fields are whatever the pusher wrote, so they prove
 * nothing. An incomplete or unreadable record keeps the branch. Only branches the snapshot lists (with the commit
 * each is at) are looked at, and a branch is deleted only while it is still at that commit: a push between the
 * snapshot and the deletion keeps it.
 */
import type { AutopilotConfig } from "../../config/index.js";
import { taskBranchName } from "../../contract.js";
import type { BranchActivity, IssueNode, WorldSnapshot } from "../../world.js";
import { note, type Reconciling, taskBranch } from "../context.js";
import { statusOf } from "../task-labels.js";
import { pullsFor } from "./task-pulls.js";
import { counted } from "../../text/plural.js";

const SWEPT = new Set(["failed", "timeout", "skipped"]);

/**
 * The task branches src/github reads the record of: the existing branches (`taskBranches`) of open issues labeled
 * failed, timed out or excluded, when the sweep is on, oldest tasks first. Labels only: the snapshot asks before
 * the reconcile decides anything.
 */
export function sweepCandidates(
  world: Pick<WorldSnapshot, "issues" | "taskBranches">,
  config: Pick<AutopilotConfig, "cleanup" | "labels" | "branchPrefix">,
  /**
   * When each task entered its off-ramp (the state's `since`), and now: a branch is pushed to before its task
   * ends, so one that ended less than the configured days ago is not read yet (each read is a request).
   */
  ended: { since: (n: number) => string | undefined; nowMs: number },
): string[] {
  const days = config.cleanup.staleBranchDays;
  if (days === "off") return [];
  const L = config.labels;
  const wanted = [L.failed, L.timeout, L.exclude].map((l) => l.toLowerCase());
  const old = (n: number) => {
    const since = Date.parse(ended.since(n) ?? "");
    return Number.isNaN(since) || ended.nowMs - since >= days * 86_400_000;
  };
  const swept = (i: IssueNode) =>
    i.state === "open" &&
    !i.isPullRequest &&
    i.labels.some((l) => wanted.includes(l.toLowerCase())) &&
    old(i.number);
  const existing = world.taskBranches ?? {};
  return world.issues
    .filter(swept)
    .sort((a, b) => a.number - b.number)
    .map((i) => taskBranchName(config.branchPrefix, i.number))
    .filter((b) => existing[b] !== undefined);
}

type SweepVerdict =
  | { delete: true }
  | { delete: false; why: "unread" | "no-branch" | "incomplete" | "person-pushed" | "recent" };

/** Whether one branch goes, from its record (pure; the reasons it stays are for tests and the log). */
export function sweepVerdict(input: {
  activity: BranchActivity | undefined;
  botId: number | null | undefined;
  staleDays: number;
  nowMs: number;
}): SweepVerdict {
  const { activity } = input;
  if (!activity) return { delete: false, why: "unread" };
  const newest = activity.entries[0];
  if (!newest || newest.type === "branch_deletion") return { delete: false, why: "no-branch" };
  if (!activity.complete) return { delete: false, why: "incomplete" };
  if (input.botId === null || input.botId === undefined) return { delete: false, why: "person-pushed" };
  if (activity.entries.some((e) => e.actorId === null || e.actorId !== input.botId))
    return { delete: false, why: "person-pushed" };
  const age = input.nowMs - Date.parse(newest.at);
  if (!(age >= input.staleDays * 86_400_000)) return { delete: false, why: "recent" };
  return { delete: true };
}

/**
 * When a branch the sweep keeps for now may go: once it is stale (its newest push `days` old), or, not read yet,
 * once its task has been ended that long (the snapshot reads it from then: sweepCandidates). Null: nothing but a
 * person can change it (someone else pushed, the record is incomplete, the branch is gone).
 */
function sweepDueAt(
  ctx: Reconciling,
  n: number,
  why: Exclude<SweepVerdict, { delete: true }>["why"],
  days: number,
  activity: BranchActivity | undefined,
): number | null {
  const after = (iso: string | undefined) => {
    const at = Date.parse(iso ?? "");
    return Number.isNaN(at) ? ctx.nowMs : Math.max(ctx.nowMs, at + days * 86_400_000);
  };
  if (why === "recent") return after(activity?.entries[0]?.at);
  if (why === "unread") return after(ctx.state.tasks[n]?.since);
  return null;
}

/** The phase: deletes the stale branches the record allows, with one comment on each task saying so. */
export function sweepStaleBranches(ctx: Reconciling): void {
  const days = ctx.config.cleanup.staleBranchDays;
  if (days === "off" || ctx.input.configHeld) return;
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open") continue;
    const status = statusOf(ctx, n);
    if (status === null || !SWEPT.has(status)) continue;
    const branch = taskBranch(ctx, n);
    // Not listed: gone already, or not known to exist (then it is not read either).
    const oid = ctx.snapshot.taskBranches?.[branch];
    if (!oid) continue;
    const verdict = sweepVerdict({
      activity: ctx.snapshot.branchActivity?.[branch],
      botId: ctx.snapshot.botId,
      staleDays: days,
      nowMs: ctx.nowMs,
    });
    if (!verdict.delete) {
      const due = sweepDueAt(ctx, n, verdict.why, days, ctx.snapshot.branchActivity?.[branch]);
      if (due !== null) ctx.wakes.push(due);
      if (verdict.why === "person-pushed" || verdict.why === "incomplete")
        note(
          ctx,
          `#${n}: ${branch} kept: ${verdict.why === "person-pushed" ? "someone other than Autopilot pushed to it" : "GitHub's record of its pushes is longer than one page"}`,
        );
      continue;
    }
    // The branch goes first, on condition; its PR is closed and the task told only once it went.
    ctx.effects.push({ type: "deleteBranch", branch, expectOid: oid });
    const open = pullsFor(ctx, n).filter((p) => p.state === "open");
    for (const pr of open)
      ctx.effects.push({ type: "closePull", pr: pr.number, issue: n, afterDeleting: branch });
    const newest = ctx.snapshot.branchActivity?.[branch]?.entries[0]?.at ?? "";
    ctx.effects.push({
      type: "comment",
      afterDeleting: branch,
      issue: n,
      body: `Deleted \`${branch}\`${open.length > 0 ? ` and closed ${open.map((p) => `#${p.number}`).join(", ")}` : ""}: nothing was pushed to it for ${counted(days, "day")} and only Autopilot had pushed to it (\`cleanup.staleBranchDays\`). The task stays ${status}; \`/autopilot retry #${n}\` starts it again from the default branch.`,
      key: `swept-${n}-${newest.replace(/[^0-9TZ]/g, "")}`,
    });
    note(ctx, `#${n}: stale ${branch} deleted (only Autopilot pushed, last push ${newest})`);
  }
}
