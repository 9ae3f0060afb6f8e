/**
 * Builders for what GitHub answers the gateway: GraphQL snapshot pages shaped like GitHub's responses to
 * `SNAPSHOT_QUERY`, and REST objects taken from real webhook payloads (@octokit/webhooks-examples: a workflow
 * run, an issue, a comment) with the fields a test cares about replaced.
 */
import { createRequire } from "node:module";
import type nock from "nock";
import { DEFAULT_CONFIG, parseConfig } from "../../src/core/config/index.js";
import { renderWorkerResultMarker, type WorkerResult } from "../../src/core/tasks/worker-result.js";
import { GitHubCircuit } from "../../src/github/transport/circuit.js";
import { Gateway, type GatewayOptions } from "../../src/github/gateway.js";
import { newRepoMemory, snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import { type NockedGitHub, nockGitHub } from "../helpers/validating-fetch.js";

const require = createRequire(import.meta.url);
type Example = { name: string; examples: Record<string, unknown>[] };
const examples = require("@octokit/webhooks-examples") as Example[];

/** A real payload of an event (the first example whose action matches, when given), deep-copied. */
export function webhookExample(name: string, action?: string): Record<string, unknown> {
  const set = examples.find((e) => e.name === name);
  if (!set) throw new Error(`no webhook example for ${name}`);
  const example = set.examples.find((e) => action === undefined || e.action === action) ?? set.examples[0];
  return structuredClone(example) as Record<string, unknown>;
}

export const API = "https://api.github.com";
export const OWNER = "octo-org";
export const REPO = "octo-repo";
export const BOT = "autopilot[bot]";
/** The default branch's head commit in every snapshot page (what a dispatch lock ref points at). */
export const DEFAULT_HEAD = "c".repeat(40);
/** The commit an Actions job runs on (`GITHUB_SHA`); the reconcile lock's claims point at it. */
export const JOB_SHA = "d".repeat(40);
/** The account id of Autopilot's bot (GraphQL `viewer.databaseId` for its installation token). */
export const BOT_ID = 9_000_001;
/** How GraphQL names Autopilot's bot as an actor (a Bot, login without `[bot]`, with its account id). */
export const BOT_ACTOR = { __typename: "Bot", login: "autopilot", databaseId: BOT_ID };

// ---------------------------------------------------------------------------------------------------------
// GraphQL nodes

export interface CommentSpec {
  id: number;
  author: string;
  body: string;
  bot?: boolean;
  mine?: boolean;
  acknowledged?: boolean;
  createdAt?: string;
}

export function gqlComment(spec: CommentSpec) {
  return {
    id: `IC_node${spec.id}`,
    databaseId: spec.id,
    body: spec.body,
    createdAt: spec.createdAt ?? "2026-11-20T10:00:00Z",
    updatedAt: spec.createdAt ?? "2026-11-20T10:00:00Z",
    viewerDidAuthor: spec.mine ?? false,
    author: spec.mine
      ? BOT_ACTOR
      : {
          __typename: spec.bot ? "Bot" : "User",
          login: spec.author,
          ...(spec.bot ? { databaseId: 41898282 } : {}),
        },
    reactionGroups: [{ content: "EYES", viewerHasReacted: spec.acknowledged ?? false }],
  };
}

interface IssueSpec {
  number: number;
  title?: string;
  body?: string;
  labels?: string[];
  readyBy?: string | null;
  /** Who applied the status label when it is not ready (default: Autopilot). */
  labeledBy?: string;
  comments?: CommentSpec[];
  parent?: { number: number; state: "OPEN" | "CLOSED" } | null;
  subIssues?: { number: number; state: "OPEN" | "CLOSED"; repository?: { nameWithOwner: string } }[];
  blockedBy?: { number: number; state: "OPEN" | "CLOSED" }[];
  updatedAt?: string;
}

export function gqlIssue(spec: IssueSpec) {
  const labels = spec.labels ?? ["autopilot:ready"];
  return {
    id: `I_node${spec.number}`,
    number: spec.number,
    title: spec.title ?? `Task ${spec.number}`,
    body: spec.body ?? `Do task ${spec.number}.`,
    state: "OPEN",
    stateReason: null,
    createdAt: `2026-11-0${(spec.number % 9) + 1}T09:00:00Z`,
    updatedAt: spec.updatedAt ?? "2026-11-20T09:00:00Z",
    closedAt: null,
    author: { login: "maintainer" },
    labels: { nodes: labels.map((name) => ({ name })) },
    parent: spec.parent ? { ...spec.parent, title: `Epic ${spec.parent.number}` } : null,
    subIssues: { nodes: (spec.subIssues ?? []).map((s) => ({ ...s, title: `Sub ${s.number}` })) },
    blockedBy: { nodes: (spec.blockedBy ?? []).map((b) => ({ ...b, title: `Blocker ${b.number}` })) },
    timelineItems: {
      nodes:
        spec.readyBy === null
          ? []
          : [
              {
                createdAt: "2026-11-20T08:00:00Z",
                actor:
                  labels.includes("autopilot:ready") || labels.length === 0
                    ? { __typename: "User", login: spec.readyBy ?? "maintainer" }
                    : spec.labeledBy
                      ? { __typename: "User", login: spec.labeledBy }
                      : BOT_ACTOR,
                label: { name: labels.includes("autopilot:ready") ? "autopilot:ready" : (labels[0] ?? "x") },
              },
            ],
    },
    comments: { nodes: (spec.comments ?? []).map(gqlComment) },
  };
}

export function gqlClosedIssue(number: number, labels: string[] = []) {
  return {
    number,
    title: `Done ${number}`,
    state: "CLOSED",
    stateReason: "COMPLETED",
    createdAt: "2026-11-01T09:00:00Z",
    closedAt: "2026-11-19T09:00:00Z",
    author: { login: "maintainer" },
    labels: { nodes: labels.map((name) => ({ name })) },
    parent: null,
  };
}

interface PullSpec {
  number: number;
  issue: number;
  headSha?: string;
  mergeable?: "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
  checks?: { name: string; status: string; conclusion: string | null; app?: string }[];
  reviews?: { author: string; state: string; commit?: string }[];
  headRef?: string;
  /** Comments on the PR (newest last): the author's login (a `[bot]` one is a Bot), the body. */
  comments?: { id: number; author: string; body: string; acknowledged?: boolean }[];
  /** GitHub's merge facts: the node id, `mergeStateStatus`, the auto-merge request, the merge-queue entry. */
  merge?: {
    id?: string;
    mergeStateStatus?: string;
    autoMergeRequest?: { mergeMethod: string; enabledBy: { login: string } | null } | null;
    mergeQueueEntry?: { position: number; state: string } | null;
  };
}

export function gqlPull(spec: PullSpec) {
  const sha = spec.headSha ?? "a".repeat(40);
  return {
    ...spec.merge,
    number: spec.number,
    title: `Task ${spec.issue} (#${spec.issue})`,
    body: `Closes #${spec.issue}\n<!-- autopilot:pr issue=${spec.issue} -->`,
    state: "OPEN",
    isDraft: false,
    createdAt: "2026-11-20T09:30:00Z",
    headRefName: spec.headRef ?? `autopilot/issue-${spec.issue}`,
    headRefOid: sha,
    baseRefName: "main",
    baseRefOid: "0".repeat(40),
    isCrossRepository: false,
    headRepository: { nameWithOwner: `${OWNER}/${REPO}` },
    author: { __typename: "Bot", login: "autopilot", databaseId: BOT_ID },
    mergeable: spec.mergeable ?? "MERGEABLE",
    labels: { nodes: [{ name: "autopilot:review" }] },
    commits: {
      nodes: [
        {
          commit: {
            oid: sha,
            committedDate: "2026-11-20T09:29:00Z",
            statusCheckRollup: {
              state: "SUCCESS",
              contexts: {
                nodes: (spec.checks ?? [{ name: "test", status: "COMPLETED", conclusion: "SUCCESS" }]).map(
                  (c) => ({
                    __typename: "CheckRun",
                    name: c.name,
                    status: c.status,
                    conclusion: c.conclusion,
                    summary: null,
                    detailsUrl: `https://github.com/${OWNER}/${REPO}/actions/runs/1`,
                    checkSuite: { app: { slug: c.app ?? "github-actions" } },
                  }),
                ),
              },
            },
          },
        },
      ],
    },
    reviews: {
      nodes: (spec.reviews ?? []).map((r) => ({
        author: { login: r.author },
        state: r.state,
        submittedAt: "2026-11-20T09:40:00Z",
        body: "",
        commit: { oid: r.commit ?? sha },
      })),
    },
    reviewThreads: { nodes: [] as unknown[] },
    comments: {
      nodes: (spec.comments ?? []).map((c) => ({
        databaseId: c.id,
        author: {
          __typename: c.author.endsWith("[bot]") ? "Bot" : "User",
          login: c.author.replace(/\[bot\]$/, ""),
        },
        body: c.body,
        createdAt: "2026-11-20T09:45:00Z",
        viewerDidAuthor: false,
        reactionGroups: [{ content: "THUMBS_UP", viewerHasReacted: c.acknowledged ?? false }],
      })),
    },
  };
}

interface TrackingSpec {
  number: number;
  body: string;
  pinned?: boolean;
  comments?: CommentSpec[];
}

export function gqlTracking(spec: TrackingSpec) {
  return {
    id: `I_tracking${spec.number}`,
    number: spec.number,
    title: "Autopilot dashboard",
    body: spec.body,
    state: "OPEN",
    updatedAt: "2026-11-20T09:00:00Z",
    isPinned: spec.pinned ?? true,
    lastEditedAt: null,
    editor: null,
    viewerDidAuthor: true,
    author: BOT_ACTOR,
    comments: { nodes: (spec.comments ?? []).map(gqlComment) },
  };
}

export interface SnapshotSpec {
  issues?: ReturnType<typeof gqlIssue>[];
  closed?: ReturnType<typeof gqlClosedIssue>[];
  pulls?: ReturnType<typeof gqlPull>[];
  /** Recently closed or merged pull requests (`recentPulls`). */
  closedPulls?: Record<string, unknown>[];
  /** Closed issues updated last, with their newest comments (`recentlyCommentedClosed`). */
  commentedClosed?: Record<string, unknown>[];
  /** Returned as a pinned issue (first query) or by number (when the number is known). */
  tracking?: ReturnType<typeof gqlTracking> | null;
  config?: string | null;
  ownerType?: "User" | "Organization";
}

/** The first page of the snapshot query as GitHub answers it. */
export function snapshotPage(spec: SnapshotSpec) {
  return {
    data: {
      rateLimit: { cost: 1, remaining: 4999, resetAt: "2026-11-20T11:00:00Z" },
      viewer: { databaseId: BOT_ID, login: BOT },
      repository: {
        defaultBranchRef: { name: "main", target: { oid: DEFAULT_HEAD } },
        owner: { __typename: spec.ownerType ?? "Organization", login: OWNER },
        configFile: spec.config === null || spec.config === undefined ? null : { text: spec.config },
        pinnedIssues: { nodes: spec.tracking ? [{ issue: spec.tracking }] : [] },
        trackingByBot: { nodes: spec.tracking ? [spec.tracking] : [] },
        trackingIssue: spec.tracking ?? null,
        issues: { pageInfo: { hasNextPage: false, endCursor: null }, nodes: spec.issues ?? [] },
        recentlyClosed: { nodes: spec.closed ?? [] },
        pullRequests: { pageInfo: { hasNextPage: false, endCursor: null }, nodes: spec.pulls ?? [] },
        recentPulls: { nodes: spec.closedPulls ?? [] },
        recentlyCommentedClosed: { nodes: spec.commentedClosed ?? [] },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// REST objects from real payloads

interface RunSpec {
  id: number;
  issue: number;
  attempt?: number;
  dispatchId?: string;
  status?: string;
  conclusion?: string | null;
}

export function restRun(spec: RunSpec): Record<string, unknown> {
  const run = webhookExample("workflow_run").workflow_run as Record<string, unknown>;
  const attempt = spec.attempt ?? 1;
  const dispatchId = spec.dispatchId ?? `${spec.issue}-${attempt}-abc`;
  return {
    ...run,
    id: spec.id,
    name: "Autopilot worker",
    display_title: `autopilot #${spec.issue} attempt ${attempt} [${dispatchId}]`,
    event: "workflow_dispatch",
    status: spec.status ?? "in_progress",
    conclusion: spec.conclusion ?? null,
  };
}

export function restIssue(
  number: number,
  body: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const issue = webhookExample("issues", "opened").issue as Record<string, unknown>;
  return { ...issue, number, body, title: "Autopilot dashboard", state: "open", ...extra };
}

export function workerResult(partial: Partial<WorkerResult> & { issue: number }): WorkerResult {
  return {
    version: 1,
    attempt: 1,
    dispatchId: `${partial.issue}-1-abc`,
    status: "running",
    iterations: 2,
    maxIterations: 25,
    commits: 2,
    branch: `autopilot/issue-${partial.issue}`,
    tokens: { input: 100, output: 50 },
    costUsd: 0.01,
    humanGate: { fired: false, rules: [] },
    startedAt: "2026-11-20T09:00:00Z",
    updatedAt: "2026-11-20T09:10:00Z",
    ...partial,
  };
}

export function progressComment(id: number, result: WorkerResult): CommentSpec {
  return {
    id,
    author: BOT,
    bot: true,
    mine: true,
    body: `Working on it: iteration ${result.iterations}/${result.maxIterations}\n\n${renderWorkerResultMarker(result)}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// nock helpers

type GraphQLBody = { query: string; variables: Record<string, unknown> };

/** Answers the next snapshot query whose variables satisfy `match`. */
export function replySnapshot(
  scope: nock.Scope,
  page: ReturnType<typeof snapshotPage>,
  match: (variables: Record<string, unknown>) => boolean = (v) => v.withRepo === true,
): nock.Scope {
  return scope
    .post(
      "/graphql",
      (body: GraphQLBody) => body.query.includes("query AutopilotSnapshot") && match(body.variables),
    )
    .reply(200, page);
}

/**
 * Answers the query for who linked each sub-issue of epics about to pool (src/github/snapshot/sub-issue-links.ts):
 * by parent number, its `SubIssueAddedEvent`s, oldest first.
 */
export function replySubIssueLinks(
  scope: nock.Scope,
  links: Record<number, { number: number; at: string; by: string | null; repo?: string }[]>,
): nock.Scope {
  const repository = Object.fromEntries(
    Object.entries(links).map(([parent, events]) => [
      `p${parent}`,
      {
        timelineItems: {
          nodes: events.map((e) => ({
            createdAt: e.at,
            actor: e.by ? { login: e.by } : null,
            subIssue: { number: e.number, repository: { nameWithOwner: e.repo ?? `${OWNER}/${REPO}` } },
          })),
        },
      },
    ]),
  );
  return scope
    .post("/graphql", (body: GraphQLBody) => body.query.includes("query AutopilotSubIssueLinks"))
    .reply(200, { data: { repository } });
}

/** Answers the controller's read of a PR head's diff (compare of two SHAs) and tree (file modes). */
export function replyDiff(
  scope: nock.Scope,
  headSha: string,
  files: { filename: string; status: string; changes?: number; patch?: string; previous_filename?: string }[],
  modes: Record<string, string> = {},
  truncated = false,
): nock.Scope {
  return scope
    .get(`/repos/${OWNER}/${REPO}/compare/${"0".repeat(40)}...${headSha}`)
    .reply(200, { status: "ahead", ahead_by: 1, behind_by: 0, total_commits: 1, commits: [], files })
    .get(`/repos/${OWNER}/${REPO}/git/trees/${headSha}`)
    .query({ recursive: "1" })
    .reply(200, {
      sha: headSha,
      truncated,
      tree: files.map((f) => ({ path: f.filename, mode: modes[f.filename] ?? "100644", type: "blob" })),
    });
}

/** Answers one reconcile's reads: a snapshot of the tracking issue #1 and `issues`, and no worker runs. */
export function replyIssues(scope: nock.Scope, issues: ReturnType<typeof gqlIssue>[]): nock.Scope {
  replySnapshot(
    scope,
    snapshotPage({ tracking: gqlTracking({ number: 1, body: "<!-- autopilot:tracking-issue -->" }), issues }),
  );
  return replyRuns(scope, []);
}

export function replyRuns(
  scope: nock.Scope,
  runs: Record<string, unknown>[],
  workflow = "autopilot-worker.yml",
) {
  return scope
    .get(`/repos/${OWNER}/${REPO}/actions/workflows/${workflow}/runs`)
    .query(true)
    .reply(200, { total_count: runs.length, workflow_runs: runs });
}

// ---------------------------------------------------------------------------------------------------------
// The gateway against nock

/** The snapshot settings of a repository whose config file reads `text` (the defaults when it does not parse). */
export const settingsFor = (text: string | null) => {
  const parsed = parseConfig(text);
  return snapshotSettings(parsed.ok ? parsed.config : DEFAULT_CONFIG);
};

/**
 * For a test file that drives the controller's gateway against nock (see `nockGitHub`): `gateway()` is one for
 * OWNER/REPO as BOT, with its own breaker and a fresh memory unless `options` give them.
 */
export function nockGateway(): NockedGitHub & { gateway(options?: Partial<GatewayOptions>): Gateway } {
  const github = nockGitHub();
  return {
    get validating() {
      return github.validating;
    },
    octokit: () => github.octokit(),
    gateway: (options = {}) =>
      new Gateway({
        client: github.octokit(),
        repo: { owner: OWNER, name: REPO },
        botLogin: BOT,
        circuit: new GitHubCircuit(),
        memory: newRepoMemory(),
        ...options,
      }),
  };
}

/**
 * GitHub's side of an uncontended reconcile lock (src/github/reconcile-lock.ts): no claim listed, ours created at
 * the job's commit, listed alone, deleted after the reconcile. Returns the claim's name once created.
 */
export function replyLock(scope: nock.Scope): { claim: () => string } {
  let claim = "";
  const listing = () => (claim ? [{ ref: claim, object: { sha: JOB_SHA, type: "commit" } }] : []);
  scope
    .get(`/repos/${OWNER}/${REPO}/git/matching-refs/autopilot%2Freconcile`)
    .reply(200, () => listing())
    .post(`/repos/${OWNER}/${REPO}/git/refs`, (body: { ref: string; sha: string }) => {
      if (!body.ref.startsWith("refs/autopilot/reconcile/") || body.sha !== JOB_SHA) return false;
      claim = body.ref;
      return true;
    })
    .reply(201, () => ({ ref: claim, object: { sha: JOB_SHA, type: "commit" } }))
    .get(`/repos/${OWNER}/${REPO}/git/matching-refs/autopilot%2Freconcile`)
    .reply(200, () => listing())
    .delete((uri) => uri.startsWith(`/repos/${OWNER}/${REPO}/git/refs/autopilot`))
    .reply(204);
  return { claim: () => claim };
}
