/**
 * The epics phase (src/core/tasks/epics.ts): an open issue with sub-issues that carries the ready label is an
 * epic, never a task. A writer's ready label on it pools its open sub-issues that are not tasks yet: each gets the
 * ready label from Autopilot, as if that writer had given it, and its text is judged from the moment of the
 * parent's label (text-approval.ts asks `epicApprovedAt`), so an outsider's edit of a sub-issue since takes it out
 * as it would a task labeled directly. The pooling happens once per label: a sub-issue added to the epic later is
 * not pooled until a writer labels it, or labels the parent again (a new label is a new approval of what the
 * epic holds then). The label approves only the sub-issues linked before it, or linked since by a writer
 * (src/core/tasks/sub-issue-links.ts): an issue a triager links after it was not the writer's choice. One comment
 * on the parent keeps a checklist of the sub-issues (with why one was not pooled), written only when it changes;
 * when every sub-issue is closed the parent is closed (`epics.closeParent`).
 *
 * It runs after the pool: a sub-issue pooled now is known only by its number, title and state (the snapshot reads
 * the text of labeled issues), so it is dispatched from the next reconcile on, with its text read and judged.
 */
import type { ReasonLine } from "../dashboard/index.js";
import { hasWriteAccess, sameLogin } from "../tasks/commands.js";
import {
  EPIC_PROGRESS_MARKER,
  type EpicItem,
  epicDone,
  epicSummary,
  isEpicParent,
  itemStateOf,
  renderEpicProgress,
  subIssuesToPool,
} from "../tasks/epics.js";
import { judgeSubIssueLinks, type LinkRefusal, linkRefusalText } from "../tasks/sub-issue-links.js";
import { changeHash } from "../text/change-hash.js";
import { taskStatusFromLabels } from "../tasks/task.js";
import { quietLogin } from "../text/markdown.js";
import { note, type Reconciling, taskRecord } from "./context.js";
import { setStatus, statusOf } from "./task-labels.js";
import { pullsFor } from "./pulls/task-pulls.js";

type EpicRecord = NonNullable<Reconciling["state"]["epics"]>[string];

/** What the pool phase found, as this phase reads it. */
interface PoolLines {
  ranked: readonly { issue: number }[];
  waits: readonly ReasonLine[];
  notInPool: ReasonLine[];
}

/** The most sub-issues one epic records as pooled (the snapshot reads the first 50 of a parent). */
const MAX_POOLED = 50;

/**
 * What a command about issue `n` answers when `n` is an epic's parent: where its tasks are (a command on the parent
 * does nothing). Null when `n` is no epic.
 */
export function epicRefusal(ctx: Reconciling, n: number): string | null {
  return isEpic(ctx, n)
    ? `#${n} is an epic: its sub-issues are the tasks (their progress is in Autopilot's checklist comment on #${n}), so give the command on a sub-issue`
    : null;
}

/** Whether issue `n` is an epic (labels as this reconcile leaves them). */
function isEpic(ctx: Reconciling, n: number): boolean {
  const issue = ctx.issues.get(n);
  if (!issue) return false;
  const labels = ctx.labels.get(n) ?? issue.labels;
  return isEpicParent(issue, taskStatusFromLabels({ state: issue.state, labels }, ctx.config.labels));
}

/**
 * For a sub-issue Autopilot labeled ready because an epic pooled it, and whose text is not frozen yet: the time
 * of the writer's label on the parent, from which edits of its text count. Null for every other task.
 */
export function epicApprovedAt(ctx: Reconciling, n: number): string | null {
  if (!sameLogin(ctx.readyBy.get(n) ?? null, ctx.snapshot.botLogin)) return null;
  for (const epic of Object.values(ctx.state.epics ?? {})) if (epic.pooled.includes(n)) return epic.at;
  return null;
}

/**
 * A sub-issue an epic pooled whose text this snapshot did not read (it was read as the parent's sub-issue only,
 * before its label showed): the pool waits for a read of it, since its text is what a dispatch freezes.
 */
export function awaitsText(ctx: Reconciling, n: number): boolean {
  return ctx.issues.get(n)?.edits === undefined && epicApprovedAt(ctx, n) !== null;
}

/**
 * The writer's approval of epic `p`: their ready label (`at` null when its time is unknown). A pooled sub-issue
 * that has sub-issues of its own carries Autopilot's label, not a writer's: it pools nothing until a writer
 * labels it, since anyone with triage access can add sub-issues to it after the writer's label on its parent.
 */
function approvalOf(ctx: Reconciling, p: number): { at: string | null; by: string } | null {
  const issue = ctx.issues.get(p)!;
  const by = ctx.readyBy.get(p) ?? null;
  if (by && !sameLogin(by, ctx.snapshot.botLogin) && hasWriteAccess(ctx.snapshot.permissions, by))
    return { at: issue.readyLabeledAt ?? null, by };
  return null;
}

/** Pools, reports and closes every epic; returns the dashboard's lines for them. */
export function processEpics(ctx: Reconciling, pool: PoolLines): ReasonLine[] {
  const { state } = ctx;
  const lines: ReasonLine[] = [];
  const epics = state.epics ?? {};
  // An epic whose parent is closed, gone or no longer labeled ready is no longer followed (its pooled
  // sub-issues stay tasks: their own labels carry them).
  for (const key of Object.keys(epics)) if (!isEpic(ctx, Number(key))) delete epics[key];
  for (const [p, issue] of [...ctx.issues].sort((a, b) => a[0] - b[0])) {
    if (!isEpic(ctx, p)) continue;
    const approval = approvalOf(ctx, p);
    let epic = epics[p];
    if (!approval && !epic) {
      const by = ctx.readyBy.get(p) ?? null;
      const ready = `\`${ctx.config.labels.ready}\``;
      const why = !by
        ? `who added the ${ready} label is unknown`
        : sameLogin(by, ctx.snapshot.botLogin)
          ? `an epic inside an epic, labeled by Autopilot; a writer's own ${ready} label (removed and added again) pools its sub-issues`
          : `the ${ready} label was added by ${quietLogin(by)}, who has no write access`;
      pool.notInPool.push({
        issue: p,
        title: issue.title,
        reason: `an epic: ${why}, so its sub-issues are not pooled`,
      });
      continue;
    }
    // Pooled once per label: again only for a newer one (a label of unknown time pools only a new epic).
    const newer = !!approval?.at && !!epic && Date.parse(approval.at) > Date.parse(epic.at);
    if (approval && (!epic || newer)) {
      epic = poolSubIssues(ctx, p, approval, epic?.pooled ?? []);
      epics[p] = epic;
    }
    if (!epic) continue;
    const items = epicItems(ctx, p, epic, pool);
    const done = epicDone(items);
    const closeParent = ctx.config.epics.closeParent;
    const body = renderEpicProgress({
      items,
      by: epic.by,
      readyLabel: ctx.config.labels.ready,
      closeParent,
      done,
    });
    const digest = changeHash(body);
    if (epic.comment !== digest) {
      ctx.effects.push({ type: "progressComment", issue: p, marker: EPIC_PROGRESS_MARKER, body });
      epic.comment = digest;
    }
    if (done && closeParent) {
      ctx.effects.push({ type: "closeIssue", issue: p, reason: "completed" });
      note(ctx, `#${p}: every sub-issue of the epic is done; closing it`);
    }
    lines.push({ issue: p, title: issue.title, reason: epicSummary(items) });
  }
  // The state carries the key only while there are epics (a repository without any keeps its state as it was).
  if (Object.keys(epics).length > 0) state.epics = epics;
  else delete state.epics;
  return lines;
}

/**
 * Gives the open sub-issues that are not tasks the ready label, approved by the writer of the parent's: those
 * linked before the label, or since by a writer (`approval.at` null: the label's time is unknown, and only a
 * writer's links count).
 */
function poolSubIssues(
  ctx: Reconciling,
  p: number,
  approval: { at: string | null; by: string },
  earlier: readonly number[],
): EpicRecord {
  const issue = ctx.issues.get(p)!;
  const candidates = subIssuesToPool(issue.subIssues ?? [], (n) => {
    const child = ctx.issues.get(n);
    if (!child) return null;
    return { open: child.state === "open", status: statusOf(ctx, n), epic: isEpic(ctx, n) };
  });
  const { approved: chosen, refused } = judgeSubIssueLinks({
    candidates,
    links: issue.subIssueLinks ?? [],
    labeledAt: approval.at,
    isWriter: (login) =>
      !sameLogin(login, ctx.snapshot.botLogin) && hasWriteAccess(ctx.snapshot.permissions, login),
  });
  for (const n of chosen) {
    setStatus(ctx, n, "ready");
    taskRecord(ctx, n).approvedBy = approval.by;
  }
  // Sub-issues already carrying Autopilot's ready label were pooled by this epic before (a state rebuilt from
  // GitHub lost the record): they stay judged from the epic's approval.
  const carried = (issue.subIssues ?? []).filter(
    (n) => sameLogin(ctx.readyBy.get(n) ?? null, ctx.snapshot.botLogin) && statusOf(ctx, n) !== null,
  );
  const pooled = [...new Set([...earlier, ...carried, ...chosen])].slice(0, MAX_POOLED);
  const epic: EpicRecord = { at: approval.at ?? ctx.now.toISOString(), by: approval.by, pooled };
  if (refused.length > 0) epic.refused = refused.slice(0, MAX_POOLED);
  const held = refused.length
    ? `; not ${refused.map((r) => `#${r.issue}`).join(", ")} (how it was linked)`
    : "";
  note(
    ctx,
    `#${p}: epic labeled by ${approval.by}; pooled ${chosen.length ? chosen.map((n) => `#${n}`).join(", ") : "no sub-issue"}${held}`,
  );
  return epic;
}

/** Each sub-issue of epic `p`, in the parent's order, with where it stands after this reconcile. */
function epicItems(ctx: Reconciling, p: number, epic: EpicRecord, pool: PoolLines): EpicItem[] {
  const { pooled } = epic;
  const refusal = (n: number): LinkRefusal | undefined => epic.refused?.find((r) => r.issue === n);
  const queued = new Set(pool.ranked.map((t) => t.issue));
  const reasonIn = (list: readonly ReasonLine[], n: number) =>
    list.find((l) => l.issue === n)?.reason ?? null;
  const items: EpicItem[] = [];
  for (const n of ctx.issues.get(p)?.subIssues ?? []) {
    const child = ctx.issues.get(n);
    if (!child) continue;
    const record = ctx.state.tasks[n];
    const pr = prOf(ctx, n) ?? record?.pr ?? null;
    const base = { issue: n, title: child.title, ...(pr ? { pr } : {}) };
    if (child.state === "closed") {
      items.push({ ...base, state: child.stateReason === "not_planned" ? "closed" : "done" });
      continue;
    }
    const status = statusOf(ctx, n);
    if (status === null) {
      if (isEpic(ctx, n)) items.push({ ...base, state: "epic" });
      else if (pooled.includes(n))
        items.push({ ...base, state: "taken out", detail: record?.reason ?? null });
      else {
        const refused = refusal(n);
        const detail = refused ? linkRefusalText(refused, quietLogin) : "added after the epic's label";
        items.push({ ...base, state: "not pooled", detail });
      }
      continue;
    }
    if (status === "ready") {
      const outside = reasonIn(pool.notInPool, n);
      const waiting = queued.has(n) ? null : reasonIn(pool.waits, n);
      if (outside) items.push({ ...base, state: "not in the pool", detail: outside });
      else if (waiting) items.push({ ...base, state: "waiting", detail: waiting });
      else items.push({ ...base, state: "queued" });
      continue;
    }
    const state = itemStateOf(status);
    const offRamp =
      state === "blocked" || state === "needs a human" || state === "failed" || state === "timed out";
    items.push({ ...base, state, ...(offRamp ? { detail: record?.reason ?? null } : {}) });
  }
  return items;
}

/** The task's pull request: its newest trusted one that is merged or open (task-pulls.ts). */
function prOf(ctx: Reconciling, n: number): number | null {
  return pullsFor(ctx, n).find((pr) => pr.state !== "closed")?.number ?? null;
}
