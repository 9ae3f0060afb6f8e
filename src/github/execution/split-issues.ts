/**
 * The `createSplitIssues` effect (`/autopilot split #N` approved, src/core/reconcile/commands/split-command.ts):
 * the sub-issues of Autopilot's own proposal comment are created, linked to the parent with GitHub's sub-issues
 * API, and the parent labeled ready, which makes it an epic (src/core/reconcile/epic-pooling.ts).
 *
 * Safe to repeat, and safe to stop anywhere: a controller killed between two creations, or a lost answer, leaves
 * issues the next attempt finds again by the hidden marker of their body (src/core/tasks/split-proposal.ts), among
 * the issues Autopilot's account opened since the approval, and links only those not linked yet. The parent's
 * ready label comes last, so a parent that is an epic holds every sub-issue of the proposal.
 *
 * GitHub's documentation of what is called:
 * - https://docs.github.com/en/rest/issues/issues#create-an-issue (`POST /repos/{owner}/{repo}/issues`, labels
 *   set by a writer's token at creation) and #list-repository-issues (`since`, `state=all`; pull requests are
 *   listed too, with a `pull_request` key);
 * - https://docs.github.com/en/rest/issues/sub-issues#add-sub-issue (`sub_issue_id` is the issue's `id`, not its
 *   number) and #list-sub-issues;
 * - https://docs.github.com/en/rest/issues/labels#add-labels-to-an-issue and #remove-a-label-from-an-issue.
 */
import { z } from "zod";
import type { Effect } from "../../core/effects.js";
import { splitFromComment, splitItemOf, subIssueBody } from "../../core/tasks/split-proposal.js";
import { statusOf } from "../transport/errors.js";
import { type ExecContext, type EffectOutcome, repoParams } from "./effect-context.js";
import { removeLabel } from "./label-effects.js";

type SplitEffect = Extract<Effect, { type: "createSplitIssues" }>;

/** The most pages of 100 read back, for the proposal comment and for the issues already created. */
const MAX_PAGES = 10;

const CommentPage = z.array(
  z.object({ id: z.number(), body: z.string().nullish(), user: z.object({ id: z.number() }).nullish() }),
);
const IssuePage = z.array(
  z.object({
    id: z.number(),
    number: z.number(),
    body: z.string().nullish(),
    user: z.object({ id: z.number() }).nullish(),
    pull_request: z.unknown().optional(),
  }),
);
const CreatedIssue = z.object({ id: z.number(), number: z.number() });

/** Nothing to do: the snapshot shows the parent labeled ready with sub-issues, an epic already. */
export function splitAlreadyDone(ctx: ExecContext, effect: SplitEffect): string | null {
  const parent = ctx.world?.issues.find((i) => i.number === effect.parent);
  if (!parent) return null;
  if (parent.state !== "open") return `#${effect.parent} is closed`;
  const ready = parent.labels.some((l) => l.toLowerCase() === effect.ready.toLowerCase());
  return ready && (parent.subIssues?.length ?? 0) > 0 ? `#${effect.parent} is an epic already` : null;
}

export async function createSplitIssues(ctx: ExecContext, effect: SplitEffect): Promise<EffectOutcome> {
  const botId = ctx.world?.botId ?? null;
  if (botId === null) return { effect, status: "failed", detail: "Autopilot's account id is unknown" };
  const items = await readProposal(ctx, effect, botId);
  if (!items)
    return {
      effect,
      status: "failed",
      detail: `Autopilot's proposal comment on #${effect.parent} with the approved digest is gone or was edited`,
    };
  const made = await createdBefore(ctx, effect, botId);
  const linked = await linkedIds(ctx, effect.parent);
  const numbers: number[] = [];
  for (const [i, item] of items.entries()) {
    const index = i + 1;
    let issue = made.get(index);
    if (!issue) {
      const body = subIssueBody({
        parent: effect.parent,
        digest: effect.digest,
        index,
        item,
        dependsOn: item.dependsOn.map((d) => numbers[d - 1]!),
        approvedBy: effect.approvedBy,
      });
      const { data } = await ctx.write(() =>
        ctx.client.request("POST /repos/{owner}/{repo}/issues", {
          ...repoParams(ctx),
          title: item.title,
          body,
          labels: [effect.ready],
        }),
      );
      issue = CreatedIssue.parse(data);
    }
    numbers.push(issue.number);
    if (!linked.has(issue.id)) await link(ctx, effect.parent, issue.id);
  }
  await ctx.write(() =>
    ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", {
      ...repoParams(ctx),
      issue_number: effect.parent,
      labels: [effect.ready],
    }),
  );
  // The labels the snapshot shows on the parent (all of them when it did not read the parent).
  const parent = ctx.world?.issues.find((i) => i.number === effect.parent);
  const present = (name: string) =>
    !parent || parent.labels.some((l) => l.toLowerCase() === name.toLowerCase());
  for (const name of effect.remove.filter(present)) await removeLabel(ctx, effect.parent, name);
  return { effect, status: "done", detail: `sub-issues ${numbers.map((n) => `#${n}`).join(", ")}` };
}

/** The approved proposal, from Autopilot's own comment on the parent whose data still has the digest. */
async function readProposal(ctx: ExecContext, effect: SplitEffect, botId: number) {
  const seen = (ctx.facts?.allComments ?? []).filter((c) => c.issue === effect.parent && c.fromApp);
  for (const c of seen) {
    const items = splitFromComment(c.body, effect.digest);
    if (items) return items;
  }
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        ...repoParams(ctx),
        issue_number: effect.parent,
        per_page: 100,
        page,
      }),
    );
    const list = CommentPage.parse(data);
    for (const c of list) {
      if (c.user?.id !== botId) continue;
      const items = splitFromComment(c.body ?? "", effect.digest);
      if (items) return items;
    }
    if (list.length < 100) break;
  }
  return null;
}

/** The proposal's items Autopilot's account created already (since the approval), by item number. */
async function createdBefore(
  ctx: ExecContext,
  effect: SplitEffect,
  botId: number,
): Promise<Map<number, { id: number; number: number }>> {
  const found = new Map<number, { id: number; number: number }>();
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues", {
        ...repoParams(ctx),
        state: "all",
        since: effect.approvedAt,
        sort: "created",
        direction: "asc",
        per_page: 100,
        page,
      }),
    );
    const list = IssuePage.parse(data);
    for (const issue of list) {
      if (issue.pull_request !== undefined || issue.user?.id !== botId) continue;
      const index = splitItemOf(issue.body, effect.parent, effect.digest);
      if (index !== null && !found.has(index)) found.set(index, { id: issue.id, number: issue.number });
    }
    if (list.length < 100) break;
  }
  return found;
}

/** The ids of the parent's sub-issues now. */
async function linkedIds(ctx: ExecContext, parent: number): Promise<Set<number>> {
  const ids = new Set<number>();
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
        ...repoParams(ctx),
        issue_number: parent,
        per_page: 100,
        page,
      }),
    );
    const list = IssuePage.parse(data);
    for (const issue of list) ids.add(issue.id);
    if (list.length < 100) break;
  }
  return ids;
}

async function link(ctx: ExecContext, parent: number, id: number): Promise<void> {
  try {
    await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
        ...repoParams(ctx),
        issue_number: parent,
        sub_issue_id: id,
      }),
    );
  } catch (error) {
    // Linked meanwhile (GitHub refuses a second link of the same sub-issue with 422): nothing left to do.
    if (statusOf(error) !== 422) throw error;
  }
}
