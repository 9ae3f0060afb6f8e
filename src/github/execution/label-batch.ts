/**
 * The state-label transitions of one reconcile (a task dispatched, another done, a third back to ready) in one
 * GraphQL request instead of one each. Each transition stays an `addLabelsToLabelable` then a
 * `removeLabelsFromLabelable` on its own issue, by node ids (the top-level fields of a mutation run one after
 * another: GraphQL's specification, "Mutation"), so a label a person added since the snapshot stays, as with
 * one transition per request (src/github/execution/executor.ts `setLabels`). GitHub answers each field on its own: a
 * transition whose field failed (a label deleted and made again has a new id) goes the one-request way after,
 * where the REST fallback by name takes over.
 */
import type { Effect } from "../../core/effects.js";
import type { GatewayLog, OctokitSurface } from "../transport/octokit-surface.js";

type LabelEffect = Extract<Effect, { type: "setStateLabel" | "addLabels" | "removeLabels" }>;

/** What of the executor's context this needs (src/github/execution/executor.ts `ExecContext` has all of it). */
export interface LabelBatchContext {
  client: OctokitSurface;
  log: GatewayLog;
  write: <T>(call: () => Promise<T>) => Promise<T>;
  issueNodeIds: ReadonlyMap<number, string> | null;
  labelIds: Map<string, string> | null;
  /** The issue's labels as the snapshot and this reconcile's writes know them; null when unknown. */
  labelsOf: (issue: number) => Set<string> | null;
}

export function isLabelEffect(effect: Effect): effect is LabelEffect {
  return effect.type === "setStateLabel" || effect.type === "addLabels" || effect.type === "removeLabels";
}

/** The labels an effect adds and removes, judged against what is known of the issue. */
export function labelChange(
  effect: LabelEffect,
  known: Set<string> | null,
): { issue: number; add: string[]; remove: string[] } {
  const [add, remove] =
    effect.type === "setStateLabel"
      ? [effect.add === null ? [] : [effect.add], effect.remove]
      : effect.type === "addLabels"
        ? [effect.labels, []]
        : [[], effect.labels];
  return {
    issue: effect.issue,
    add: add.filter((l) => !known?.has(l)),
    // Remove only what is present (when the issue is known; otherwise try).
    remove: remove.filter((l) => !add.includes(l) && (!known || known.has(l))),
  };
}

interface Planned {
  effect: LabelEffect;
  issue: number;
  add: string[];
  remove: string[];
  fields: string[];
}

/**
 * Carries out the label effects whose node ids are all known in one request, when there are at least `least`
 * of them; returns the effects carried out (the caller records their labels). The others are left to the caller,
 * which goes by name over REST (src/github/execution/executor.ts `setLabels`).
 */
export async function moveLabelsTogether(
  ctx: LabelBatchContext,
  effects: LabelEffect[],
  least = 2,
): Promise<{ effect: LabelEffect; add: string[]; remove: string[] }[]> {
  const ids = ctx.labelIds;
  if (!ids || !ctx.issueNodeIds) return [];
  const planned: Planned[] = [];
  const seen = new Set<number>();
  const variables: Record<string, string | string[]> = {};
  const declared: string[] = [];
  const selections: string[] = [];
  for (const effect of effects) {
    // One transition per issue per request: a second one on the same issue waits for its turn.
    if (seen.has(effect.issue)) continue;
    const change = labelChange(effect, ctx.labelsOf(effect.issue));
    const node = ctx.issueNodeIds.get(effect.issue);
    const addIds = change.add.map((l) => ids.get(l));
    const removeIds = change.remove.map((l) => ids.get(l));
    if (!node || change.add.length + change.remove.length === 0) continue;
    if (addIds.some((id) => !id) || removeIds.some((id) => !id)) continue;
    seen.add(effect.issue);
    const k = planned.length;
    const fields: string[] = [];
    variables[`i${k}`] = node;
    declared.push(`$i${k}: ID!`);
    if (addIds.length > 0) {
      variables[`a${k}`] = addIds as string[];
      declared.push(`$a${k}: [ID!]!`);
      selections.push(
        `  a${k}: addLabelsToLabelable(input: { labelableId: $i${k}, labelIds: $a${k} }) { clientMutationId }`,
      );
      fields.push(`a${k}`);
    }
    if (removeIds.length > 0) {
      variables[`r${k}`] = removeIds as string[];
      declared.push(`$r${k}: [ID!]!`);
      selections.push(
        `  r${k}: removeLabelsFromLabelable(input: { labelableId: $i${k}, labelIds: $r${k} }) { clientMutationId }`,
      );
      fields.push(`r${k}`);
    }
    planned.push({ effect, issue: effect.issue, add: change.add, remove: change.remove, fields });
  }
  if (planned.length < least) return [];
  const document = `mutation AutopilotMoveLabelsTogether(${declared.join(", ")}) {\n${selections.join("\n")}\n}`;
  let failed = new Set<string>();
  try {
    await ctx.write(() => ctx.client.graphql(document, variables));
  } catch (error) {
    const errors = (error as { errors?: unknown }).errors;
    if (!Array.isArray(errors)) throw error;
    // Each error names the field it belongs to; one without a path may have stopped any of them.
    const paths = errors.map((e) => (e as { path?: unknown[] }).path?.[0]);
    failed = paths.some((p) => typeof p !== "string")
      ? new Set(planned.flatMap((p) => p.fields))
      : new Set(paths as string[]);
    ctx.log.warn(
      `${failed.size} of the label changes sent together were refused (${errors
        .map((e) => (e as { message?: unknown }).message)
        .join("; ")
        .slice(0, 300)}); those go one by one`,
    );
  }
  const done: { effect: LabelEffect; add: string[]; remove: string[] }[] = [];
  for (const p of planned) {
    if (p.fields.some((f) => failed.has(f))) {
      // A stale id: forget it, so the one-request path does not try it again and REST goes by name.
      for (const label of [...p.add, ...p.remove]) ids.delete(label);
      continue;
    }
    done.push({ effect: p.effect, add: p.add, remove: p.remove });
  }
  return done;
}
