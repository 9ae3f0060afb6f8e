/**
 * Whose words count: the text a writer approved is frozen at dispatch and handed to the worker
 * (`task-digest`), which refuses any other. The phase runs before the workers and the pool, so a task whose
 * text changed is neither dispatched nor merged.
 */
import { hasWriteAccess } from "../tasks/commands.js";
import type { Effect } from "../effects.js";
import { quietLogin } from "../text/markdown.js";
import { judgeTaskText, lastEditAt, taskDigest, textChangedComment } from "../tasks/task-text.js";
import { note, type Reconciling, taskRecord } from "./context.js";
import { incidentOnce } from "./messages.js";
import { clearStateLabels, statusOf } from "./task-labels.js";
import { cancelRun, liveRunsOf } from "./runs/worker-runs.js";
import { epicApprovedAt } from "./epic-pooling.js";

/** Freezes the approved text (when not yet frozen) and hands its digest to the dispatch. */
export function freezeText(
  ctx: Reconciling,
  n: number,
  effect: Extract<Effect, { type: "dispatchWorker" }>,
): void {
  const issue = ctx.issues.get(n);
  if (!issue) return;
  const record = taskRecord(ctx, n);
  record.text ??= {
    digest: taskDigest(issue.title, issue.body),
    since: lastEditAt(issue.edits ?? [], issue.readyLabeledAt ?? ctx.now.toISOString()),
  };
  effect.inputs = { ...(effect.inputs ?? {}), "task-digest": record.text.digest };
}

/**
 * Judges every open task's title and body against what a writer approved (src/core/tasks/task-text.ts): every
 * edit since by a writer is approved again; any other change takes the task out until a writer labels it.
 */
export function processTaskText(ctx: Reconciling): void {
  const isWriter = (login: string) => hasWriteAccess(ctx.snapshot.permissions, login);
  for (const [n, issue] of ctx.issues) {
    if (issue.state !== "open" || issue.edits === undefined) continue;
    const status = statusOf(ctx, n);
    if (status === null || status === "skipped" || status === "done") continue;
    const record = ctx.state.tasks[n];
    const readyBy = issue.readyLabeledBy ?? null;
    const relabeled =
      !!issue.readyLabeledAt &&
      !!readyBy &&
      isWriter(readyBy) &&
      (!record?.text || Date.parse(issue.readyLabeledAt) > Date.parse(record.text.since));
    // A writer's new ready label approves the text as it was then, whatever was frozen before.
    // A follow-up of a merged task (fix-follow-up.ts) has no frozen text yet: every edit since its merged PR was
    // opened is judged, so an outsider's edit of the closed issue is not frozen with the new attempt.
    const frozen =
      record?.text && !relabeled
        ? record.text
        : record?.followUp && !relabeled
          ? { digest: null, since: record.followUp.since }
          : {
              digest: null,
              // A sub-issue an epic pooled was approved by the writer's label on its parent (epic-pooling.ts).
              since: epicApprovedAt(ctx, n) ?? issue.readyLabeledAt ?? record?.text?.since ?? null,
            };
    const verdict = judgeTaskText({
      title: issue.title,
      body: issue.body,
      frozen,
      edits: issue.edits,
      isWriter,
    });
    if (verdict.kind === "refreeze") {
      taskRecord(ctx, n).text = verdict.frozen;
      note(ctx, `#${n}: the task text was edited by a writer; the new text is approved`);
    } else if (verdict.kind === "unchanged" && relabeled && record?.text) {
      record.text = {
        digest: taskDigest(issue.title, issue.body),
        since: lastEditAt(issue.edits, issue.readyLabeledAt!),
      };
    } else if (verdict.kind === "takeOut") {
      takeOutChangedText(ctx, n, verdict.editors, verdict.sameSecond === true);
    }
  }
}

function takeOutChangedText(
  ctx: Reconciling,
  n: number,
  editors: (string | null)[],
  sameSecond: boolean,
): void {
  const issue = ctx.issues.get(n)!;
  const ready = ctx.config.labels.ready;
  for (const run of liveRunsOf(ctx, n)) cancelRun(ctx, run, n, "the task text changed after approval");
  clearStateLabels(ctx, n);
  const record = ctx.state.tasks[n];
  if (record) {
    record.text = undefined;
    record.merge = undefined;
    // A plan approved for the old text is not one for the new: a writer's new label starts with a new plan.
    record.plan = undefined;
    if (record.dispatchId) record.handled = record.dispatchId;
    record.result = "text_changed";
    record.reason = "the task text was edited after approval by someone without write access";
  }
  const digest = taskDigest(issue.title, issue.body);
  ctx.effects.push({
    type: "comment",
    issue: n,
    body: textChangedComment({ editors, readyLabel: ready, sameSecond }),
    key: `text-changed-${digest.slice(0, 16)}`,
  });
  const who = editors.filter((e): e is string => !!e).map((e) => quietLogin(e));
  incidentOnce(
    ctx,
    "task_text_changed",
    `#${n} was taken out: its text was edited ${who.length ? `by ${who.join(", ")} (no write access)` : "by someone Autopilot cannot name"} after it was approved. A person with write access adds the \`${ready}\` label again to put it back.`,
  );
  note(ctx, `#${n}: taken out, the task text changed after approval`);
}
