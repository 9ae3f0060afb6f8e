import type { Effect } from "../../core/effects.js";
import { TRACKING_MARKER } from "../snapshot/snapshot.js";
import type { EffectOutcome, ExecContext } from "./effect-context.js";
import { repoParams } from "./effect-context.js";

interface RestIssue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  pull_request?: unknown;
}

/**
 * Finds the open tracking issue by its marker (consistent REST listing, not search): the oldest one, since the
 * listing is sorted by creation, oldest first (https://docs.github.com/en/rest/issues/issues#list-repository-issues).
 */
async function findTrackingIssue(ctx: ExecContext): Promise<RestIssue | null> {
  return (await findTrackingIssues(ctx))[0] ?? null;
}

/** Every open tracking issue of Autopilot's, oldest first (one page of 100: more would be a flood of its own). */
async function findTrackingIssues(ctx: ExecContext): Promise<RestIssue[]> {
  const params: Record<string, unknown> = {
    ...repoParams(ctx),
    state: "open",
    sort: "created",
    direction: "asc",
    per_page: 100,
  };
  if (ctx.botLogin) params.creator = ctx.botLogin;
  const response = await ctx.read(() => ctx.client.request("GET /repos/{owner}/{repo}/issues", params));
  const list = (response.data as RestIssue[]) ?? [];
  return list.filter((i) => !i.pull_request && (i.body ?? "").includes(TRACKING_MARKER));
}

export async function writeTracking(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "writeTrackingIssue" }>,
): Promise<EffectOutcome> {
  if (effect.body.length > 65_536) {
    return {
      effect,
      status: "failed",
      detail: `body is ${effect.body.length} characters, over GitHub's 65,536`,
    };
  }
  const body = effect.body.includes(TRACKING_MARKER) ? effect.body : `${TRACKING_MARKER}\n${effect.body}`;
  let number = effect.issue;
  let current: RestIssue | null = null;
  if (number === null) {
    const open = await findTrackingIssues(ctx);
    current = open[0] ?? null;
    if (current) number = current.number;
    // A younger one beside it: a create whose own check for an older issue failed left it open (a controller
    // that remembers the older issue never lists them again, so it is closed here, where the list is in hand).
    for (const younger of open.slice(1)) await closeDuplicate(ctx, younger.number, current!.number);
  } else {
    // Re-read before writing: the single-writer check.
    const response = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues/{issue_number}", {
        ...repoParams(ctx),
        issue_number: number,
      }),
    );
    current = response.data as RestIssue;
  }
  if (current && number !== null) {
    const revision = ctx.revisionOf(current.body ?? "");
    if (revision !== effect.expectedRevision) {
      ctx.rememberTracking(number);
      return {
        effect,
        status: "conflict",
        issue: number,
        detail: `tracking issue #${number} is at revision ${revision ?? "none"}, expected ${effect.expectedRevision ?? "none"}`,
      };
    }
    // A person's edit since the snapshot (a box ticked on the page) keeps the revision: writing now would
    // overwrite it unseen, so the reconcile runs again on the body as it is.
    if (effect.readBody !== undefined && (current.body ?? "") !== effect.readBody) {
      ctx.rememberTracking(number);
      return {
        effect,
        status: "conflict",
        issue: number,
        detail: `tracking issue #${number} was edited since it was read (revision ${revision ?? "none"})`,
      };
    }
    if ((current.body ?? "") === body && current.title === effect.title) {
      ctx.run.trackingIssue = number;
      return { effect, status: "skipped", issue: number, detail: "unchanged" };
    }
    await ctx.write(() =>
      ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
        ...repoParams(ctx),
        issue_number: number,
        title: effect.title,
        body,
      }),
    );
    ctx.run.trackingIssue = number;
    ctx.rememberTracking(number);
    return { effect, status: "done", issue: number };
  }
  const response = await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues", {
      ...repoParams(ctx),
      title: effect.title,
      body,
    }),
  );
  const created = (response.data as { number: number; node_id?: string }).number;
  const older = await olderTrackingIssue(ctx, created);
  if (older !== null) return giveWayTo(ctx, effect, created, older);
  ctx.run.trackingIssue = created;
  ctx.rememberTracking(created);
  return { effect, status: "done", issue: created, detail: "created" };
}

/**
 * Two controllers whose first reconciles overlap both find no tracking issue and both create one. Issue numbers
 * grow with creation, so the one who created the younger issue always sees the older one when it lists again
 * after its own create: the older wins, and the younger's creator closes its own. Null when `created` is the oldest.
 */
async function olderTrackingIssue(ctx: ExecContext, created: number): Promise<number | null> {
  const oldest = await findTrackingIssue(ctx);
  return oldest !== null && oldest.number < created ? oldest.number : null;
}

/**
 * Closes the tracking issue this controller just created as a duplicate of the older one, with a pointer for
 * anyone who found it first, and reports a conflict so the reconcile runs again on the older issue's state.
 * Closed as "not planned" (https://docs.github.com/en/rest/issues/issues#update-an-issue, `state_reason`).
 */
async function giveWayTo(
  ctx: ExecContext,
  effect: Extract<Effect, { type: "writeTrackingIssue" }>,
  created: number,
  older: number,
): Promise<EffectOutcome> {
  await closeDuplicate(ctx, created, older);
  ctx.rememberTracking(older);
  return {
    effect,
    status: "conflict",
    issue: older,
    detail: `tracking issue #${older} was opened at the same moment as #${created}; #${created} is closed as its duplicate`,
  };
}

/** Closes a younger tracking issue as a duplicate of the older one, with a pointer for anyone who found it first. */
async function closeDuplicate(ctx: ExecContext, duplicate: number, older: number): Promise<void> {
  await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      ...repoParams(ctx),
      issue_number: duplicate,
      body: `Another Autopilot controller opened the tracking issue at the same moment: #${older} is the dashboard, and its commands are read there. This duplicate is closed.`,
    }),
  );
  await ctx.write(() =>
    ctx.client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", {
      ...repoParams(ctx),
      issue_number: duplicate,
      state: "closed",
      state_reason: "not_planned",
    }),
  );
}
