/**
 * One world snapshot per reconcile, in as few requests as possible:
 *
 * 1. ONE GraphQL query (`SNAPSHOT_QUERY`, paginated): default branch, the config file's text, the tracking
 *    issue (by number when known, else among the pinned issues and the bot's own open issues), open issues
 *    carrying any Autopilot label with labels, body, author, parent/sub-issues, the ready label's last actor
 *    and recent comments (commands and worker progress comments), recently closed Autopilot issues, open pull
 *    requests (kept when their head branch starts with `branchPrefix`) with head SHA, check rollup, reviews,
 *    mergeability and review comments, and recently closed/merged pull requests;
 * 2. ONE REST call for the worker workflow's runs (`display_title` carries issue, attempt and dispatch id),
 *    made first (a run seen completed then has its final result in the comments the query reads);
 * 3. only when needed: a second GraphQL query when the config names other labels than assumed, one for the
 *    states of referenced issues outside the pool (aliases), and one permission lookup per login that matters
 *    and has not been handled yet (owners of personal repositories are admins without asking), and one for
 *    who linked the sub-issues of an epic whose ready label is new (src/github/snapshot/sub-issue-links.ts).
 *
 * Native "blocked by" relations come with the pool issues (`Issue.blockedBy`, served by github.com although
 * the published schema package does not list it yet); a server that rejects the field gets the query without
 * it from then on, and dependencies come from issue bodies and sub-issues only.
 *
 * An idle repository costs 2 requests per reconcile.
 */
import { CONFIG_PATH } from "../../core/config/index.js";
import { parseDashboard, TRACKING_MARKER } from "../../core/dashboard/index.js";
import {
  MAX_REFERENCE_LOOKUPS,
  parseDependencies,
  referencesToLookUp,
} from "../../core/tasks/dependency-references.js";
import type { CommentNode, IssueNode, PullNode, TrackingIssueNode, WorldSnapshot } from "../../core/world.js";
import { issueOfRevertBranch, issueOfTaskBranch } from "../../core/contract.js";
import { type CommentWindowRead, fetchBuriedComments } from "./buried-comments.js";
import { lookupPermissions, relevantLogins } from "../permissions.js";
import {
  FIRST_ISSUES_PAGE,
  issueStatesQuery,
  nextIssuesPage,
  SNAPSHOT_QUERY,
  SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY,
} from "../queries.js";
import type {
  SnapshotContext,
  SnapshotFacts,
  SnapshotOutput,
  SnapshotRequest,
  SnapshotSettings,
} from "./snapshot-context.js";
import {
  isAppResultComment,
  latestWorkerResults,
  stub,
  toComment,
  toIssueNode,
  toPullNode,
} from "./snapshot-nodes.js";
import { compact, type GqlIssue, type GqlPull, type SnapshotResponse } from "./snapshot-response.js";
import { parentsAboutToPool, readSubIssueLinks } from "./sub-issue-links.js";
import { pickTracking } from "./tracking-pick.js";
import { fetchWorkerRuns } from "./worker-run-listing.js";

export {
  newRepoMemory,
  type RepoMemory,
  type SnapshotFacts,
  type SnapshotOutput,
  type SnapshotRequest,
  type SnapshotSettings,
  snapshotSettings,
} from "./snapshot-context.js";
export { TRACKING_MARKER };

/** At most this many issues of task branches outside the pool are looked up per reconcile. */
const MAX_BRANCH_ISSUE_LOOKUPS = 50;

interface QueryFlags {
  withRepo: boolean;
  withIssues: boolean;
  withPulls: boolean;
  findTracking: boolean;
  trackingNumber: number | null;
  issuesAfter: string | null;
  /** Issues on this page (default FIRST_ISSUES_PAGE). */
  issuesFirst?: number;
  pullsAfter: string | null;
  labels: string[];
  /** The branch prefix the task branches are listed with (on the first page). */
  branchPrefix: string;
}

async function runSnapshotQuery(ctx: SnapshotContext, flags: QueryFlags): Promise<SnapshotResponse> {
  const variables = {
    owner: ctx.repo.owner,
    name: ctx.repo.name,
    labels: flags.labels,
    configExpression: `HEAD:${CONFIG_PATH}`,
    botLogin: loginOf(ctx) || null,
    issuesAfter: flags.issuesAfter,
    issuesFirst: flags.issuesFirst ?? FIRST_ISSUES_PAGE,
    pullsAfter: flags.pullsAfter,
    withRepo: flags.withRepo,
    withIssues: flags.withIssues,
    withPulls: flags.withPulls,
    findTracking: flags.findTracking,
    withTrackingNumber: flags.trackingNumber !== null,
    trackingNumber: flags.trackingNumber ?? 0,
    taskBranchRefs: taskBranchRefPrefix(flags.branchPrefix),
  };
  let data: SnapshotResponse;
  try {
    const query = ctx.memory.blockedByField ? SNAPSHOT_QUERY : SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY;
    data = await graphqlAllowingNotFound<SnapshotResponse>(ctx, query, variables);
  } catch (error) {
    if (!ctx.memory.blockedByField || !rejectsBlockedBy(error)) throw error;
    ctx.log.warn("this GitHub does not serve Issue.blockedBy; native blocked-by relations are not read");
    ctx.memory.blockedByField = false;
    data = await graphqlAllowingNotFound<SnapshotResponse>(ctx, SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY, variables);
  }
  if (!data.repository)
    throw new Error(`Repository ${ctx.repo.owner}/${ctx.repo.name} was not found or is not accessible.`);
  return data;
}

/**
 * The ref prefix the task branches are listed under: `refs/heads/` and the branch prefix up to its last `/`
 * (GitHub names each listed ref relative to the prefix; a prefix such as `ap-` is matched by the caller).
 */
function taskBranchRefPrefix(branchPrefix: string): string {
  return `refs/heads/${branchPrefix.slice(0, branchPrefix.lastIndexOf("/") + 1)}`;
}

/** The task branches the first page listed, by full name, with their commits; undefined when not read. */
function listedTaskBranches(
  data: SnapshotResponse,
  listedWith: string,
  branchPrefix: string,
): Record<string, string> | undefined {
  const list = data.repository?.taskBranches;
  if (!list || listedWith !== branchPrefix) return undefined;
  const dir = taskBranchRefPrefix(branchPrefix).slice("refs/heads/".length);
  const out: Record<string, string> = {};
  for (const node of compact(list.nodes)) {
    const name = dir + node.name;
    const oid = node.target?.oid;
    if (oid && issueOfTaskBranch(branchPrefix, name) !== null) out[name] = oid;
  }
  return out;
}

function rejectsBlockedBy(error: unknown): boolean {
  const e = error as { name?: string; errors?: { message?: string }[] };
  return (
    e?.name === "GraphqlResponseError" &&
    Array.isArray(e.errors) &&
    e.errors.some(
      (x) =>
        /blockedBy/.test(x?.message ?? "") &&
        /doesn't exist|does not exist|undefined/i.test(x?.message ?? ""),
    )
  );
}

/**
 * GraphQL with partial answers accepted when every error is NOT_FOUND (a tracking issue number that no
 * longer exists, a referenced issue that never did): the data that resolved is used.
 */
export async function graphqlAllowingNotFound<T>(
  ctx: Pick<SnapshotContext, "client" | "read">,
  query: string,
  variables: Record<string, unknown>,
): Promise<T> {
  try {
    return (await ctx.read(() => ctx.client.graphql(query, variables))) as T;
  } catch (error) {
    const e = error as { name?: string; errors?: { type?: string }[]; data?: unknown };
    if (
      e?.name === "GraphqlResponseError" &&
      e.data &&
      Array.isArray(e.errors) &&
      e.errors.every((x) => x?.type === "NOT_FOUND")
    ) {
      return e.data as T;
    }
    throw error;
  }
}

export async function takeSnapshot<S extends SnapshotSettings>(
  ctx: SnapshotContext,
  request: SnapshotRequest<S>,
): Promise<SnapshotOutput<S>> {
  const { memory } = ctx;
  // The points every snapshot query of this reconcile cost (each answer's rateLimit.cost), and the last answer's
  // remaining budget.
  let points: SnapshotFacts["rateLimit"] = null;
  const query = async (flags: QueryFlags) => {
    const data = await runSnapshotQuery(ctx, flags);
    if (data.rateLimit) points = { ...data.rateLimit, cost: (points?.cost ?? 0) + data.rateLimit.cost };
    return data;
  };
  const assumed =
    memory.poolLabels && memory.workerWorkflow && memory.branchPrefix
      ? null
      : await request.settingsFor(null, null);
  let labels = memory.poolLabels ?? assumed!.poolLabels;
  const branchPrefix = memory.branchPrefix ?? assumed!.branchPrefix;
  const knownTracking = memory.trackingIssue;

  // The runs come BEFORE the query. A worker writes its final result into its progress comment and only then
  // ends, so a run listed as completed here has its result in the comments read below. The other way round,
  // a run that ends between the two reads looks like one that ended without a result: a crash, a retry, and
  // after three of them a paused session.
  const assumedWorkflow = memory.workerWorkflow ?? assumed!.workerWorkflow;
  let runs = await fetchWorkerRuns(ctx, assumedWorkflow);

  // First page: everything.
  const loginAsked = loginOf(ctx);
  const first = await query({
    withRepo: true,
    withIssues: true,
    withPulls: true,
    findTracking: knownTracking === null || memory.trackingDuplicates.length > 0,
    trackingNumber: knownTracking,
    issuesAfter: null,
    pullsAfter: null,
    labels,
    branchPrefix,
  });
  const repo = first.repository!;
  const configText = repo.configFile?.text ?? null;
  if (typeof first.viewer?.databaseId === "number") memory.appAccountId = first.viewer.databaseId;
  if (typeof first.viewer?.login === "string" && first.viewer.login) memory.appLogin = first.viewer.login;
  const appId = memory.appAccountId;

  // The tracking issue: the remembered number if it still carries the marker, else search the candidates
  // (again when the first query looked for the bot's issues under another login than the token's own).
  let picked = pickTracking(first, appId);
  let tracking = picked.tracking;
  if (!tracking && (knownTracking !== null || loginOf(ctx) !== loginAsked)) {
    const found = await query({
      withRepo: false,
      withIssues: false,
      withPulls: false,
      findTracking: true,
      trackingNumber: null,
      issuesAfter: null,
      pullsAfter: null,
      labels,
      branchPrefix,
    });
    picked = pickTracking(found, appId);
    tracking = picked.tracking;
  }
  memory.trackingIssue = tracking?.number ?? null;
  memory.trackingDuplicates = picked.duplicates;

  const settings = await request.settingsFor(configText, tracking?.body ?? null);
  if (!sameSet(settings.poolLabels, labels)) {
    // The config names other labels than assumed: fetch the pool again with the right ones.
    labels = settings.poolLabels;
    const again = await query({
      withRepo: false,
      withIssues: true,
      withPulls: false,
      findTracking: false,
      trackingNumber: null,
      issuesAfter: null,
      pullsAfter: null,
      labels,
      branchPrefix,
    });
    repo.issues = again.repository?.issues ?? null;
    // The recently-closed list was fetched with the old labels too; it is only a shortcut for dependency
    // states (the referenced-issues query below fills the gaps), so it is kept.
  }
  memory.poolLabels = labels;
  // Listed with another prefix than the config's (a first snapshot, a changed config): not used this time.
  const taskBranches = listedTaskBranches(first, branchPrefix, settings.branchPrefix);
  memory.branchPrefix = settings.branchPrefix;

  const poolIssues: GqlIssue[] = compact(repo.issues?.nodes);
  const pulls: GqlPull[] = compact(repo.pullRequests?.nodes);
  let issuesPage = repo.issues?.pageInfo ?? null;
  const issuesTotal = repo.issues?.totalCount;
  let pullsPage = repo.pullRequests?.pageInfo ?? null;
  while (issuesPage?.hasNextPage || pullsPage?.hasNextPage) {
    const next = await query({
      withRepo: false,
      withIssues: Boolean(issuesPage?.hasNextPage),
      withPulls: Boolean(pullsPage?.hasNextPage),
      findTracking: false,
      trackingNumber: null,
      issuesAfter: issuesPage?.hasNextPage ? issuesPage.endCursor : null,
      issuesFirst: nextIssuesPage(issuesTotal, poolIssues.length),
      pullsAfter: pullsPage?.hasNextPage ? pullsPage.endCursor : null,
      labels,
      branchPrefix,
    });
    if (issuesPage?.hasNextPage) {
      poolIssues.push(...compact(next.repository?.issues?.nodes));
      issuesPage = next.repository?.issues?.pageInfo ?? null;
    }
    if (pullsPage?.hasNextPage) {
      pulls.push(...compact(next.repository?.pullRequests?.nodes));
      pullsPage = next.repository?.pullRequests?.pageInfo ?? null;
    }
  }

  const owner = repo.owner ?? null;
  const defaultBranch = repo.defaultBranchRef?.name ?? "main";
  const botLogin = loginOf(ctx);

  // Issues: the pool, then what it points at (parents, sub-issues, recently closed, referenced).
  // A sub-issue may be in another repository (GitHub allows it); its number names nothing here, and an epic
  // (src/core/reconcile/epic-pooling.ts) would otherwise label this repository's issue of that number.
  for (const node of poolIssues) {
    const subs = node.subIssues;
    if (subs?.nodes) subs.nodes = subs.nodes.filter((s) => sameRepository(s?.repository, ctx.repo));
  }
  const byNumber = new Map<number, IssueNode>();
  const issueNodeIds = new Map<number, string>();
  const allComments: CommentNode[] = [];
  for (const node of poolIssues) {
    byNumber.set(node.number, toIssueNode(node, settings.readyLabel, { appId, settings }));
    if (node.id) issueNodeIds.set(node.number, node.id);
    for (const c of compact(node.comments?.nodes)) {
      const comment = toComment(c, node.number, botLogin, appId);
      if (comment) allComments.push(comment);
    }
  }
  const addStub = (issue: IssueNode) => {
    if (!byNumber.has(issue.number)) byNumber.set(issue.number, issue);
  };
  for (const node of compact(repo.recentlyClosed?.nodes)) addStub(toIssueNode(node, settings.readyLabel));
  // Commands written on a closed task issue (`/autopilot rollback` on the merged task's own issue): a comment
  // updates its issue, so the closed issues updated last carry them. Whether the issue is a task, and the
  // comment new, comment-commands.ts decides.
  for (const node of compact(repo.recentlyCommentedClosed?.nodes)) {
    addStub(toIssueNode(node, settings.readyLabel));
    for (const c of compact(node.comments?.nodes)) {
      const comment = toComment(c, node.number, botLogin, appId);
      if (comment) allComments.push(comment);
    }
  }
  // The same for open issues outside the pool: a skipped task carries only the exclude label, and `/autopilot
  // retry` (or `rollback`, `cleanup`) may be written on its own issue. A pool issue's comments are read above.
  for (const node of compact(repo.recentlyCommentedOpen?.nodes)) {
    if (byNumber.has(node.number)) continue;
    addStub(toIssueNode(node, settings.readyLabel));
    for (const c of compact(node.comments?.nodes)) {
      const comment = toComment(c, node.number, botLogin, appId);
      if (comment) allComments.push(comment);
    }
  }
  for (const node of poolIssues) {
    if (node.parent) addStub(stub(node.parent.number, node.parent.title ?? "", node.parent.state ?? "OPEN"));
    for (const sub of compact(node.subIssues?.nodes))
      addStub(stub(sub.number, sub.title, sub.state, sub.createdAt ?? ""));
    for (const b of compact(node.blockedBy?.nodes)) addStub(stub(b.number, b.title, b.state));
  }
  if (tracking) {
    for (const c of compact(tracking.comments?.nodes)) {
      const comment = toComment(c, tracking.number, botLogin, appId);
      if (comment) allComments.push(comment);
    }
  }

  // Comments older than the windows read above, when a result, a command or an answer may be among them.
  const state = tracking ? parseDashboard(tracking.body).state : null;
  const statusLabels = new Set(settings.poolLabels.filter((l) => l !== settings.readyLabel));
  const windows: CommentWindowRead[] = poolIssues.map((node) => ({
    issue: node.number,
    window: node.comments,
  }));
  if (tracking) windows.push({ issue: tracking.number, window: tracking.comments });
  const graphql = (query: string, variables: Record<string, unknown>) =>
    graphqlAllowingNotFound(ctx, query, variables);
  const buried = await fetchBuriedComments(ctx, graphql, windows, {
    cursorId: state?.cursor?.id ?? null,
    stateSince: state ? (tracking?.createdAt ?? null) : null,
    resultComments: new Map(
      Object.entries(state?.tasks ?? {}).flatMap(([n, r]) =>
        r.resultComment ? [[Number(n), r.resultComment] as const] : [],
      ),
    ),
    expectsResult: (n) =>
      runs.some((r) => r.issue === n && r.status !== "completed") ||
      (state
        ? Boolean(state.tasks[n]?.dispatchId) && state.tasks[n]?.handled !== state.tasks[n]?.dispatchId
        : poolIssues.some(
            (i) => i.number === n && compact(i.labels?.nodes).some((l) => statusLabels.has(l.name)),
          )),
    isResult: (c, n) => isAppResultComment(c, n, appId),
  });
  // Who linked the sub-issues of an epic about to pool, and when: its label approves only some of them.
  const parents = parentsAboutToPool(byNumber.values(), { ...settings, botLogin, epics: state?.epics });
  for (const [parent, links] of await readSubIssueLinks(ctx, graphql, parents)) {
    const issue = byNumber.get(parent)!;
    issue.subIssueLinks = links.filter((l) => issue.subIssues?.includes(l.issue));
  }
  const readIds = new Set(allComments.map((c) => c.id));
  for (const { issue, comment: c } of buried) {
    const comment = toComment(c, issue, botLogin, appId);
    if (comment && !readIds.has(comment.id)) {
      readIds.add(comment.id);
      allComments.push(comment);
    }
  }

  // States of referenced issues the snapshot does not know yet (aliased queries of 50). Bounded: each body
  // names at most MAX_REFERENCES_PER_ISSUE, and at most MAX_REFERENCE_LOOKUPS are looked up in all; one
  // left out stays unknown, so the issue naming it waits.
  const lists = poolIssues.map((node) => parseDependencies(node.body ?? "", ctx.repo).numbers);
  // With the stale-branch sweep on, a task branch whose issue is outside the pool (a skipped task carries only
  // the exclude label; a closed issue's leftover) is looked up with them, so the sweep sees its labels.
  if (settings.sweep)
    lists.push(
      Object.keys(taskBranches ?? {})
        .map((b) => issueOfTaskBranch(settings.branchPrefix, b)!)
        .slice(0, MAX_BRANCH_ISSUE_LOOKUPS),
    );
  const { lookUp: unknown, left } = referencesToLookUp(lists, (n) => byNumber.has(n));
  if (left > 0)
    ctx.log.warn(`${left} referenced issues not looked up this reconcile (at most ${MAX_REFERENCE_LOOKUPS})`);
  for (let i = 0; i < unknown.length; i += 50) {
    const chunk = unknown.slice(i, i + 50);
    const data = await graphqlAllowingNotFound<{
      repository: Record<string, (GqlIssue & { __typename: string; pullState?: string }) | null> | null;
    }>(ctx, issueStatesQuery(chunk), { owner: ctx.repo.owner, name: ctx.repo.name });
    for (const node of Object.values(data.repository ?? {})) {
      if (!node) continue;
      if (node.__typename === "PullRequest") {
        addStub({
          ...stub(node.number, node.title, node.pullState === "OPEN" ? "OPEN" : "CLOSED"),
          isPullRequest: true,
        });
      } else {
        addStub(toIssueNode(node, settings.readyLabel));
      }
    }
  }

  // Pull requests on Autopilot's branches, and GitHub's reverts of them (`/autopilot rollback`).
  const ours = (ref: string) =>
    ref.startsWith(settings.branchPrefix) || issueOfRevertBranch(settings.branchPrefix, ref) !== null;
  const pullNodes: PullNode[] = [];
  for (const p of pulls) {
    if (!ours(p.headRefName)) continue;
    pullNodes.push(toPullNode(p, botLogin));
    // Commands on a task's open pull request (`/autopilot fix`): comment-commands.ts takes one as the task's only
    // when the App opened the PR on the task branch.
    for (const c of compact(p.comments?.nodes)) {
      const comment = toComment(
        { ...c, databaseId: c.databaseId ?? null, updatedAt: c.createdAt },
        p.number,
        botLogin,
        appId,
      );
      if (comment) allComments.push(comment);
    }
    // Commands written on a line of the diff, in a review (`/autopilot status`, `retry`, …).
    for (const thread of compact(p.reviewThreads?.nodes))
      for (const c of compact(thread.comments?.nodes)) {
        const comment = toComment(
          { ...c, databaseId: c.databaseId ?? null, updatedAt: c.createdAt },
          p.number,
          botLogin,
          appId,
        );
        if (comment) allComments.push({ ...comment, review: true });
      }
  }
  for (const p of compact(repo.recentPulls?.nodes)) {
    if (ours(p.headRefName) && !pullNodes.some((x) => x.number === p.number)) {
      pullNodes.push(toPullNode(p, botLogin));
      // Commands on a merged or closed task PR (`/autopilot rollback`, `follow-up`).
      for (const c of compact(p.comments?.nodes)) {
        const comment = toComment(
          { ...c, databaseId: c.databaseId ?? null, updatedAt: c.updatedAt ?? c.createdAt },
          p.number,
          botLogin,
          appId,
        );
        if (comment) allComments.push(comment);
      }
    }
  }

  if (settings.workerWorkflow !== assumedWorkflow) {
    // The config names another worker workflow (first snapshot of this repository, or a changed config).
    runs = await fetchWorkerRuns(ctx, settings.workerWorkflow);
  }
  memory.workerWorkflow = settings.workerWorkflow;

  const comments = allComments.filter((c) => !c.authorIsBot);
  const {
    results: workerResults,
    resultComments,
    agents: workerAgents,
  } = latestWorkerResults(allComments, ctx.log);

  const trackingNode: TrackingIssueNode | null = tracking
    ? {
        number: tracking.number,
        body: tracking.body,
        updatedAt: tracking.updatedAt,
        pinned: Boolean(tracking.isPinned),
        state: tracking.state === "CLOSED" ? "closed" : "open",
        lastEditedBy: tracking.lastEditedAt ? (tracking.editor?.login ?? null) : null,
      }
    : null;

  const world: WorldSnapshot = {
    repo: { owner: ctx.repo.owner, name: ctx.repo.name, defaultBranch },
    botLogin,
    // The query names the token's account (`viewer.databaseId`, at no extra request); without it no pull
    // request is recognised as Autopilot's.
    botId: appId,
    issues: [...byNumber.values()].sort((a, b) => a.number - b.number),
    pulls: pullNodes.sort((a, b) => a.number - b.number),
    runs,
    comments,
    workerResults,
    resultComments,
    workerAgents,
    permissions: {},
    trackingIssue: trackingNode,
    configText,
  };
  if (picked.duplicates.length) world.duplicateTrackingIssues = picked.duplicates;
  if (taskBranches) world.taskBranches = taskBranches;
  if (repo.dispatchLocks) {
    world.dispatchLocks = compact(repo.dispatchLocks.nodes).map((r) => r.name);
    world.dispatchLocksComplete = !repo.dispatchLocks.pageInfo?.hasNextPage;
  }
  const logins = request.permissionsFor
    ? request.permissionsFor(world, settings)
    : relevantLogins(world, { readyLabel: settings.readyLabel, needsHumanLabel: settings.needsHumanLabel });
  world.permissions = await lookupPermissions(ctx, logins, owner);

  const labelIds = memory.labelIds;
  for (const node of [...poolIssues, ...pulls])
    for (const label of compact(node.labels?.nodes)) if (label.id) labelIds.set(label.name, label.id);

  return {
    world,
    facts: {
      allComments,
      issueNodeIds,
      labelIds,
      trackingNodeId: tracking?.id ?? null,
      defaultBranchSha: repo.defaultBranchRef?.target?.oid ?? null,
      repositoryNodeId: repo.id ?? null,
      settings,
      rateLimit: points,
      dashboardState: state,
    },
  };
}

/** Autopilot's login: the token's own (`viewer.login`) once a query has named it, else the caller's hint. */
export function loginOf(ctx: Pick<SnapshotContext, "botLogin" | "memory">): string {
  return ctx.memory.appLogin ?? ctx.botLogin;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/** A related issue's repository is this one (a server that does not name it: taken as this one). */
function sameRepository(
  repository: { nameWithOwner: string } | null | undefined,
  repo: { owner: string; name: string },
): boolean {
  return !repository || repository.nameWithOwner.toLowerCase() === `${repo.owner}/${repo.name}`.toLowerCase();
}
