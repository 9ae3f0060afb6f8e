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
 *    and has not been handled yet (owners of personal repositories are admins without asking).
 *
 * Native "blocked by" relations come with the pool issues (`Issue.blockedBy`, served by github.com although
 * the published schema package does not list it yet); a server that rejects the field gets the query without
 * it from then on, and dependencies come from issue bodies and sub-issues only.
 *
 * An idle repository costs 2 requests per reconcile.
 */
import { type AutopilotConfig, CONFIG_PATH } from "../core/config.js";
import { mentionsWorkerResult } from "../core/contract.js";
import { TRACKING_MARKER } from "../core/dashboard.js";
import { foreignStatusLabels, logSafe } from "../core/authorship.js";
import type { TextEdit } from "../core/task-text.js";
import type { WorkerResult } from "../core/worker-result.js";
import { parseWorkerResult } from "../core/worker-result.js";
import { MAX_REFERENCE_LOOKUPS, parseDependencies, referencesToLookUp } from "../core/graph.js";
import type {
  CheckNode,
  CommentNode,
  IssueNode,
  Permission,
  PullNode,
  ReviewNode,
  RunNode,
  TrackingIssueNode,
  WorldSnapshot,
} from "../core/world.js";
import type { GatewayLog, GitHubClient, RepoRef } from "./client.js";
import { statusOf } from "./errors.js";
import { issueStatesQuery, SNAPSHOT_QUERY, SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY } from "./queries.js";

export { TRACKING_MARKER };
export const CONFIG_FILE = CONFIG_PATH;

/** What the snapshot needs from the configuration; derived from the config text the query returns. */
export interface SnapshotSettings {
  /** An open issue with any of these labels is in the pool. */
  poolLabels: string[];
  readyLabel: string;
  /** Task PRs whose issue carries it get their diff read (src/github/pull-verification.ts). */
  reviewLabel?: string;
  /** Comments on issues with this label may answer a question, however long ago they were first seen. */
  needsHumanLabel: string;
  branchPrefix: string;
  workerWorkflow: string;
}

/** The settings from a configuration: the pool is every open issue with one of the state labels. */
export function snapshotSettings(
  config: Pick<AutopilotConfig, "labels" | "branchPrefix" | "workerWorkflow">,
): SnapshotSettings {
  const l = config.labels;
  return {
    poolLabels: [l.ready, l.inProgress, l.review, l.blocked, l.needsHuman, l.timeout, l.failed],
    readyLabel: l.ready,
    reviewLabel: l.review,
    needsHumanLabel: l.needsHuman,
    branchPrefix: config.branchPrefix,
    workerWorkflow: config.workerWorkflow,
  };
}

/** Per repository, per process: what the next snapshot can assume (never required for correctness). */
export interface RepoMemory {
  trackingIssue: number | null;
  poolLabels: string[] | null;
  /** False once the server rejected `Issue.blockedBy` (an older GitHub Enterprise Server). */
  blockedByField: boolean;
  /**
   * Permissions looked up recently (epoch ms of the lookup). Every reconcile would otherwise spend one request
   * per person who applied a ready label; a revoked permission is noticed within PERMISSION_CACHE_MS.
   */
  permissions: Map<string, { permission: Permission; at: number }>;
  /** The worker workflow the last snapshot used: the runs are listed with it before the query (see takeSnapshot). */
  workerWorkflow: string | null;
  /**
   * Account id (databaseId) of the token's own identity (`viewer`): Autopilot's markers, tracking issue and
   * status labels count only when GitHub names this account as their author or actor.
   */
  appAccountId: number | null;
}

/** How long a looked-up repository permission is trusted. */
export const PERMISSION_CACHE_MS = 5 * 60_000;

export function newRepoMemory(): RepoMemory {
  return {
    trackingIssue: null,
    poolLabels: null,
    blockedByField: true,
    permissions: new Map(),
    workerWorkflow: null,
    appAccountId: null,
  };
}

/** Facts the executor needs that the pure core does not: every comment (bots included) and node ids. */
export interface SnapshotFacts {
  /** Every fetched comment, Autopilot's own included, for the comment-key idempotency check. */
  allComments: CommentNode[];
  issueNodeIds: Map<number, string>;
  trackingNodeId: string | null;
  settings: SnapshotSettings;
  rateLimit: { cost: number; remaining: number; resetAt: string } | null;
}

export interface SnapshotOutput {
  world: WorldSnapshot;
  facts: SnapshotFacts;
}

export interface SnapshotContext {
  client: GitHubClient;
  repo: RepoRef;
  botLogin: string;
  memory: RepoMemory;
  log: GatewayLog;
  /** Every GitHub call goes through this (the circuit breaker). */
  read: <T>(call: () => Promise<T>) => Promise<T>;
  /** Settings from the config file's text and the tracking issue's body (which may carry overrides). */
  settingsFor: (configText: string | null, trackingBody: string | null) => SnapshotSettings;
  /**
   * Logins whose repository permission the decisions need (default: `relevantLogins`). Each is looked up
   * once per snapshot.
   */
  permissionsFor?: (world: WorldSnapshot, settings: SnapshotSettings) => string[];
  now: () => number;
}

// ---------------------------------------------------------------------------------------------------------
// Response shapes (only what is read)

interface Login {
  login?: string | null;
  __typename?: string;
  /** Served for bots (`... on Bot { databaseId }`): compared with the viewer's account id. */
  databaseId?: number | null;
}
interface Named {
  name: string;
}
interface GqlComment {
  databaseId: number | null;
  body: string;
  createdAt: string;
  updatedAt: string;
  viewerDidAuthor?: boolean;
  author: Login | null;
  reactionGroups?: { content: string; viewerHasReacted: boolean }[] | null;
}
interface GqlTracking {
  id: string;
  number: number;
  title: string;
  body: string;
  state: string;
  updatedAt: string;
  isPinned?: boolean | null;
  lastEditedAt?: string | null;
  editor?: Login | null;
  viewerDidAuthor?: boolean;
  author?: Login | null;
  comments?: { nodes: (GqlComment | null)[] | null } | null;
}
interface GqlIssue {
  id?: string;
  number: number;
  title: string;
  body?: string;
  state: string;
  stateReason?: string | null;
  createdAt: string;
  updatedAt?: string;
  closedAt?: string | null;
  author?: Login | null;
  labels?: { nodes: (Named | null)[] | null } | null;
  parent?: { number: number; state?: string; title?: string } | null;
  subIssues?: { nodes: ({ number: number; state: string; title: string } | null)[] | null } | null;
  blockedBy?: { nodes: ({ number: number; state: string; title: string } | null)[] | null } | null;
  timelineItems?: {
    nodes: ({ createdAt?: string; actor?: Login | null; label?: Named | null } | null)[] | null;
  } | null;
  renames?: { nodes: ({ createdAt?: string; actor?: Login | null } | null)[] | null } | null;
  lastEditedAt?: string | null;
  editor?: Login | null;
  userContentEdits?: { nodes: ({ editedAt: string; editor?: Login | null } | null)[] | null } | null;
  comments?: { nodes: (GqlComment | null)[] | null } | null;
}
interface GqlContext {
  __typename: string;
  name?: string;
  status?: string;
  conclusion?: string | null;
  summary?: string | null;
  detailsUrl?: string | null;
  checkSuite?: { app?: { slug?: string } | null } | null;
  context?: string;
  state?: string;
  description?: string | null;
  targetUrl?: string | null;
}
interface GqlPull {
  number: number;
  title: string;
  body?: string;
  state: string;
  isDraft?: boolean;
  createdAt: string;
  headRefName: string;
  headRefOid: string;
  baseRefName: string;
  baseRefOid?: string | null;
  mergeable?: string;
  isCrossRepository?: boolean;
  headRepository?: { nameWithOwner: string } | null;
  author?: (Login & { databaseId?: number | null }) | null;
  labels?: { nodes: (Named | null)[] | null } | null;
  commits?: {
    nodes:
      | ({
          commit: {
            oid: string;
            committedDate?: string;
            statusCheckRollup?: { state: string; contexts: { nodes: (GqlContext | null)[] | null } } | null;
          };
        } | null)[]
      | null;
  } | null;
  reviews?: {
    nodes:
      | ({
          author: Login | null;
          state: string;
          submittedAt: string | null;
          body: string;
          commit?: { oid: string } | null;
        } | null)[]
      | null;
  } | null;
  reviewThreads?: {
    nodes:
      | ({
          isResolved: boolean;
          comments: {
            nodes: ({ author: Login | null; body: string; path: string; createdAt: string } | null)[] | null;
          };
        } | null)[]
      | null;
  } | null;
  comments?: { nodes: ({ author: Login | null; body: string; createdAt: string } | null)[] | null } | null;
}
interface Page<T> {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: (T | null)[] | null;
}
interface SnapshotResponse {
  rateLimit?: { cost: number; remaining: number; resetAt: string } | null;
  viewer?: { databaseId?: number | null; login?: string } | null;
  repository: {
    defaultBranchRef?: { name: string } | null;
    owner?: { __typename: string; login: string } | null;
    configFile?: { text?: string | null } | null;
    pinnedIssues?: { nodes: ({ issue: GqlTracking | null } | null)[] | null } | null;
    trackingByBot?: { nodes: (GqlTracking | null)[] | null } | null;
    trackingIssue?: GqlTracking | null;
    issues?: Page<GqlIssue> | null;
    recentlyClosed?: { nodes: (GqlIssue | null)[] | null } | null;
    pullRequests?: Page<GqlPull> | null;
    recentPulls?: { nodes: (GqlPull | null)[] | null } | null;
  } | null;
}

// ---------------------------------------------------------------------------------------------------------

interface QueryFlags {
  withRepo: boolean;
  withIssues: boolean;
  withPulls: boolean;
  findTracking: boolean;
  trackingNumber: number | null;
  issuesAfter: string | null;
  pullsAfter: string | null;
  labels: string[];
}

async function runSnapshotQuery(ctx: SnapshotContext, flags: QueryFlags): Promise<SnapshotResponse> {
  const variables = {
    owner: ctx.repo.owner,
    name: ctx.repo.name,
    labels: flags.labels,
    configExpression: `HEAD:${CONFIG_FILE}`,
    botLogin: ctx.botLogin || null,
    issuesAfter: flags.issuesAfter,
    pullsAfter: flags.pullsAfter,
    withRepo: flags.withRepo,
    withIssues: flags.withIssues,
    withPulls: flags.withPulls,
    findTracking: flags.findTracking,
    withTrackingNumber: flags.trackingNumber !== null,
    trackingNumber: flags.trackingNumber ?? 0,
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

export async function takeSnapshot(ctx: SnapshotContext): Promise<SnapshotOutput> {
  const { memory } = ctx;
  const assumed = memory.poolLabels && memory.workerWorkflow ? null : ctx.settingsFor(null, null);
  let labels = memory.poolLabels ?? assumed!.poolLabels;
  const knownTracking = memory.trackingIssue;

  // The runs come BEFORE the query. A worker writes its final result into its progress comment and only then
  // ends, so a run listed as completed here has its result in the comments read below. The other way round,
  // a run that ends between the two reads looks like one that ended without a result: a crash, a retry, and
  // after three of them a paused session.
  const assumedWorkflow = memory.workerWorkflow ?? assumed!.workerWorkflow;
  let runs = await fetchWorkerRuns(ctx, assumedWorkflow);

  // First page: everything.
  const first = await runSnapshotQuery(ctx, {
    withRepo: true,
    withIssues: true,
    withPulls: true,
    findTracking: knownTracking === null,
    trackingNumber: knownTracking,
    issuesAfter: null,
    pullsAfter: null,
    labels,
  });
  const repo = first.repository!;
  const configText = repo.configFile?.text ?? null;
  if (typeof first.viewer?.databaseId === "number") memory.appAccountId = first.viewer.databaseId;
  const appId = memory.appAccountId;

  // The tracking issue: the remembered number if it still carries the marker, else search the candidates.
  let tracking = pickTracking(first, appId);
  if (!tracking && knownTracking !== null) {
    const found = await runSnapshotQuery(ctx, {
      withRepo: false,
      withIssues: false,
      withPulls: false,
      findTracking: true,
      trackingNumber: null,
      issuesAfter: null,
      pullsAfter: null,
      labels,
    });
    tracking = pickTracking(found, appId);
  }
  memory.trackingIssue = tracking?.number ?? null;

  const settings = ctx.settingsFor(configText, tracking?.body ?? null);
  if (!sameSet(settings.poolLabels, labels)) {
    // The config names other labels than assumed: fetch the pool again with the right ones.
    labels = settings.poolLabels;
    const again = await runSnapshotQuery(ctx, {
      withRepo: false,
      withIssues: true,
      withPulls: false,
      findTracking: false,
      trackingNumber: null,
      issuesAfter: null,
      pullsAfter: null,
      labels,
    });
    repo.issues = again.repository?.issues ?? null;
    // The recently-closed list was fetched with the old labels too; it is only a shortcut for dependency
    // states (the referenced-issues query below fills the gaps), so it is kept.
  }
  memory.poolLabels = labels;

  const poolIssues: GqlIssue[] = compact(repo.issues?.nodes);
  const pulls: GqlPull[] = compact(repo.pullRequests?.nodes);
  let issuesPage = repo.issues?.pageInfo ?? null;
  let pullsPage = repo.pullRequests?.pageInfo ?? null;
  while (issuesPage?.hasNextPage || pullsPage?.hasNextPage) {
    const next = await runSnapshotQuery(ctx, {
      withRepo: false,
      withIssues: Boolean(issuesPage?.hasNextPage),
      withPulls: Boolean(pullsPage?.hasNextPage),
      findTracking: false,
      trackingNumber: null,
      issuesAfter: issuesPage?.hasNextPage ? issuesPage.endCursor : null,
      pullsAfter: pullsPage?.hasNextPage ? pullsPage.endCursor : null,
      labels,
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
  const botLogin = ctx.botLogin;

  // Issues: the pool, then what it points at (parents, sub-issues, recently closed, referenced).
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
  for (const node of poolIssues) {
    if (node.parent) addStub(stub(node.parent.number, node.parent.title ?? "", node.parent.state ?? "OPEN"));
    for (const sub of compact(node.subIssues?.nodes)) addStub(stub(sub.number, sub.title, sub.state));
    for (const b of compact(node.blockedBy?.nodes)) addStub(stub(b.number, b.title, b.state));
  }
  if (tracking) {
    for (const c of compact(tracking.comments?.nodes)) {
      const comment = toComment(c, tracking.number, botLogin, appId);
      if (comment) allComments.push(comment);
    }
  }

  // States of referenced issues the snapshot does not know yet (aliased queries of 50). Bounded: each body
  // names at most MAX_REFERENCES_PER_ISSUE, and at most MAX_REFERENCE_LOOKUPS are looked up in all; one
  // left out stays unknown, so the issue naming it waits.
  const lists = poolIssues.map((node) => parseDependencies(node.body ?? "", ctx.repo).numbers);
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

  // Pull requests on Autopilot's branches.
  const pullNodes: PullNode[] = [];
  for (const p of pulls)
    if (p.headRefName.startsWith(settings.branchPrefix)) pullNodes.push(toPullNode(p, botLogin));
  for (const p of compact(repo.recentPulls?.nodes)) {
    if (p.headRefName.startsWith(settings.branchPrefix) && !pullNodes.some((x) => x.number === p.number)) {
      pullNodes.push(toPullNode(p, botLogin));
    }
  }

  if (settings.workerWorkflow !== assumedWorkflow) {
    // The config names another worker workflow (first snapshot of this repository, or a changed config).
    runs = await fetchWorkerRuns(ctx, settings.workerWorkflow);
  }
  memory.workerWorkflow = settings.workerWorkflow;

  const comments = allComments.filter((c) => !c.authorIsBot);
  const workerResults = latestWorkerResults(allComments, ctx.log);

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
    issues: [...byNumber.values()].sort((a, b) => a.number - b.number),
    pulls: pullNodes.sort((a, b) => a.number - b.number),
    runs,
    comments,
    workerResults,
    permissions: {},
    trackingIssue: trackingNode,
    configText,
  };
  const logins = ctx.permissionsFor
    ? ctx.permissionsFor(world, settings)
    : relevantLogins(world, { readyLabel: settings.readyLabel, needsHumanLabel: settings.needsHumanLabel });
  world.permissions = await lookupPermissions(ctx, logins, owner);

  return {
    world,
    facts: {
      allComments,
      issueNodeIds,
      trackingNodeId: tracking?.id ?? null,
      settings,
      rateLimit: first.rateLimit ?? null,
    },
  };
}

/** Autopilot's own account wrote it: GitHub says the viewer did, or names the viewer's account id. */
function byApp(author: Login | null | undefined, viewerDidAuthor: boolean | undefined, appId: number | null) {
  if (viewerDidAuthor === true) return true;
  return appId !== null && author?.__typename === "Bot" && author.databaseId === appId;
}

/** The tracking issue: an issue Autopilot opened that carries the marker (one by anyone else is not). */
function pickTracking(data: SnapshotResponse, appId: number | null): GqlTracking | null {
  const repo = data.repository;
  if (!repo) return null;
  const candidates = [
    repo.trackingIssue ?? null,
    ...compact(repo.pinnedIssues?.nodes).map((n) => n.issue),
    ...compact(repo.trackingByBot?.nodes),
  ].filter((c): c is GqlTracking =>
    Boolean(
      c &&
        typeof c.body === "string" &&
        c.body.includes(TRACKING_MARKER) &&
        byApp(c.author, c.viewerDidAuthor, appId),
    ),
  );
  const open = candidates.filter((c) => c.state !== "CLOSED");
  const pool = open.length > 0 ? open : candidates;
  return pool.sort((a, b) => a.number - b.number)[0] ?? null;
}

// ---------------------------------------------------------------------------------------------------------
// Mapping

function lower<T extends string>(value: string | null | undefined): T | null {
  return value ? (value.toLowerCase() as T) : null;
}

function stub(number: number, title: string, state: string): IssueNode {
  return {
    number,
    title,
    body: "",
    state: state === "CLOSED" ? "closed" : "open",
    labels: [],
    createdAt: "",
    author: null,
  };
}

function toIssueNode(
  node: GqlIssue,
  readyLabel: string,
  trust?: { appId: number | null; settings: SnapshotSettings },
): IssueNode {
  const labels = compact(node.labels?.nodes).map((l) => l.name);
  const readyEvents = compact(node.timelineItems?.nodes).filter((e) => e.label?.name === readyLabel);
  const lastReady = readyEvents[readyEvents.length - 1];
  const issue: IssueNode = {
    number: node.number,
    title: node.title,
    body: node.body ?? "",
    state: node.state === "CLOSED" ? "closed" : "open",
    stateReason: lower<NonNullable<IssueNode["stateReason"]>>(node.stateReason),
    labels,
    createdAt: node.createdAt,
    closedAt: node.closedAt ?? null,
    author: node.author?.login ?? null,
    isPullRequest: false,
  };
  if (node.timelineItems) {
    issue.readyLabeledBy = lastReady?.actor?.login ?? null;
    issue.readyLabeledAt = lastReady?.createdAt ?? null;
  }
  if (trust && node.timelineItems) {
    const events = compact(node.timelineItems.nodes).flatMap((e) =>
      e.label && e.createdAt
        ? [
            {
              label: e.label.name,
              at: e.createdAt,
              by: e.actor?.login ?? null,
              byApp: byApp(e.actor, undefined, trust.appId),
            },
          ]
        : [],
    );
    const statusLabels = trust.settings.poolLabels.filter((l) => l !== trust.settings.readyLabel);
    const foreign = foreignStatusLabels({ labels, statusLabels, events });
    if (foreign.length) issue.foreignLabels = foreign;
  }
  if (node.userContentEdits || node.renames || node.lastEditedAt !== undefined) issue.edits = textEdits(node);
  if (node.parent !== undefined) issue.parent = node.parent?.number ?? null;
  if (node.subIssues) issue.subIssues = compact(node.subIssues.nodes).map((s) => s.number);
  if (node.blockedBy) issue.blockedBy = compact(node.blockedBy.nodes).map((b) => b.number);
  return issue;
}

/**
 * Who edited the body and the title, oldest first. The ten newest body edits are read (GitHub lists them
 * newest first), and GitHub also lists the original text among the content edits
 * once an issue has been edited (its time is the creation time, not after any label), and names the last
 * editor on the issue itself; both are read, so an edit is seen even when the history is cut.
 */
function textEdits(node: GqlIssue): TextEdit[] {
  const edits: TextEdit[] = [];
  for (const e of compact(node.userContentEdits?.nodes))
    edits.push({ at: e.editedAt, by: e.editor?.login ?? null, what: "body" });
  if (node.lastEditedAt && !edits.some((e) => e.at === node.lastEditedAt))
    edits.push({ at: node.lastEditedAt, by: node.editor?.login ?? null, what: "body" });
  for (const r of compact(node.renames?.nodes))
    if (r.createdAt) edits.push({ at: r.createdAt, by: r.actor?.login ?? null, what: "title" });
  return edits.sort((a, b) => a.at.localeCompare(b.at));
}

function isBotLogin(author: Login | null | undefined, botLogin: string): boolean {
  if (!author?.login) return false;
  const login = author.login.toLowerCase();
  return (
    author.__typename === "Bot" ||
    login.endsWith("[bot]") ||
    login === botLogin.toLowerCase() ||
    `${login}[bot]` === botLogin.toLowerCase()
  );
}

function toComment(
  c: GqlComment,
  issue: number,
  botLogin: string,
  appId: number | null = null,
): CommentNode | null {
  if (c.databaseId === null || c.databaseId === undefined) return null;
  return {
    id: c.databaseId,
    issue,
    author: c.author?.login ?? null,
    authorIsBot: isBotLogin(c.author, botLogin) || Boolean(c.viewerDidAuthor),
    fromApp: byApp(c.author, c.viewerDidAuthor, appId),
    body: c.body,
    createdAt: c.createdAt,
    acknowledged: Boolean(c.reactionGroups?.some((g) => g.viewerHasReacted)),
  };
}

/**
 * The newest worker result per task issue, from Autopilot's own comments only: a marker in anyone else's
 * comment (a person's, another bot's) is reported, capped and escaped, and ignored.
 */
function latestWorkerResults(comments: CommentNode[], log?: GatewayLog): WorkerResult[] {
  const best = new Map<number, WorkerResult>();
  for (const c of comments) {
    if (!mentionsWorkerResult(c.body)) continue;
    if (!c.fromApp) {
      log?.warn(
        `ignoring a worker-result marker in comment ${c.id} on #${c.issue} by ${logSafe(c.author ?? "unknown", 60)} (not Autopilot): ${logSafe(c.body)}`,
      );
      continue;
    }
    const result = parseWorkerResult(c.body);
    if (!result || result.issue !== c.issue) continue;
    const previous = best.get(result.issue);
    if (
      !previous ||
      result.attempt > previous.attempt ||
      (result.attempt === previous.attempt && result.updatedAt > previous.updatedAt)
    ) {
      best.set(result.issue, result);
    }
  }
  return [...best.values()].sort((a, b) => a.issue - b.issue);
}

const CHECK_STATUSES = new Set(["queued", "in_progress", "completed", "waiting", "pending", "requested"]);

function toCheck(c: GqlContext): CheckNode | null {
  if (c.__typename === "CheckRun") {
    const status = (c.status ?? "").toLowerCase();
    return {
      name: c.name ?? "",
      status: (CHECK_STATUSES.has(status) ? status : "queued") as CheckNode["status"],
      conclusion: lower(c.conclusion),
      app: c.checkSuite?.app?.slug ?? null,
      summary: c.summary ?? null,
      url: c.detailsUrl ?? null,
    };
  }
  if (c.__typename === "StatusContext") {
    const state = (c.state ?? "").toUpperCase();
    const pending = state === "PENDING" || state === "EXPECTED";
    return {
      name: c.context ?? "",
      status: pending ? "pending" : "completed",
      conclusion: pending ? null : state === "SUCCESS" ? "success" : state === "ERROR" ? "error" : "failure",
      app: "status",
      summary: c.description ?? null,
      url: c.targetUrl ?? null,
    };
  }
  return null;
}

function toPullNode(p: GqlPull, botLogin: string): PullNode {
  const head = compact(p.commits?.nodes)[0]?.commit;
  const reviews: ReviewNode[] = compact(p.reviews?.nodes).map((r) => ({
    author: r.author?.login ?? null,
    state: r.state as ReviewNode["state"],
    submittedAt: r.submittedAt,
    commitSha: r.commit?.oid ?? null,
    body: r.body,
  }));
  const reviewComments: NonNullable<PullNode["reviewComments"]> = [];
  for (const thread of compact(p.reviewThreads?.nodes)) {
    if (thread.isResolved) continue;
    for (const c of compact(thread.comments?.nodes)) {
      reviewComments.push({
        author: c.author?.login ?? null,
        body: c.body,
        path: c.path,
        createdAt: c.createdAt,
      });
    }
  }
  for (const c of compact(p.comments?.nodes)) {
    if (isBotLogin(c.author, botLogin)) continue;
    reviewComments.push({
      author: c.author?.login ?? null,
      body: c.body,
      path: null,
      createdAt: c.createdAt,
    });
  }
  reviewComments.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const mergeable = p.mergeable === "MERGEABLE" || p.mergeable === "CONFLICTING" ? p.mergeable : "UNKNOWN";
  return {
    number: p.number,
    title: p.title,
    body: p.body ?? "",
    headRef: p.headRefName,
    headSha: p.headRefOid,
    baseRef: p.baseRefName,
    state: p.state === "MERGED" ? "merged" : p.state === "CLOSED" ? "closed" : "open",
    mergeable,
    labels: compact(p.labels?.nodes).map((l) => l.name),
    createdAt: p.createdAt,
    lastPushAt: head?.committedDate ?? null,
    // Checks count only for the head SHA (they are read from the last commit, which a push can change).
    checks: (head && head.oid !== p.headRefOid ? [] : compact(head?.statusCheckRollup?.contexts?.nodes))
      .map(toCheck)
      .filter((c): c is CheckNode => c !== null),
    reviews,
    reviewComments,
    ...pullTrustFacts(p),
  };
}

/** Who opened the PR and from where (src/core/pull-trust.ts); absent fields stay absent. */
function pullTrustFacts(p: GqlPull): Partial<PullNode> {
  return {
    ...(p.baseRefOid ? { baseSha: p.baseRefOid } : {}),
    ...(p.isCrossRepository !== undefined ? { isCrossRepository: p.isCrossRepository } : {}),
    ...(p.headRepository !== undefined ? { headRepository: p.headRepository?.nameWithOwner ?? null } : {}),
    ...(p.author !== undefined
      ? { author: p.author?.login ?? null, authorId: p.author?.databaseId ?? null }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Worker runs

/** `autopilot #<issue> attempt <n> [<dispatch-id>]`, the worker workflow's run-name. */
const RUN_TITLE = /#(\d+)\s+attempt\s+(\d+)\s*\[([^\]\s]+)\]/i;

export function parseRunTitle(title: string): { issue: number; attempt: number; dispatchId: string } | null {
  const m = RUN_TITLE.exec(title);
  if (!m) return null;
  return { issue: Number(m[1]), attempt: Number(m[2]), dispatchId: m[3]! };
}

interface RestRun {
  id: number;
  name?: string | null;
  display_title?: string;
  status: string | null;
  conclusion: string | null;
  created_at: string;
  updated_at: string;
}

const ACTIVE = new Set(["queued", "in_progress", "waiting", "pending", "requested"]);

async function fetchWorkerRuns(ctx: SnapshotContext, workflow: string): Promise<RunNode[]> {
  const runs: RunNode[] = [];
  for (let page = 1; page <= 3; page++) {
    let data: { workflow_runs?: RestRun[] };
    try {
      const response = await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", {
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          workflow_id: workflow,
          event: "workflow_dispatch",
          exclude_pull_requests: true,
          per_page: 50,
          page,
        }),
      );
      data = response.data as { workflow_runs?: RestRun[] };
    } catch (error) {
      if (statusOf(error) === 404) {
        ctx.log.warn(`worker workflow ${workflow} not found in ${ctx.repo.owner}/${ctx.repo.name}`);
        return runs;
      }
      throw error;
    }
    const list = data.workflow_runs ?? [];
    for (const run of list) {
      const title = run.display_title ?? run.name ?? "";
      const parsed = parseRunTitle(title);
      const status = (run.status ?? "queued") as RunNode["status"];
      runs.push({
        id: run.id,
        workflow,
        displayTitle: title,
        status,
        conclusion: run.conclusion,
        createdAt: run.created_at,
        updatedAt: run.updated_at,
        dispatchId: parsed?.dispatchId ?? null,
        issue: parsed?.issue ?? null,
        attempt: parsed?.attempt ?? null,
      });
    }
    // Newest first: another page only while the oldest run on this one is still live.
    const oldest = list[list.length - 1];
    if (list.length < 50 || !oldest || !ACTIVE.has(oldest.status ?? "")) break;
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------------------
// Permissions

/**
 * Logins whose permission a decision may need: authors of command comments, whoever applied the ready label,
 * approvers of Autopilot's pull requests, and the last editor of the tracking issue (ticked checkboxes).
 * Bots are left out (their comments are never commands).
 */
export function relevantLogins(
  world: WorldSnapshot,
  options: {
    readyLabel: string;
    /** Comments already processed (a command cursor): their authors need no lookup. */
    processed?: (comment: CommentNode) => boolean;
    /** Comments on issues with this label are looked up even when processed: they may answer the question. */
    needsHumanLabel?: string;
  },
): string[] {
  const { readyLabel, needsHumanLabel } = options;
  const waiting = new Set(
    world.issues
      .filter((i) => i.state === "open" && !!needsHumanLabel && i.labels.includes(needsHumanLabel))
      .map((i) => i.number),
  );
  const logins = new Set<string>();
  const add = (login: string | null | undefined) => {
    if (!login || /\[bot\]$/i.test(login) || login.toLowerCase() === world.botLogin.toLowerCase()) return;
    logins.add(login);
  };
  // Every new comment may matter: commands, and answers to a needs-human question.
  for (const c of world.comments) {
    if (options.processed?.(c) && !waiting.has(c.issue)) continue;
    add(c.author);
  }
  for (const i of world.issues)
    if (i.state === "open" && i.labels.includes(readyLabel)) add(i.readyLabeledBy);
  // Edits of a task's text count only from writers (see src/core/task-text.ts).
  for (const i of world.issues) {
    if (i.state !== "open") continue;
    for (const e of i.edits ?? []) if (!i.readyLabeledAt || e.at > i.readyLabeledAt) add(e.by);
  }
  // Approvals satisfy the human gate and requested changes send a task back: both count only from writers.
  for (const p of world.pulls)
    for (const r of p.reviews) if (r.state === "APPROVED" || r.state === "CHANGES_REQUESTED") add(r.author);
  add(world.trackingIssue?.lastEditedBy);
  return [...logins].sort();
}

const PERMISSIONS = new Set<Permission>(["admin", "maintain", "write", "triage", "read", "none"]);

async function lookupPermissions(
  ctx: SnapshotContext,
  logins: string[],
  owner: { __typename: string; login: string } | null,
): Promise<Record<string, Permission>> {
  const out: Record<string, Permission> = {};
  for (const login of logins) {
    if (owner?.__typename === "User" && owner.login.toLowerCase() === login.toLowerCase()) {
      out[login] = "admin"; // the owner of a personal repository
      continue;
    }
    const key = login.toLowerCase();
    const cached = ctx.memory.permissions.get(key);
    if (cached && ctx.now() - cached.at < PERMISSION_CACHE_MS) {
      out[login] = cached.permission;
      continue;
    }
    out[login] = await permissionOf(ctx, login);
    ctx.memory.permissions.set(key, { permission: out[login], at: ctx.now() });
  }
  return out;
}

export async function permissionOf(
  ctx: Pick<SnapshotContext, "client" | "read" | "repo">,
  login: string,
): Promise<Permission> {
  try {
    const response = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        username: login,
      }),
    );
    const data = response.data as { permission?: string; role_name?: string };
    const role = (data.role_name ?? "").toLowerCase() as Permission;
    if (PERMISSIONS.has(role)) return role;
    const permission = (data.permission ?? "none").toLowerCase() as Permission;
    return PERMISSIONS.has(permission) ? permission : "none";
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 403) return "none";
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------

function compact<T>(list: (T | null | undefined)[] | null | undefined): T[] {
  return (list ?? []).filter((x): x is T => x !== null && x !== undefined);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}
