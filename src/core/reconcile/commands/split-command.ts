/**
 * `/autopilot split #N`: a writer asks for issue N to be split into sub-issues.
 *
 * 1. The command (on the tracking issue, or on N itself, a task or not) records the split (`state.splits`) and
 *    puts N in the queue; its next dispatch is a splitting run (the `config` input's `plan: "split"`,
 *    `planOfDispatch` in plan-approval.ts): the agent reads the code and proposes sub-issues, which the worker
 *    posts in one comment (src/core/tasks/split-proposal.ts) before N waits in needs-human, exactly as the plan
 *    gate's planning run posts a plan.
 * 2. A writer's other comment on N is an answer (answers.ts): N goes back to the queue, and the next splitting
 *    run gets their words (fenced as data) and the proposal they answered. A non-writer's words never count.
 * 3. A writer's `/autopilot approve [#N]` while the proposal waits records its digest and asks the executor to
 *    create the sub-issues (`createSplitIssues`, src/github/execution/split-issues.ts, from Autopilot's own
 *    comment with that digest), each with the ready label and `Depends on` lines for the order, linked as native
 *    sub-issues of N, and N labeled ready: an epic. `processSplits` asks again on every reconcile until N is
 *    that epic (a lost answer or a restart between creations loses nothing and creates nothing twice), then
 *    records the epic as approved by that writer (src/core/reconcile/epic-pooling.ts takes it from there).
 */
import { sameLogin } from "../../tasks/commands.js";
import { splitItemOf } from "../../tasks/split-proposal.js";
import { postedBefore } from "../../tasks/task-plan.js";
import { labelForStatus } from "../../tasks/task.js";
import { isEpicParent } from "../../tasks/epics.js";
import { note, type Reconciling, taskRecord } from "../context.js";
import { setStatus, statusOf } from "../task-labels.js";
import { liveIssues } from "../runs/worker-runs.js";
import { incident } from "../messages.js";
import type { TaskCommandOutcome } from "./retry-skip.js";

type SplitRecord = NonNullable<Reconciling["state"]["splits"]>[string];

/**
 * How long a split of an issue Autopilot has not read yet is kept: the ready label it put on the issue shows it in
 * the next snapshot; an issue that never shows (closed, or a number that is no issue) is let go.
 */
const UNSEEN_MINUTES = 10;

/** How long an approved split's sub-issues are asked for before it goes to a person. */
const CREATION_HOURS = 1;

/** The split asked for issue `n`, if any. */
export function splitOf(ctx: Reconciling, n: number): SplitRecord | undefined {
  return ctx.state.splits?.[n];
}

export function splitIssue(ctx: Reconciling, n: number, actor: string): TaskCommandOutcome {
  const issue = ctx.issues.get(n);
  if (n === ctx.tracking?.number) return { ok: false, message: "The dashboard is not split." };
  if (ctx.snapshot.pulls.some((p) => p.number === n))
    return { ok: false, message: `#${n} is a pull request: only an issue is split.` };
  // An issue with no Autopilot label is not read (the snapshot reads the pool's labels): it gets the ready label,
  // and the splitting run starts once a read shows it open (`processSplits` waits for that, UNSEEN_MINUTES).
  if (issue && issue.state !== "open") return { ok: false, message: `#${n} is closed.` };
  if ((issue?.subIssues?.length ?? 0) > 0)
    return {
      ok: false,
      message: `#${n} has sub-issues already: label it \`${ctx.config.labels.ready}\` to work them as an epic.`,
    };
  const split = splitOf(ctx, n);
  if (split?.approved)
    return { ok: false, message: `#${n}'s split is approved already: its sub-issues are being created.` };
  const status = statusOf(ctx, n);
  if (liveIssues(ctx).has(n) || status === "in-progress")
    return {
      ok: false,
      message: `#${n} is in progress: split it once its worker has ended (\`/autopilot stop\` or wait).`,
    };
  if (status === "review")
    return { ok: false, message: `#${n} is in review: its pull request waits for the gates, not a split.` };
  ctx.state.splits ??= {};
  ctx.state.splits[n] = { by: actor.slice(0, 40), at: ctx.now.toISOString() };
  const record = taskRecord(ctx, n);
  // A plan of the plan gate, or an earlier proposal, is not what the splitting run revises.
  record.plan = undefined;
  record.result = "split asked";
  record.reason = `split asked by @${actor}`;
  record.since = undefined;
  record.waitUntil = undefined;
  setStatus(ctx, n, "ready");
  note(ctx, `#${n}: split asked by ${actor} → ready for a splitting run`);
  return {
    ok: true,
    message: `A splitting run proposes sub-issues of #${n} in a comment here; \`/autopilot approve #${n}\` then creates them. It starts in a free slot while the session runs${ctx.config.mode === "semi-auto" ? " (with `mode: semi-auto`, `/autopilot run #" + n + "` starts it)" : ""}.`,
  };
}

/**
 * `/autopilot approve` of a split's proposal: only while N needs a human right after its splitting run, whose
 * result (Autopilot's own marker) names the proposal's digest.
 */
export function approveSplit(
  ctx: Reconciling,
  n: number,
  actor: string,
  writtenAt: string,
): TaskCommandOutcome {
  const split = splitOf(ctx, n)!;
  if (split.approved)
    return { ok: false, message: `#${n}'s split is approved already (by @${split.approved.by}).` };
  const record = ctx.state.tasks[n];
  const result = ctx.results.get(n);
  const after =
    !!record?.planRun && record.planRun === record.dispatchId && statusOf(ctx, n) === "needs-human";
  const digest = after && result?.dispatchId === record.dispatchId ? (result?.plan?.digest ?? null) : null;
  if (!record || !digest)
    return {
      ok: false,
      message: `#${n} has no proposal of sub-issues waiting for approval now (a new one may be on its way): approve it once it is posted.`,
    };
  if (!postedBefore(result?.plan, writtenAt))
    return {
      ok: false,
      message: `#${n}'s proposal of sub-issues was revised after this approval was written: read the new one, then approve it.`,
    };
  const at = ctx.now.toISOString();
  split.approved = { digest, by: actor.slice(0, 40), at };
  record.plan = { digest, at, approvedBy: actor.slice(0, 40) };
  record.result = "approved";
  record.reason = `split approved by @${actor}: creating the sub-issues`;
  record.since = undefined;
  // What the creation leaves: the parent labeled ready (the settle overlay must not bring needs-human back).
  record.label = "ready";
  record.labelAt = at;
  ctx.offRamps.delete(n);
  ctx.effects.push(creationEffect(ctx, n, split));
  note(ctx, `#${n}: split ${digest.slice(0, 12)} approved by ${actor}; creating its sub-issues`);
  return {
    ok: true,
    message: `Approved: Autopilot creates the sub-issues as sub-issues of #${n}, each ready, and works them as an epic in the order of their dependencies.`,
  };
}

/** Whether issue `n` is a split's parent whose sub-issues are being created: never dispatched itself. */
export function splitBeingCreated(ctx: Reconciling, n: number): boolean {
  return !!splitOf(ctx, n)?.approved;
}

/**
 * The splits' phase, before the pool: an approved split whose parent is an epic now is recorded as that epic
 * (approved by the split's writer, pooling the sub-issues it created), and is done; one whose parent is not yet
 * asks for the creation again. A split whose issue closed, or that is no longer a task before its approval
 * (taken out, a label removed), is forgotten.
 */
export function processSplits(ctx: Reconciling): void {
  const splits = ctx.state.splits;
  if (!splits) return;
  for (const [key, split] of Object.entries(splits)) {
    const n = Number(key);
    const issue = ctx.issues.get(n);
    const unseen = !issue && !split.approved && ctx.nowMs - Date.parse(split.at) < UNSEEN_MINUTES * 60_000;
    if (unseen) continue;
    if (issue?.state !== "open") {
      delete splits[key];
      continue;
    }
    if (!split.approved) {
      if (statusOf(ctx, n) === null && !liveIssues(ctx).has(n)) delete splits[key];
      continue;
    }
    const labels = ctx.labels.get(n) ?? issue.labels;
    const readyLabel = ctx.config.labels.ready.toLowerCase();
    const ready = labels.some((l) => l.toLowerCase() === readyLabel);
    const epic =
      ready && isEpicParent(issue, "ready") && sameLogin(ctx.readyBy.get(n) ?? null, ctx.snapshot.botLogin);
    if (!epic && ctx.nowMs - Date.parse(split.approved.at) > CREATION_HOURS * 3_600_000) {
      giveUp(ctx, n);
      delete splits[key];
      continue;
    }
    if (!epic) {
      const asked = ctx.effects.some((e) => e.type === "createSplitIssues" && e.parent === n);
      if (!asked) ctx.effects.push(creationEffect(ctx, n, split));
      continue;
    }
    const approved = split.approved;
    const pooled = (issue.subIssues ?? []).filter(
      (s) => splitItemOf(ctx.issues.get(s)?.body, n, approved.digest) !== null,
    );
    ctx.state.epics ??= {};
    ctx.state.epics[n] = { at: approved.at, by: approved.by, pooled };
    delete splits[key];
    // The parent is an epic now, not a task.
    delete ctx.state.tasks[n];
    note(
      ctx,
      `#${n}: split into ${pooled.map((s) => `#${s}`).join(", ")}; an epic approved by ${approved.by}`,
    );
  }
  if (Object.keys(splits).length === 0) delete ctx.state.splits;
}

/**
 * The sub-issues were not all created in CREATION_HOURS (the proposal comment edited or deleted since the
 * approval, or GitHub refusing): the issue goes to a person, who can ask for a new proposal. What was created stays,
 * and a new approval of the same proposal finds it again by its markers.
 */
function giveUp(ctx: Reconciling, n: number): void {
  const why = `the approved sub-issues of #${n} were not all created within ${CREATION_HOURS} hour${CREATION_HOURS === 1 ? "" : "s"} (Autopilot's proposal comment edited or deleted, or GitHub refusing): \`/autopilot split #${n}\` asks for a new proposal`;
  const record = taskRecord(ctx, n);
  record.reason = why;
  record.plan = undefined;
  setStatus(ctx, n, "needs-human");
  incident(ctx, "split", why);
  note(ctx, `#${n}: ${why}`);
}

function creationEffect(ctx: Reconciling, n: number, split: SplitRecord) {
  const L = ctx.config.labels;
  const approved = split.approved!;
  const remove = (["in-progress", "review", "blocked", "needs-human", "timeout", "failed"] as const).map(
    (s) => labelForStatus(s, L),
  );
  return {
    type: "createSplitIssues" as const,
    parent: n,
    digest: approved.digest,
    approvedBy: approved.by,
    approvedAt: approved.at,
    ready: L.ready,
    remove: remove.filter((l): l is string => !!l),
  };
}
