/**
 * The label effects (`setStateLabel`, `addLabels`, `removeLabels`): what the snapshot and this run's writes know
 * of an issue's labels, and the write itself — in one GraphQL request when the node ids are known
 * (label-batch.ts), else by name over REST.
 */
import type { Effect } from "../../core/effects.js";
import { statusOf } from "../transport/errors.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { repoParams } from "./effect-context.js";
import { type LabelBatchContext, labelChange, moveLabelsTogether } from "./label-batch.js";

type LabelEffect = Extract<Effect, { type: "setStateLabel" | "addLabels" | "removeLabels" }>;

/** Removes one label by name over REST; a label not on the issue (404) is as wanted. */
export async function removeLabel(ctx: ExecContext, issue: number, name: string): Promise<void> {
  try {
    await ctx.write(() =>
      ctx.client.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", {
        ...repoParams(ctx),
        issue_number: issue,
        name,
      }),
    );
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
}

/** An issue's labels as the snapshot and this run's writes know them; null when the snapshot does not have it. */
function labelsOf(ctx: ExecContext, issue: number): Set<string> | null {
  const known = ctx.run.labels.get(issue);
  if (known) return known;
  const node =
    ctx.world?.issues.find((i) => i.number === issue) ??
    ctx.world?.pulls.find((p) => p.number === issue) ??
    null;
  if (!node) return null;
  const set = new Set(node.labels);
  ctx.run.labels.set(issue, set);
  return set;
}

/** A label effect that would change nothing, judged from the snapshot (no request). */
export function labelsAlreadyDone(ctx: ExecContext, effect: LabelEffect): string | null {
  const labels = labelsOf(ctx, effect.issue);
  if (!labels) return null;
  switch (effect.type) {
    case "setStateLabel": {
      const adds = effect.add !== null && !labels.has(effect.add);
      const removes = effect.remove.some((l) => l !== effect.add && labels.has(l));
      return adds || removes ? null : "labels already as wanted";
    }
    case "addLabels":
      return effect.labels.every((l) => labels.has(l)) ? "labels already present" : null;
    case "removeLabels":
      return effect.labels.every((l) => !labels.has(l)) ? "labels already absent" : null;
  }
}

export async function setLabels(ctx: ExecContext, effect: LabelEffect): Promise<EffectOutcome> {
  const { issue, add: toAdd, remove: toRemove } = labelChange(effect, labelsOf(ctx, effect.issue));
  const moved = (await moveLabelsTogether(labelBatchOf(ctx), [effect], 1)).length > 0;
  if (!moved && toAdd.length > 0) {
    const added = await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", {
        ...repoParams(ctx),
        issue_number: issue,
        labels: toAdd,
      }),
    );
    // The answer lists the issue's labels with their node ids: the next transition to these goes in one request.
    const ids = ctx.facts?.labelIds;
    if (ids && Array.isArray(added.data))
      for (const label of added.data as { name?: unknown; node_id?: unknown }[])
        if (typeof label.name === "string" && typeof label.node_id === "string")
          ids.set(label.name, label.node_id);
  }
  for (const name of moved ? [] : toRemove) await removeLabel(ctx, issue, name);
  recordLabels(ctx, issue, toAdd, toRemove);
  return { effect, status: toAdd.length + toRemove.length > 0 ? "done" : "skipped" };
}

/** What the label writes need of the executor's context (label-batch.ts). */
export function labelBatchOf(ctx: ExecContext): LabelBatchContext {
  return {
    client: ctx.client,
    log: ctx.log,
    write: ctx.write,
    issueNodeIds: ctx.facts?.issueNodeIds ?? null,
    labelIds: ctx.facts?.labelIds ?? null,
    labelsOf: (issue) => labelsOf(ctx, issue),
  };
}

/** Records labels written in this run, so later effects judge the issue as it is now. */
export function recordLabels(ctx: ExecContext, issue: number, add: string[], remove: string[]): void {
  const set = labelsOf(ctx, issue) ?? new Set<string>();
  for (const l of add) set.add(l);
  for (const l of remove) set.delete(l);
  ctx.run.labels.set(issue, set);
}
