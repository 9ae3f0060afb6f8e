/**
 * The sandbox's in-memory GitHub: repositories, users, issues, pull requests, labels, comments, reviews,
 * checks, statuses, workflows and their runs, and the tokens that may act on them.
 *
 * Every mutation goes through a method of {@link SandboxStore}: it updates the records, appends the issue
 * events GitHub would record, and emits one {@link StoreEvent} per webhook GitHub would deliver (the webhook
 * module turns those into signed deliveries). REST, GraphQL, the git remote and the Actions stand-in all
 * share one store, so whatever one of them changes the others see at once.
 *
 * Git data (refs, commits, file contents, diffs, merges) comes from a {@link GitBackend} once one is
 * registered with {@link SandboxStore.setGitBackend}; until then refs live in memory and commit SHAs are
 * synthetic.
 *
 * Records handed out by accessors are the live records: read them, never mutate them — use the methods.
 */
import { createHash, randomBytes } from "node:crypto";

// ---------------------------------------------------------------------------------------------------------
// Basic types

/** A repository's collaborator permission, as `GET /repos/{o}/{r}/collaborators/{u}/permission` reports. */
export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

/** Which kind of credential made a request. */
export type TokenKind = "app" | "installation" | "worker" | "user";

/** Identifies a repository; methods also accept the `"owner/name"` string. */
export interface RepoKey {
  owner: string;
  name: string;
}
export type RepoRef = RepoKey | string;

/** Thrown by store methods for conditions GitHub answers with a 4xx; REST maps `status` and `message`. */
export class StoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: ReadonlyArray<Record<string, string>> = [],
  ) {
    super(message);
    this.name = "StoreError";
  }
}

export interface User {
  id: number;
  nodeId: string;
  login: string;
  type: "User" | "Bot" | "Organization";
  name: string | null;
  email: string | null;
  /** Permission on every repository unless {@link SandboxStore.setPermission} says otherwise. */
  permission: Permission;
  createdAt: Date;
}

export interface Repo {
  id: number;
  nodeId: string;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  pushedAt: Date;
}

export interface Label {
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export type IssueState = "open" | "closed";
export type StateReason = "completed" | "not_planned" | "reopened" | "duplicate" | null;
export type LockReason = "off-topic" | "too heated" | "resolved" | "spam" | null;

/** One entry of `GET /repos/{o}/{r}/issues/{n}/events` (and GraphQL `timelineItems`). */
export interface IssueEvent {
  id: number;
  nodeId: string;
  event:
    | "labeled"
    | "unlabeled"
    | "closed"
    | "reopened"
    | "locked"
    | "unlocked"
    | "renamed"
    | "pinned"
    | "unpinned"
    | "merged"
    | "head_ref_force_pushed"
    | "review_requested"
    | "assigned"
    | "unassigned"
    | "sub_issue_added"
    | "sub_issue_removed"
    | "blocked_by_added"
    | "blocked_by_removed";
  actor: string;
  createdAt: Date;
  /** For labeled/unlabeled: the label's name and color at that time. */
  label?: { name: string; color: string };
  /** For closed/merged: the commit that closed it, if any. */
  commitId?: string | null;
  stateReason?: StateReason;
  lockReason?: LockReason;
  rename?: { from: string; to: string };
  requestedReviewer?: string;
  assignee?: string;
}

export interface Reaction {
  id: number;
  nodeId: string;
  user: string;
  content: ReactionContent;
  createdAt: Date;
}
export type ReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

export interface Comment {
  id: number;
  nodeId: string;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: Date;
  updatedAt: Date;
  reactions: Reaction[];
}

export interface GitSide {
  /** Branch name, without `refs/heads/`. */
  ref: string;
  sha: string;
}

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING" | "DISMISSED";

export interface Review {
  id: number;
  nodeId: string;
  user: string;
  body: string;
  state: ReviewState;
  /** The PR head SHA when the review was created. */
  commitId: string;
  submittedAt: Date | null;
  /** Inline comments left with the review (on a file and line of the diff). */
  comments: ReviewComment[];
}

/** An inline pull request review comment (GET /repos/{o}/{r}/pulls/{n}/comments). */
export interface ReviewComment {
  id: number;
  nodeId: string;
  reviewId: number;
  user: string;
  body: string;
  path: string;
  line: number | null;
  commitId: string;
  createdAt: Date;
}

export type MergeMethod = "merge" | "squash" | "rebase";

/** Pull-request-only fields of an {@link Issue}. */
export interface PullFields {
  /** The pull request's own id (different from the issue id, as on GitHub). */
  id: number;
  nodeId: string;
  head: GitSide;
  base: GitSide;
  draft: boolean;
  merged: boolean;
  mergedAt: Date | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  /** null while "GitHub" has not computed it yet (refreshed on read). */
  mergeable: boolean | null;
  mergeableState: "clean" | "dirty" | "unstable" | "blocked" | "behind" | "unknown" | "draft";
  requestedReviewers: string[];
  reviews: Review[];
  /** Files changed and commits ahead, as of the last refresh. */
  additions: number;
  deletions: number;
  changedFiles: number;
  commits: number;
  maintainerCanModify: boolean;
  /**
   * `owner/name` of the fork the head branch lives in; absent for a branch of this repository. The fork's
   * branch is kept in this repository's git as `refs/forks/<owner>/heads/<branch>` (GitHub keeps a fork
   * network's objects together and exposes a fork PR's head as `refs/pull/N/head`):
   * https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/proposing-changes-to-your-work-with-pull-requests/creating-a-pull-request-from-a-fork
   */
  headRepo?: string;
}

/** Where a fork's branch is kept in the base repository's git (see `PullFields.headRepo`). */
export function forkBranchRef(forkOwner: string, branch: string): string {
  return `refs/forks/${forkOwner.toLowerCase()}/heads/${branch}`;
}

/** The ref a pull request's head SHA is read from. */
function headRefOf(pull: PullFields): string {
  return pull.headRepo ? forkBranchRef(pull.headRepo.split("/")[0]!, pull.head.ref) : fullRef(pull.head.ref);
}

/** An issue or — when `pull` is set — a pull request (they share numbers, as on GitHub). */
export interface Issue {
  id: number;
  nodeId: string;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: IssueState;
  stateReason: StateReason;
  labels: string[];
  assignees: string[];
  locked: boolean;
  activeLockReason: LockReason;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  events: IssueEvent[];
  reactions: Reaction[];
  /** Issue number of the parent (sub-issues). */
  parent: number | null;
  subIssues: number[];
  /** Numbers of the issues this one is blocked by. */
  blockedBy: number[];
  pinned: boolean;
  /**
   * Body edit history (GraphQL `userContentEdits`, newest last). Once a body is edited, GitHub's history also
   * lists the original text, by its author at creation; every edit names who made it, through the web or
   * REST `PATCH /repos/{owner}/{repo}/issues/{issue_number}` alike:
   * https://docs.github.com/en/communities/moderating-comments-and-conversations/tracking-changes-in-a-comment
   * https://docs.github.com/en/graphql/reference/objects#usercontentedit
   */
  contentEdits?: { at: Date; editor: string }[];
  pull?: PullFields;
}

export type CheckStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required"
  | "stale"
  | null;

export interface CheckOutput {
  title: string | null;
  summary: string | null;
  text: string | null;
}

export interface CheckSuite {
  id: number;
  nodeId: string;
  headSha: string;
  headBranch: string | null;
  /** Slug of the app that owns the suite (`github-actions` for workflow checks). */
  appSlug: string;
  status: CheckStatus;
  conclusion: CheckConclusion;
  createdAt: Date;
  updatedAt: Date;
}

export interface CheckRun {
  id: number;
  nodeId: string;
  name: string;
  headSha: string;
  checkSuiteId: number;
  appSlug: string;
  status: CheckStatus;
  conclusion: CheckConclusion;
  startedAt: Date | null;
  completedAt: Date | null;
  output: CheckOutput;
  detailsUrl: string | null;
  externalId: string | null;
}

export type StatusState = "error" | "failure" | "pending" | "success";

export interface CommitStatus {
  id: number;
  nodeId: string;
  sha: string;
  state: StatusState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface Workflow {
  id: number;
  nodeId: string;
  name: string;
  /** `.github/workflows/<file>.yml` */
  path: string;
  state: "active" | "disabled_manually";
  createdAt: Date;
  updatedAt: Date;
}

export type RunStatus = "requested" | "queued" | "pending" | "waiting" | "in_progress" | "completed";
export type RunConclusion =
  | "success"
  | "failure"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "neutral"
  | "action_required"
  | "stale"
  | "startup_failure"
  | null;

export interface WorkflowJob {
  id: number;
  nodeId: string;
  runId: number;
  name: string;
  status: RunStatus;
  conclusion: RunConclusion;
  startedAt: Date | null;
  completedAt: Date | null;
  steps: Array<{ name: string; number: number; status: RunStatus; conclusion: RunConclusion }>;
}

export interface WorkflowRun {
  id: number;
  nodeId: string;
  workflowId: number;
  /** Workflow name. */
  name: string;
  displayTitle: string;
  event: string;
  status: RunStatus;
  conclusion: RunConclusion;
  headBranch: string | null;
  headSha: string;
  runNumber: number;
  runAttempt: number;
  actor: string;
  triggeringActor: string;
  /** workflow_dispatch inputs (strings, as GitHub passes them). */
  inputs: Record<string, string>;
  /** The PR numbers the run is associated with (pull_request events). */
  pullRequests: number[];
  /** Concurrency group resolved by the Actions stand-in, if any. */
  concurrencyGroup: string | null;
  cancelRequested: boolean;
  createdAt: Date;
  updatedAt: Date;
  runStartedAt: Date | null;
  jobs: WorkflowJob[];
}

export interface TokenInfo {
  token: string;
  kind: TokenKind;
  /** Who acts with this token: the user's login, `<slug>[bot]` or `github-actions[bot]`. */
  login: string;
  installationId: number | null;
  runId: number | null;
  /** Repositories it may touch (`owner/name`); null = all of the installation's. */
  repositories: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
}

// ---------------------------------------------------------------------------------------------------------
// Git backend (registered by the git smart-HTTP remote)

export interface GitRefEntry {
  /** Full ref name: `refs/heads/main`, `refs/tags/v1`. */
  ref: string;
  sha: string;
}

/** One changed file, in the shape of GitHub's compare / pulls-files entries. */
export interface ChangedFile {
  filename: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  changes: number;
  patch?: string;
  previous_filename?: string;
}

export interface CompareResult {
  files: ChangedFile[];
  ahead_by: number;
  behind_by?: number;
  /** SHA of the merge base, when known. */
  merge_base_sha?: string;
  /** Commits in base..head, oldest first, when known. */
  commits?: CommitInfo[];
}

export interface CommitInfo {
  sha: string;
  message: string;
  authorName: string;
  authorEmail: string;
  /** ISO date. */
  authorDate: string;
  committerName?: string;
  committerEmail?: string;
  committerDate?: string;
  parents: string[];
  tree?: string;
}

export type MergeOutcome = { sha: string } | { conflict: true; message?: string };

/**
 * What the store needs from real git. Every method receives the repository as a {@link RepoKey}; refs are
 * full names (`refs/heads/x`) except where noted.
 */
export interface GitBackend {
  listRefs(repo: RepoKey): Promise<GitRefEntry[]>;
  /** Resolves a branch name, full ref or SHA (prefix) to a commit SHA; null when it does not exist. */
  resolveRef(repo: RepoKey, ref: string): Promise<string | null>;
  /** `base...head` (branch names or SHAs). */
  compare(repo: RepoKey, base: string, head: string): Promise<CompareResult>;
  createRef(repo: RepoKey, ref: string, sha: string): Promise<void>;
  /** Moves a ref; without `force` it must be a fast-forward (else throw a StoreError 422). */
  updateRef?(repo: RepoKey, ref: string, sha: string, force: boolean): Promise<void>;
  deleteRef(repo: RepoKey, ref: string): Promise<void>;
  /**
   * Merges `head` into the branch `base` (branch names) with the method, moves `base` and returns the new
   * base SHA, or reports a conflict without changing anything.
   */
  mergeBranches(
    repo: RepoKey,
    base: string,
    head: string,
    method: MergeMethod,
    message: string,
  ): Promise<MergeOutcome>;
  /** Whether `head` merges cleanly into `base` (no change). Assumed true when absent. */
  canMerge?(repo: RepoKey, base: string, head: string): Promise<boolean>;
  /** A file's content at a ref; null when the path does not exist (or is a directory). */
  readFile?(repo: RepoKey, ref: string, path: string): Promise<Buffer | null>;
  /** Entries of a directory at a ref; null when not a directory. */
  listDirectory?(
    repo: RepoKey,
    ref: string,
    path: string,
  ): Promise<Array<{ name: string; path: string; type: "file" | "dir"; sha: string; size: number }> | null>;
  getCommit?(repo: RepoKey, sha: string): Promise<CommitInfo | null>;
  /** Every tree entry below a commit or tree (a SHA or a ref) with its git mode; null when there is none. */
  treeEntries?(repo: RepoKey, ref: string): Promise<TreeEntry[] | null>;
}

/** One entry of a git tree listing (`GET /repos/{owner}/{repo}/git/trees/{tree_sha}`). */
export interface TreeEntry {
  path: string;
  /** `100644`, `100755`, `120000` (symlink), `160000` (submodule), `040000` (tree). */
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  size?: number;
}

// ---------------------------------------------------------------------------------------------------------
// Events (one per webhook delivery GitHub would make)

interface EventBase {
  repo: Repo;
  /** Login of the actor (the webhook's `sender`). */
  sender: string;
}

export type StoreEvent =
  | (EventBase & {
      name: "issues";
      action:
        | "opened"
        | "edited"
        | "closed"
        | "reopened"
        | "labeled"
        | "unlabeled"
        | "locked"
        | "unlocked"
        | "pinned"
        | "unpinned"
        | "assigned"
        | "unassigned"
        | "deleted";
      issue: Issue;
      label?: Label;
      assignee?: string;
      changes?: { title?: { from: string }; body?: { from: string | null } };
    })
  | (EventBase & {
      name: "issue_comment";
      action: "created" | "edited" | "deleted";
      issue: Issue;
      comment: Comment;
      changes?: { body: { from: string } };
    })
  | (EventBase & {
      name: "pull_request";
      action:
        | "opened"
        | "edited"
        | "closed"
        | "reopened"
        | "synchronize"
        | "labeled"
        | "unlabeled"
        | "review_requested"
        | "review_request_removed"
        | "ready_for_review"
        | "converted_to_draft";
      pull: Issue;
      label?: Label;
      requestedReviewer?: string;
      before?: string;
      after?: string;
      changes?: {
        title?: { from: string };
        body?: { from: string | null };
        base?: { ref: { from: string } };
      };
    })
  | (EventBase & {
      name: "pull_request_review";
      action: "submitted" | "edited" | "dismissed";
      pull: Issue;
      review: Review;
    })
  | (EventBase & {
      name: "check_run";
      action: "created" | "completed" | "rerequested" | "requested_action";
      checkRun: CheckRun;
    })
  | (EventBase & {
      name: "check_suite";
      action: "completed" | "requested" | "rerequested";
      checkSuite: CheckSuite;
    })
  | (EventBase & { name: "status"; status: CommitStatus })
  | (EventBase & {
      name: "workflow_run";
      action: "requested" | "in_progress" | "completed";
      run: WorkflowRun;
      workflow: Workflow;
    })
  | (EventBase & {
      name: "workflow_job";
      action: "queued" | "in_progress" | "completed" | "waiting";
      run: WorkflowRun;
      job: WorkflowJob;
    })
  | (EventBase & {
      name: "workflow_dispatch";
      workflow: Workflow;
      ref: string;
      inputs: Record<string, string>;
    })
  | (EventBase & { name: "push"; push: PushRecord })
  | (EventBase & { name: "create" | "delete"; ref: string; refType: "branch" | "tag" })
  | (EventBase & {
      name: "sub_issues";
      action: "sub_issue_added" | "sub_issue_removed" | "parent_issue_added" | "parent_issue_removed";
      issue: Issue;
      other: Issue;
    });

export type StoreEventName = StoreEvent["name"];

/** Handed to {@link SandboxStore.onWorkflowDispatch} listeners: a run the Actions stand-in should execute. */
export interface WorkflowRunRequest {
  repo: Repo;
  workflow: Workflow;
  run: WorkflowRun;
  /** Branch or tag the run is for. */
  ref: string;
  inputs: Record<string, string>;
  /** How it was triggered: a dispatch, a re-run, or another event recorded by the Actions stand-in. */
  reason: "dispatch" | "rerun" | "event";
}

// ---------------------------------------------------------------------------------------------------------
// Push

export interface PushCommit {
  id: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string; username?: string };
  added?: string[];
  removed?: string[];
  modified?: string[];
}

/** What {@link SandboxStore.recordPush} receives from the git remote after a ref moved. */
export interface PushInput {
  repo: RepoRef;
  /** Full ref, `refs/heads/x`. */
  ref: string;
  /** Previous SHA, or 40 zeros when created. */
  before: string;
  /** New SHA, or 40 zeros when deleted. */
  after: string;
  /** Login of the pusher (from the token). */
  pusher: string;
  forced?: boolean;
  commits?: PushCommit[];
}

export interface PushRecord {
  ref: string;
  before: string;
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  pusher: string;
  commits: PushCommit[];
  at: Date;
}

// ---------------------------------------------------------------------------------------------------------
// Inputs

export interface CreateRepoInput {
  owner: string;
  name: string;
  defaultBranch?: string;
  private?: boolean;
  description?: string | null;
}

export interface AddUserOptions {
  permission?: Permission;
  type?: User["type"];
  name?: string | null;
  email?: string | null;
}

export interface CreateIssueInput {
  title: string;
  body?: string | null;
  labels?: string[];
  assignees?: string[];
  /** Login of the author (must exist as a user, or be a bot login). */
  author: string;
  createdAt?: Date;
}

export interface UpdateIssueInput {
  title?: string;
  body?: string | null;
  state?: IssueState;
  stateReason?: StateReason;
  labels?: string[];
  assignees?: string[];
}

export interface CreatePullInput {
  title: string;
  body?: string | null;
  /** Head branch name (`feature` or `owner:feature`). */
  head: string;
  /** Base branch name. */
  base: string;
  draft?: boolean;
  author: string;
  maintainerCanModify?: boolean;
}

export interface UpdatePullInput {
  title?: string;
  body?: string | null;
  state?: IssueState;
  base?: string;
}

export interface CreateReviewInput {
  author: string;
  body?: string;
  /** Without an event the review stays PENDING until {@link SandboxStore.submitReview}. */
  event?: "APPROVE" | "REQUEST_CHANGES" | "COMMENT";
  commitId?: string;
  /** Inline comments on the diff. */
  comments?: { path: string; body: string; line?: number }[];
}

export interface CreateCheckRunInput {
  name: string;
  headSha: string;
  /** App that creates it; defaults to the sandbox app's slug. */
  appSlug?: string;
  status?: CheckStatus;
  conclusion?: CheckConclusion;
  startedAt?: Date | null;
  completedAt?: Date | null;
  output?: Partial<CheckOutput>;
  detailsUrl?: string | null;
  externalId?: string | null;
  /** Login for the webhook sender. */
  actor?: string;
}

export type UpdateCheckRunInput = Partial<Omit<CreateCheckRunInput, "headSha" | "appSlug">>;

export interface CreateStatusInput {
  state: StatusState;
  context?: string;
  description?: string | null;
  targetUrl?: string | null;
  creator: string;
}

export interface CreateWorkflowRunInput {
  workflow: number | string;
  event: string;
  headBranch: string | null;
  headSha: string;
  actor: string;
  inputs?: Record<string, string>;
  displayTitle?: string;
  pullRequests?: number[];
  status?: RunStatus;
}

export interface UpdateWorkflowRunInput {
  status?: RunStatus;
  conclusion?: RunConclusion;
  displayTitle?: string;
  concurrencyGroup?: string | null;
  runStartedAt?: Date | null;
}

export interface ListWorkflowRunsFilter {
  workflow?: number | string;
  status?: string;
  branch?: string;
  event?: string;
  actor?: string;
  headSha?: string;
  /** Only runs created at or after. */
  createdFrom?: Date;
  createdTo?: Date;
}

export interface StoreOptions {
  /** Clock; defaults to the system clock. */
  now?: () => Date;
  app?: { id: number; slug: string; name: string; owner: string };
  installationId?: number;
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

const ZERO_SHA = "0000000000000000000000000000000000000000";

/** Node ids the GraphQL layer can decode: `<prefix>_<base64url(kind:id)>`. */
export function encodeNodeId(kind: NodeKind, id: number | string): string {
  const prefix = NODE_PREFIX[kind];
  return `${prefix}_${Buffer.from(`${kind}:${id}`).toString("base64url")}`;
}

export function decodeNodeId(nodeId: string): { kind: NodeKind; id: string } | null {
  const underscore = nodeId.indexOf("_");
  if (underscore < 0) return null;
  const decoded = Buffer.from(nodeId.slice(underscore + 1), "base64url").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  const kind = decoded.slice(0, colon);
  if (!(kind in NODE_PREFIX)) return null;
  return { kind: kind as NodeKind, id: decoded.slice(colon + 1) };
}

const NODE_PREFIX = {
  User: "U",
  Bot: "BOT",
  Organization: "O",
  Repository: "R",
  Issue: "I",
  PullRequest: "PR",
  IssueComment: "IC",
  Label: "LA",
  PullRequestReview: "PRR",
  PullRequestReviewComment: "PRRC",
  CheckRun: "CR",
  CheckSuite: "CS",
  StatusContext: "SC",
  Workflow: "W",
  WorkflowRun: "WFR",
  Job: "CR",
  Reaction: "REA",
  Event: "LE",
} as const;
export type NodeKind = keyof typeof NODE_PREFIX;

export function repoKeyOf(ref: RepoRef): RepoKey {
  if (typeof ref !== "string") return { owner: ref.owner, name: ref.name };
  const slash = ref.indexOf("/");
  if (slash <= 0) throw new StoreError(404, "Not Found");
  return { owner: ref.slice(0, slash), name: ref.slice(slash + 1) };
}

function fullNameOf(ref: RepoRef): string {
  const key = repoKeyOf(ref);
  return `${key.owner}/${key.name}`.toLowerCase();
}

/** A deterministic, plausible commit SHA for the in-memory ref mode. */
export function syntheticSha(...parts: string[]): string {
  return createHash("sha1").update(parts.join("\0")).digest("hex");
}

function branchOf(ref: string): string {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
}

function fullRef(ref: string): string {
  return ref.startsWith("refs/") ? ref : `refs/heads/${ref}`;
}

const PERMISSION_RANK: Record<Permission, number> = {
  none: 0,
  read: 1,
  triage: 2,
  write: 3,
  maintain: 4,
  admin: 5,
};

/** Whether `have` is at least `need`. */
export function permissionAtLeast(have: Permission, need: Permission): boolean {
  return PERMISSION_RANK[have] >= PERMISSION_RANK[need];
}

const DEFAULT_LABEL_COLOR = "ededed";

interface RepoState {
  repo: Repo;
  labels: Map<string, Label>; // key: lower-cased name
  issues: Map<number, Issue>;
  comments: Map<number, Comment>;
  nextNumber: number;
  refs: Map<string, string>; // in-memory refs (full name → sha) until a git backend is registered
  files: Map<string, Buffer>; // in-memory default-branch files (path → content)
  checkSuites: Map<number, CheckSuite>;
  checkRuns: Map<number, CheckRun>;
  statuses: CommitStatus[];
  workflows: Map<number, Workflow>;
  runs: Map<number, WorkflowRun>;
  permissions: Map<string, Permission>; // login (lower) → permission
  pushes: PushRecord[];
}

type Listener<T> = (value: T) => void;

// ---------------------------------------------------------------------------------------------------------
// The store

export class SandboxStore {
  private readonly now: () => Date;
  private readonly users = new Map<string, User>();
  private readonly repos = new Map<string, RepoState>();
  private readonly tokens = new Map<string, TokenInfo>();
  private readonly eventListeners = new Set<Listener<StoreEvent>>();
  private readonly dispatchListeners = new Set<Listener<WorkflowRunRequest>>();
  private readonly cancelListeners = new Set<Listener<{ repo: Repo; run: WorkflowRun }>>();
  private gitBackend: GitBackend | null = null;
  private nextId = 1000;
  /** The GitHub App the sandbox plays host to. */
  readonly app: { id: number; slug: string; name: string; owner: string };
  /** The app's one installation (covering every repository). */
  readonly installationId: number;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.app = options.app ?? { id: 1, slug: "autopilot", name: "Autopilot", owner: "autopilot-dev" };
    this.installationId = options.installationId ?? 100;
    this.addUser(`${this.app.slug}[bot]`, { type: "Bot", permission: "write" });
    this.addUser("github-actions[bot]", { type: "Bot", permission: "write" });
  }

  /** The current time on the store's clock. */
  clock(): Date {
    return this.now();
  }

  private id(): number {
    this.nextId += 1;
    return this.nextId;
  }

  // ----- events --------------------------------------------------------------------------------------------

  /** Subscribes to every state change that GitHub would deliver as a webhook. Returns an unsubscribe. */
  onEvent(listener: Listener<StoreEvent>): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  private emit(event: StoreEvent): void {
    for (const listener of this.eventListeners) listener(event);
  }

  // ----- users and permissions -----------------------------------------------------------------------------

  /** Adds (or updates) a user; `permission` applies to every repository unless overridden per repo. */
  addUser(login: string, options: AddUserOptions = {}): User {
    const key = login.toLowerCase();
    const existing = this.users.get(key);
    if (existing) {
      if (options.permission) existing.permission = options.permission;
      if (options.name !== undefined) existing.name = options.name;
      if (options.email !== undefined) existing.email = options.email;
      return existing;
    }
    const id = this.id();
    const type = options.type ?? "User";
    const user: User = {
      id,
      nodeId: encodeNodeId(type === "Bot" ? "Bot" : type === "Organization" ? "Organization" : "User", id),
      login,
      type,
      name: options.name ?? null,
      email: options.email ?? null,
      permission: options.permission ?? "read",
      createdAt: this.now(),
    };
    this.users.set(key, user);
    return user;
  }

  getUser(login: string): User | undefined {
    return this.users.get(login.toLowerCase());
  }

  getUserById(id: number): User | undefined {
    for (const user of this.users.values()) if (user.id === id) return user;
    return undefined;
  }

  listUsers(): User[] {
    return [...this.users.values()];
  }

  /** Gives `login` a permission on one repository. */
  setPermission(repo: RepoRef, login: string, permission: Permission): void {
    this.state(repo).permissions.set(login.toLowerCase(), permission);
  }

  /** A user's effective permission on a repository: the repo owner is admin, unknown users `none`. */
  getPermission(repo: RepoRef, login: string): Permission {
    const state = this.state(repo);
    const key = login.toLowerCase();
    if (state.repo.owner.toLowerCase() === key) return "admin";
    const override = state.permissions.get(key);
    if (override) return override;
    return this.users.get(key)?.permission ?? "none";
  }

  // ----- tokens --------------------------------------------------------------------------------------------

  /** Creates an installation access token (`ghs_…`, 1 hour), as `POST /app/installations/{id}/access_tokens`. */
  issueInstallationToken(options: { repositories?: string[] } = {}): TokenInfo {
    const token = `ghs_${randomBytes(18).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const info: TokenInfo = {
      token,
      kind: "installation",
      login: `${this.app.slug}[bot]`,
      installationId: this.installationId,
      runId: null,
      repositories: options.repositories ?? null,
      expiresAt: new Date(this.now().getTime() + 3600_000),
      createdAt: this.now(),
    };
    this.tokens.set(token, info);
    return info;
  }

  /**
   * Mints the `GITHUB_TOKEN` of a workflow run (`ghs_…`, kind `worker`, acting as `github-actions[bot]`,
   * limited to the run's repository, valid 24 h).
   */
  mintWorkerToken(runId: number): string {
    const found = this.findRun(runId);
    const token = `ghs_${randomBytes(18).toString("base64url").replace(/[-_]/g, "w").slice(0, 36)}`;
    this.tokens.set(token, {
      token,
      kind: "worker",
      login: "github-actions[bot]",
      installationId: null,
      runId,
      repositories: found ? [found.state.repo.fullName] : null,
      expiresAt: new Date(this.now().getTime() + 24 * 3600_000),
      createdAt: this.now(),
    });
    return token;
  }

  /** The personal token of a scenario human: `ghp_<login>`. The user must exist. */
  userToken(login: string): string {
    const user = this.getUser(login);
    if (!user) throw new StoreError(404, `No such user: ${login}`);
    return `ghp_${user.login}`;
  }

  /** Resolves a `ghs_`/`ghp_` token (not an app JWT); null when unknown or expired. */
  authenticate(token: string): TokenInfo | null {
    if (token.startsWith("ghp_")) {
      const user = this.getUser(token.slice(4));
      if (user?.type !== "User") return null;
      return {
        token,
        kind: "user",
        login: user.login,
        installationId: null,
        runId: null,
        repositories: null,
        expiresAt: null,
        createdAt: user.createdAt,
      };
    }
    const info = this.tokens.get(token);
    if (!info) return null;
    if (info.expiresAt && info.expiresAt.getTime() <= this.now().getTime()) return null;
    return info;
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }

  // ----- repositories --------------------------------------------------------------------------------------

  /** Creates a repository; its owner becomes a user (admin) if unknown. */
  createRepo(input: CreateRepoInput): Repo {
    const key = `${input.owner}/${input.name}`.toLowerCase();
    if (this.repos.has(key)) throw new StoreError(422, "Repository creation failed: name already exists");
    if (!this.getUser(input.owner)) this.addUser(input.owner, { permission: "read" });
    const id = this.id();
    const at = this.now();
    const repo: Repo = {
      id,
      nodeId: encodeNodeId("Repository", id),
      owner: input.owner,
      name: input.name,
      fullName: `${input.owner}/${input.name}`,
      defaultBranch: input.defaultBranch ?? "main",
      private: input.private ?? false,
      description: input.description ?? null,
      createdAt: at,
      updatedAt: at,
      pushedAt: at,
    };
    this.repos.set(key, {
      repo,
      labels: new Map(),
      issues: new Map(),
      comments: new Map(),
      nextNumber: 1,
      refs: new Map([[`refs/heads/${repo.defaultBranch}`, syntheticSha(repo.fullName, "initial")]]),
      files: new Map(),
      checkSuites: new Map(),
      checkRuns: new Map(),
      statuses: [],
      workflows: new Map(),
      runs: new Map(),
      permissions: new Map(),
      pushes: [],
    });
    return repo;
  }

  getRepo(repo: RepoRef): Repo | undefined {
    return this.repos.get(fullNameOf(repo))?.repo;
  }

  getRepoById(id: number): Repo | undefined {
    for (const state of this.repos.values()) if (state.repo.id === id) return state.repo;
    return undefined;
  }

  listRepos(): Repo[] {
    return [...this.repos.values()].map((s) => s.repo);
  }

  private state(repo: RepoRef): RepoState {
    const state = this.repos.get(fullNameOf(repo));
    if (!state) throw new StoreError(404, "Not Found");
    return state;
  }

  // ----- labels --------------------------------------------------------------------------------------------

  createLabel(repo: RepoRef, input: { name: string; color?: string; description?: string | null }): Label {
    const state = this.state(repo);
    if (state.labels.has(input.name.toLowerCase())) {
      throw new StoreError(422, "Validation Failed", [
        { resource: "Label", code: "already_exists", field: "name" },
      ]);
    }
    const id = this.id();
    const label: Label = {
      id,
      nodeId: encodeNodeId("Label", id),
      name: input.name,
      color: (input.color ?? DEFAULT_LABEL_COLOR).replace(/^#/, ""),
      description: input.description ?? null,
      default: false,
    };
    state.labels.set(input.name.toLowerCase(), label);
    return label;
  }

  getLabel(repo: RepoRef, name: string): Label | undefined {
    return this.state(repo).labels.get(name.toLowerCase());
  }

  listLabels(repo: RepoRef): Label[] {
    return [...this.state(repo).labels.values()];
  }

  updateLabel(
    repo: RepoRef,
    name: string,
    patch: { newName?: string; color?: string; description?: string | null },
  ): Label {
    const state = this.state(repo);
    const label = state.labels.get(name.toLowerCase());
    if (!label) throw new StoreError(404, "Not Found");
    if (patch.newName && patch.newName !== label.name) {
      state.labels.delete(label.name.toLowerCase());
      for (const issue of state.issues.values()) {
        issue.labels = issue.labels.map((l) =>
          l.toLowerCase() === label.name.toLowerCase() ? patch.newName! : l,
        );
      }
      label.name = patch.newName;
      state.labels.set(label.name.toLowerCase(), label);
    }
    if (patch.color) label.color = patch.color.replace(/^#/, "");
    if (patch.description !== undefined) label.description = patch.description;
    return label;
  }

  deleteLabel(repo: RepoRef, name: string): void {
    const state = this.state(repo);
    const key = name.toLowerCase();
    if (!state.labels.delete(key)) throw new StoreError(404, "Not Found");
    for (const issue of state.issues.values())
      issue.labels = issue.labels.filter((l) => l.toLowerCase() !== key);
  }

  private ensureLabel(state: RepoState, name: string): Label {
    return state.labels.get(name.toLowerCase()) ?? this.createLabel(state.repo.fullName, { name });
  }

  // ----- issues --------------------------------------------------------------------------------------------

  /** Opens an issue (emits `issues.opened`, then `issues.labeled` per label, each recorded as an event). */
  createIssue(repo: RepoRef, input: CreateIssueInput): Issue {
    const state = this.state(repo);
    const issue = this.newIssue(state, input.title, input.body ?? null, input.author, input.createdAt);
    issue.assignees = [...(input.assignees ?? [])];
    this.emit({ name: "issues", action: "opened", repo: state.repo, sender: input.author, issue });
    if (input.labels?.length) this.applyLabels(state, issue, input.labels, input.author);
    return issue;
  }

  private newIssue(
    state: RepoState,
    title: string,
    body: string | null,
    author: string,
    createdAt?: Date,
  ): Issue {
    if (!title.trim()) {
      throw new StoreError(422, "Validation Failed", [
        { resource: "Issue", code: "missing_field", field: "title" },
      ]);
    }
    const id = this.id();
    const at = createdAt ?? this.now();
    const issue: Issue = {
      id,
      nodeId: encodeNodeId("Issue", id),
      number: state.nextNumber++,
      title,
      body,
      user: author,
      state: "open",
      stateReason: null,
      labels: [],
      assignees: [],
      locked: false,
      activeLockReason: null,
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      closedBy: null,
      events: [],
      reactions: [],
      parent: null,
      subIssues: [],
      blockedBy: [],
      pinned: false,
    };
    state.issues.set(issue.number, issue);
    return issue;
  }

  /** An issue or pull request by number. */
  getIssue(repo: RepoRef, number: number): Issue | undefined {
    return this.state(repo).issues.get(number);
  }

  getIssueById(repo: RepoRef, id: number): Issue | undefined {
    for (const issue of this.state(repo).issues.values()) if (issue.id === id) return issue;
    return undefined;
  }

  /** Like {@link getIssue} but throws a 404 StoreError. */
  requireIssue(repo: RepoRef, number: number): Issue {
    const issue = this.getIssue(repo, number);
    if (!issue) throw new StoreError(404, "Not Found");
    return issue;
  }

  /** Every issue and pull request of a repository, in number order. */
  listIssues(repo: RepoRef): Issue[] {
    return [...this.state(repo).issues.values()];
  }

  /** Edits title/body/state/labels/assignees; emits edited/closed/reopened/labeled/unlabeled. */
  updateIssue(repo: RepoRef, number: number, patch: UpdateIssueInput, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    const changes: { title?: { from: string }; body?: { from: string | null } } = {};
    if (patch.title !== undefined && patch.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.events.push(this.event("renamed", actor, { rename: { from: issue.title, to: patch.title } }));
      issue.title = patch.title;
    }
    if (patch.body !== undefined && patch.body !== issue.body) {
      changes.body = { from: issue.body };
      issue.body = patch.body;
      const edits = issue.contentEdits ?? [];
      if (edits.length === 0) edits.push({ at: issue.createdAt, editor: issue.user });
      edits.push({ at: this.now(), editor: actor });
      issue.contentEdits = edits;
    }
    if (changes.title || changes.body) {
      issue.updatedAt = this.now();
      if (issue.pull) {
        this.emit({
          name: "pull_request",
          action: "edited",
          repo: state.repo,
          sender: actor,
          pull: issue,
          changes,
        });
      } else {
        this.emit({ name: "issues", action: "edited", repo: state.repo, sender: actor, issue, changes });
      }
    }
    if (patch.labels !== undefined) this.setLabels(repo, number, patch.labels, actor);
    if (patch.assignees !== undefined) {
      const next = new Set(patch.assignees.map((a) => a.toLowerCase()));
      for (const a of issue.assignees) {
        if (!next.has(a.toLowerCase())) issue.events.push(this.event("unassigned", actor, { assignee: a }));
      }
      for (const a of patch.assignees) {
        if (!issue.assignees.some((x) => x.toLowerCase() === a.toLowerCase())) {
          issue.events.push(this.event("assigned", actor, { assignee: a }));
        }
      }
      issue.assignees = [...patch.assignees];
    }
    if (patch.state === "closed" && issue.state === "open") {
      this.closeIssue(repo, number, actor, patch.stateReason ?? "completed");
    } else if (patch.state === "open" && issue.state === "closed") {
      this.reopenIssue(repo, number, actor);
    } else if (patch.stateReason !== undefined && patch.stateReason !== null && issue.state === "closed") {
      issue.stateReason = patch.stateReason;
    }
    return issue;
  }

  /** Closes an issue (or an unmerged PR) with a reason; emits `issues.closed` / `pull_request.closed`. */
  closeIssue(repo: RepoRef, number: number, actor: string, reason: StateReason = "completed"): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.state === "closed") return issue;
    const at = this.now();
    issue.state = "closed";
    issue.stateReason = issue.pull ? null : (reason ?? "completed");
    issue.closedAt = at;
    issue.closedBy = actor;
    issue.updatedAt = at;
    issue.events.push(this.event("closed", actor, { stateReason: issue.stateReason, commitId: null }));
    if (issue.pull) {
      this.emit({ name: "pull_request", action: "closed", repo: state.repo, sender: actor, pull: issue });
    } else {
      this.emit({ name: "issues", action: "closed", repo: state.repo, sender: actor, issue });
    }
    return issue;
  }

  /**
   * Deletes an issue for good, with its comments, as an admin can on GitHub (GraphQL `deleteIssue`); emits
   * `issues.deleted`. Afterwards the number answers 404.
   */
  deleteIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.pull) throw new StoreError(422, "Pull requests cannot be deleted");
    state.issues.delete(number);
    for (const [id, comment] of state.comments) if (comment.issueNumber === number) state.comments.delete(id);
    this.emit({ name: "issues", action: "deleted", repo: state.repo, sender: actor, issue });
    return issue;
  }

  reopenIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.state === "open") return issue;
    if (issue.pull?.merged)
      throw new StoreError(422, "Validation Failed: merged pull requests cannot be reopened");
    issue.state = "open";
    issue.stateReason = issue.pull ? null : "reopened";
    issue.closedAt = null;
    issue.closedBy = null;
    issue.updatedAt = this.now();
    issue.events.push(this.event("reopened", actor));
    if (issue.pull) {
      this.emit({ name: "pull_request", action: "reopened", repo: state.repo, sender: actor, pull: issue });
    } else {
      this.emit({ name: "issues", action: "reopened", repo: state.repo, sender: actor, issue });
    }
    return issue;
  }

  lockIssue(repo: RepoRef, number: number, actor: string, reason: LockReason = null): void {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    issue.locked = true;
    issue.activeLockReason = reason;
    issue.events.push(this.event("locked", actor, { lockReason: reason }));
    if (!issue.pull) this.emit({ name: "issues", action: "locked", repo: state.repo, sender: actor, issue });
  }

  unlockIssue(repo: RepoRef, number: number, actor: string): void {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.locked) throw new StoreError(404, "Not Found");
    issue.locked = false;
    issue.activeLockReason = null;
    issue.events.push(this.event("unlocked", actor));
    if (!issue.pull)
      this.emit({ name: "issues", action: "unlocked", repo: state.repo, sender: actor, issue });
  }

  private event(
    kind: IssueEvent["event"],
    actor: string,
    extra: Partial<Omit<IssueEvent, "id" | "nodeId" | "event" | "actor" | "createdAt">> = {},
  ): IssueEvent {
    const id = this.id();
    return { id, nodeId: encodeNodeId("Event", id), event: kind, actor, createdAt: this.now(), ...extra };
  }

  /** Adds labels (creating unknown ones, as GitHub does); records `labeled` events with the actor. */
  addLabels(repo: RepoRef, number: number, labels: string[], actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    this.applyLabels(state, issue, labels, actor);
    return this.labelsOf(repo, issue);
  }

  /** Replaces an issue's labels; emits unlabeled for removed and labeled for added ones. */
  setLabels(repo: RepoRef, number: number, labels: string[], actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    const wanted = new Set(labels.map((l) => l.toLowerCase()));
    for (const name of [...issue.labels]) {
      if (!wanted.has(name.toLowerCase())) this.unapplyLabel(state, issue, name, actor);
    }
    this.applyLabels(state, issue, labels, actor);
    return this.labelsOf(repo, issue);
  }

  /** Removes one label; 404 when the issue does not carry it (as GitHub). */
  removeLabel(repo: RepoRef, number: number, name: string, actor: string): Label[] {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.labels.some((l) => l.toLowerCase() === name.toLowerCase())) {
      throw new StoreError(404, "Label does not exist");
    }
    this.unapplyLabel(state, issue, name, actor);
    return this.labelsOf(repo, issue);
  }

  /** Removes every label of an issue. */
  clearLabels(repo: RepoRef, number: number, actor: string): void {
    this.setLabels(repo, number, [], actor);
  }

  /** The label records an issue carries, in the order applied. */
  labelsOf(repo: RepoRef, issue: Issue): Label[] {
    const state = this.state(repo);
    return issue.labels.map((name) => state.labels.get(name.toLowerCase())).filter((l): l is Label => !!l);
  }

  private applyLabels(state: RepoState, issue: Issue, labels: string[], actor: string): void {
    for (const name of labels) {
      if (issue.labels.some((l) => l.toLowerCase() === name.toLowerCase())) continue;
      const label = this.ensureLabel(state, name);
      issue.labels.push(label.name);
      issue.updatedAt = this.now();
      issue.events.push(this.event("labeled", actor, { label: { name: label.name, color: label.color } }));
      if (issue.pull) {
        this.emit({
          name: "pull_request",
          action: "labeled",
          repo: state.repo,
          sender: actor,
          pull: issue,
          label,
        });
      } else {
        this.emit({ name: "issues", action: "labeled", repo: state.repo, sender: actor, issue, label });
      }
    }
  }

  private unapplyLabel(state: RepoState, issue: Issue, name: string, actor: string): void {
    const index = issue.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (index < 0) return;
    const [removed] = issue.labels.splice(index, 1);
    const label = state.labels.get(removed!.toLowerCase()) ?? this.ensureLabel(state, removed!);
    issue.updatedAt = this.now();
    issue.events.push(this.event("unlabeled", actor, { label: { name: label.name, color: label.color } }));
    if (issue.pull) {
      this.emit({
        name: "pull_request",
        action: "unlabeled",
        repo: state.repo,
        sender: actor,
        pull: issue,
        label,
      });
    } else {
      this.emit({ name: "issues", action: "unlabeled", repo: state.repo, sender: actor, issue, label });
    }
  }

  /** Who last applied a label to an issue (from its `labeled` events), or null. */
  whoLabeled(repo: RepoRef, number: number, label: string): string | null {
    const issue = this.requireIssue(repo, number);
    for (let i = issue.events.length - 1; i >= 0; i--) {
      const e = issue.events[i]!;
      if (e.event === "labeled" && e.label?.name.toLowerCase() === label.toLowerCase()) return e.actor;
    }
    return null;
  }

  // ----- pinned issues --------------------------------------------------------------------------------------

  /** Pins an issue; at most 3 per repository (GitHub's limit) — a 4th fails with a 422 StoreError. */
  pinIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.pull) throw new StoreError(422, "Pull requests cannot be pinned");
    if (issue.pinned) return issue;
    const pinned = [...state.issues.values()].filter((i) => i.pinned).length;
    if (pinned >= 3) throw new StoreError(422, "You can't pin more than 3 issues");
    issue.pinned = true;
    issue.events.push(this.event("pinned", actor));
    this.emit({ name: "issues", action: "pinned", repo: state.repo, sender: actor, issue });
    return issue;
  }

  unpinIssue(repo: RepoRef, number: number, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (!issue.pinned) return issue;
    issue.pinned = false;
    issue.events.push(this.event("unpinned", actor));
    this.emit({ name: "issues", action: "unpinned", repo: state.repo, sender: actor, issue });
    return issue;
  }

  listPinnedIssues(repo: RepoRef): Issue[] {
    return this.listIssues(repo).filter((i) => i.pinned);
  }

  // ----- sub-issues and dependencies ----------------------------------------------------------------------

  /** Makes `child` a sub-issue of `parent` (both issue numbers). A child has one parent (422 otherwise). */
  addSubIssue(repo: RepoRef, parent: number, child: number, actor: string, replaceParent = false): Issue {
    const state = this.state(repo);
    const p = this.requireIssue(repo, parent);
    const c = this.requireIssue(repo, child);
    if (p.pull || c.pull) throw new StoreError(422, "Pull requests cannot be sub-issues");
    if (parent === child) throw new StoreError(422, "An issue cannot be its own sub-issue");
    if (c.parent !== null && c.parent !== parent) {
      if (!replaceParent)
        throw new StoreError(422, "Issue may not contain duplicate sub-issues or already has a parent");
      this.removeSubIssue(repo, c.parent, child, actor);
    }
    for (let up: number | null = parent; up !== null; up = this.getIssue(repo, up)?.parent ?? null) {
      if (up === child) throw new StoreError(422, "Sub-issue would create a cycle");
    }
    if (!p.subIssues.includes(child)) p.subIssues.push(child);
    c.parent = parent;
    p.events.push(this.event("sub_issue_added", actor));
    this.emit({
      name: "sub_issues",
      action: "sub_issue_added",
      repo: state.repo,
      sender: actor,
      issue: p,
      other: c,
    });
    this.emit({
      name: "sub_issues",
      action: "parent_issue_added",
      repo: state.repo,
      sender: actor,
      issue: c,
      other: p,
    });
    return c;
  }

  removeSubIssue(repo: RepoRef, parent: number, child: number, actor: string): Issue {
    const state = this.state(repo);
    const p = this.requireIssue(repo, parent);
    const c = this.requireIssue(repo, child);
    if (c.parent !== parent) throw new StoreError(404, "Not Found");
    p.subIssues = p.subIssues.filter((n) => n !== child);
    c.parent = null;
    p.events.push(this.event("sub_issue_removed", actor));
    this.emit({
      name: "sub_issues",
      action: "sub_issue_removed",
      repo: state.repo,
      sender: actor,
      issue: p,
      other: c,
    });
    return c;
  }

  /** Records that `number` is blocked by `blocker` (GitHub's issue dependencies). */
  addBlockedBy(repo: RepoRef, number: number, blocker: number, actor: string): Issue {
    const issue = this.requireIssue(repo, number);
    const other = this.requireIssue(repo, blocker);
    if (number === blocker) throw new StoreError(422, "An issue cannot block itself");
    if (!issue.blockedBy.includes(other.number)) {
      issue.blockedBy.push(other.number);
      issue.events.push(this.event("blocked_by_added", actor));
    }
    return other;
  }

  removeBlockedBy(repo: RepoRef, number: number, blocker: number, actor: string): Issue {
    const issue = this.requireIssue(repo, number);
    const other = this.requireIssue(repo, blocker);
    if (!issue.blockedBy.includes(blocker)) throw new StoreError(404, "Not Found");
    issue.blockedBy = issue.blockedBy.filter((n) => n !== blocker);
    issue.events.push(this.event("blocked_by_removed", actor));
    return other;
  }

  /** Issues that `number` blocks. */
  listBlocking(repo: RepoRef, number: number): Issue[] {
    return this.listIssues(repo).filter((i) => i.blockedBy.includes(number));
  }

  // ----- comments and reactions ---------------------------------------------------------------------------

  /** Comments on an issue or PR; emits `issue_comment.created`. */
  createComment(repo: RepoRef, number: number, body: string, author: string, createdAt?: Date): Comment {
    const state = this.state(repo);
    const issue = this.requireIssue(repo, number);
    if (issue.locked && !permissionAtLeast(this.getPermissionSafe(state, author), "write")) {
      throw new StoreError(403, "Unable to create comment because issue is locked.");
    }
    const id = this.id();
    const at = createdAt ?? this.now();
    const comment: Comment = {
      id,
      nodeId: encodeNodeId("IssueComment", id),
      issueNumber: number,
      body,
      user: author,
      createdAt: at,
      updatedAt: at,
      reactions: [],
    };
    state.comments.set(id, comment);
    issue.updatedAt = at;
    this.emit({ name: "issue_comment", action: "created", repo: state.repo, sender: author, issue, comment });
    return comment;
  }

  private getPermissionSafe(state: RepoState, login: string): Permission {
    return this.getPermission(state.repo.fullName, login);
  }

  getComment(repo: RepoRef, id: number): Comment | undefined {
    return this.state(repo).comments.get(id);
  }

  /** Comments of one issue (oldest first), or of the whole repository when `number` is omitted. */
  listComments(repo: RepoRef, number?: number): Comment[] {
    const all = [...this.state(repo).comments.values()];
    return number === undefined ? all : all.filter((c) => c.issueNumber === number);
  }

  updateComment(repo: RepoRef, id: number, body: string, actor: string): Comment {
    const state = this.state(repo);
    const comment = state.comments.get(id);
    if (!comment) throw new StoreError(404, "Not Found");
    const from = comment.body;
    comment.body = body;
    comment.updatedAt = this.now();
    const issue = this.requireIssue(repo, comment.issueNumber);
    this.emit({
      name: "issue_comment",
      action: "edited",
      repo: state.repo,
      sender: actor,
      issue,
      comment,
      changes: { body: { from } },
    });
    return comment;
  }

  deleteComment(repo: RepoRef, id: number, actor: string): void {
    const state = this.state(repo);
    const comment = state.comments.get(id);
    if (!comment) throw new StoreError(404, "Not Found");
    state.comments.delete(id);
    const issue = this.requireIssue(repo, comment.issueNumber);
    this.emit({ name: "issue_comment", action: "deleted", repo: state.repo, sender: actor, issue, comment });
  }

  /** Adds a reaction to a comment (`{ commentId }`) or an issue (`{ issueNumber }`); an existing one is returned. */
  addReaction(
    repo: RepoRef,
    target: { commentId: number } | { issueNumber: number },
    content: ReactionContent,
    user: string,
  ): { reaction: Reaction; created: boolean } {
    const list = this.reactionList(repo, target);
    const existing = list.find((r) => r.user.toLowerCase() === user.toLowerCase() && r.content === content);
    if (existing) return { reaction: existing, created: false };
    const id = this.id();
    const reaction: Reaction = {
      id,
      nodeId: encodeNodeId("Reaction", id),
      user,
      content,
      createdAt: this.now(),
    };
    list.push(reaction);
    return { reaction, created: true };
  }

  listReactions(repo: RepoRef, target: { commentId: number } | { issueNumber: number }): Reaction[] {
    return [...this.reactionList(repo, target)];
  }

  deleteReaction(
    repo: RepoRef,
    target: { commentId: number } | { issueNumber: number },
    reactionId: number,
  ): void {
    const list = this.reactionList(repo, target);
    const index = list.findIndex((r) => r.id === reactionId);
    if (index < 0) throw new StoreError(404, "Not Found");
    list.splice(index, 1);
  }

  private reactionList(repo: RepoRef, target: { commentId: number } | { issueNumber: number }): Reaction[] {
    if ("commentId" in target) {
      const comment = this.getComment(repo, target.commentId);
      if (!comment) throw new StoreError(404, "Not Found");
      return comment.reactions;
    }
    return this.requireIssue(repo, target.issueNumber).reactions;
  }

  // ----- git: refs, files, pushes -------------------------------------------------------------------------

  /** Registers real git (the smart-HTTP remote). Refs then come from it instead of memory. */
  setGitBackend(backend: GitBackend | null): void {
    this.gitBackend = backend;
  }

  getGitBackend(): GitBackend | null {
    return this.gitBackend;
  }

  /** All refs of a repository (full names). */
  async listRefs(repo: RepoRef): Promise<GitRefEntry[]> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.listRefs(repoKeyOf(state.repo.fullName));
    return [...state.refs.entries()]
      .map(([ref, sha]) => ({ ref, sha }))
      .sort((a, b) => a.ref.localeCompare(b.ref));
  }

  /** Resolves a branch name, full ref or SHA to a commit SHA; null when unknown. */
  async resolveRef(repo: RepoRef, ref: string): Promise<string | null> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.resolveRef(repoKeyOf(state.repo.fullName), ref);
    const direct = state.refs.get(ref) ?? state.refs.get(fullRef(ref)) ?? state.refs.get(`refs/tags/${ref}`);
    if (direct) return direct;
    if (/^[0-9a-f]{7,40}$/.test(ref)) {
      for (const sha of state.refs.values()) if (sha.startsWith(ref)) return sha;
      for (const issue of state.issues.values())
        if (issue.pull?.head.sha.startsWith(ref)) return issue.pull.head.sha;
      if (ref.length === 40) return ref;
    }
    return null;
  }

  /** Creates a ref (`refs/heads/x`); 422 when it exists. Emits `create`. */
  async createRef(repo: RepoRef, ref: string, sha: string, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const existing = await this.resolveExactRef(state, name);
    if (existing) throw new StoreError(422, "Reference already exists");
    if (this.gitBackend) await this.gitBackend.createRef(repoKeyOf(state.repo.fullName), name, sha);
    else state.refs.set(name, sha);
    this.emit({
      name: "create",
      repo: state.repo,
      sender: actor,
      ref: branchOf(name).replace(/^refs\/tags\//, ""),
      refType: name.startsWith("refs/tags/") ? "tag" : "branch",
    });
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before: ZERO_SHA, after: sha, pusher: actor },
      false,
    );
  }

  /** Moves a ref (fast-forward only unless `force`); updates PR heads and emits push/synchronize. */
  async updateRef(repo: RepoRef, ref: string, sha: string, force: boolean, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const before = await this.resolveExactRef(state, name);
    if (!before) throw new StoreError(422, "Reference does not exist");
    if (this.gitBackend) {
      if (!this.gitBackend.updateRef)
        throw new StoreError(422, "Updating refs is not supported by the git backend");
      await this.gitBackend.updateRef(repoKeyOf(state.repo.fullName), name, sha, force);
    } else {
      state.refs.set(name, sha);
    }
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before, after: sha, pusher: actor, forced: force },
      false,
    );
  }

  /** Deletes a ref; 422 when it does not exist. Emits `delete` and `push`. */
  async deleteRef(repo: RepoRef, ref: string, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const before = await this.resolveExactRef(state, name);
    if (!before) throw new StoreError(422, "Reference does not exist");
    if (this.gitBackend) await this.gitBackend.deleteRef(repoKeyOf(state.repo.fullName), name);
    else state.refs.delete(name);
    this.emit({
      name: "delete",
      repo: state.repo,
      sender: actor,
      ref: branchOf(name).replace(/^refs\/tags\//, ""),
      refType: name.startsWith("refs/tags/") ? "tag" : "branch",
    });
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before, after: ZERO_SHA, pusher: actor },
      false,
    );
  }

  private async resolveExactRef(state: RepoState, name: string): Promise<string | null> {
    if (this.gitBackend) {
      const refs = await this.gitBackend.listRefs(repoKeyOf(state.repo.fullName));
      return refs.find((r) => r.ref === name)?.sha ?? null;
    }
    return state.refs.get(name) ?? null;
  }

  /**
   * Tells the store that a ref moved (called by the git remote after `git push`, and internally for REST ref
   * changes). Without a git backend it moves the in-memory ref. Updates the head SHA of open PRs on that
   * branch (emitting `pull_request.synchronize`), marks their mergeability unknown, and emits `push`.
   */
  async recordPush(input: PushInput, moveRef = true): Promise<PushRecord> {
    const state = this.state(input.repo);
    const ref = fullRef(input.ref);
    const created = input.before === ZERO_SHA || /^0+$/.test(input.before);
    const deleted = input.after === ZERO_SHA || /^0+$/.test(input.after);
    if (moveRef && !this.gitBackend) {
      if (deleted) state.refs.delete(ref);
      else state.refs.set(ref, input.after);
    }
    const at = this.now();
    const record: PushRecord = {
      ref,
      before: input.before,
      after: input.after,
      created,
      deleted,
      forced: input.forced ?? false,
      pusher: input.pusher,
      commits: input.commits ?? [],
      at,
    };
    state.pushes.push(record);
    state.repo.pushedAt = at;
    this.emit({ name: "push", repo: state.repo, sender: input.pusher, push: record });
    if (ref.startsWith("refs/heads/") && !deleted) {
      const branch = branchOf(ref);
      for (const issue of state.issues.values()) {
        const pull = issue.pull;
        if (!pull || issue.state !== "open") continue;
        if (pull.head.ref === branch && pull.head.sha !== input.after) {
          const before = pull.head.sha;
          pull.head.sha = input.after;
          pull.mergeable = null;
          pull.mergeableState = "unknown";
          issue.updatedAt = at;
          if (record.forced) issue.events.push(this.event("head_ref_force_pushed", input.pusher));
          this.emit({
            name: "pull_request",
            action: "synchronize",
            repo: state.repo,
            sender: input.pusher,
            pull: issue,
            before,
            after: input.after,
          });
        } else if (pull.base.ref === branch) {
          pull.base.sha = input.after;
          pull.mergeable = null;
          pull.mergeableState = "unknown";
        }
      }
    }
    return record;
  }

  /** Pushes recorded for a repository, oldest first. */
  listPushes(repo: RepoRef): PushRecord[] {
    return [...this.state(repo).pushes];
  }

  /** `base...head` through the git backend; without one, an empty diff with ahead_by 1 when they differ. */
  async compare(repo: RepoRef, base: string, head: string): Promise<CompareResult> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.compare(repoKeyOf(state.repo.fullName), base, head);
    const baseSha = await this.resolveRef(repo, base);
    const headSha = await this.resolveRef(repo, head);
    if (!baseSha || !headSha) throw new StoreError(404, "Not Found");
    return { files: [], ahead_by: baseSha === headSha ? 0 : 1, behind_by: 0 };
  }

  /** Sets a file for the in-memory mode (the contents API reads it when no git backend is registered). */
  setFile(repo: RepoRef, path: string, content: string | Buffer): void {
    this.state(repo).files.set(path.replace(/^\/+/, ""), Buffer.from(content));
  }

  /** A file's content at a ref (default branch when omitted); null when absent. */
  async readFile(repo: RepoRef, path: string, ref?: string): Promise<Buffer | null> {
    const state = this.state(repo);
    const clean = path.replace(/^\/+/, "");
    if (this.gitBackend?.readFile) {
      return this.gitBackend.readFile(repoKeyOf(state.repo.fullName), ref ?? state.repo.defaultBranch, clean);
    }
    return state.files.get(clean) ?? null;
  }

  /** Every tree entry below a commit or tree (recursive), with modes; null when the ref is unknown. */
  async treeEntries(repo: RepoRef, ref: string): Promise<TreeEntry[] | null> {
    const state = this.state(repo);
    if (this.gitBackend?.treeEntries) return this.gitBackend.treeEntries(repoKeyOf(state.repo.fullName), ref);
    // Without git, files are plain and every directory is implied by its files.
    const entries = new Map<string, TreeEntry>();
    for (const [file, content] of state.files) {
      const parts = file.split("/");
      for (let i = 1; i < parts.length; i++) {
        const dir = parts.slice(0, i).join("/");
        entries.set(dir, { path: dir, mode: "040000", type: "tree", sha: syntheticSha("tree", dir) });
      }
      entries.set(file, {
        path: file,
        mode: "100644",
        type: "blob",
        sha: syntheticSha("blob", file),
        size: content.length,
      });
    }
    return [...entries.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Directory entries at a ref; null when not a directory. */
  async listDirectory(
    repo: RepoRef,
    path: string,
    ref?: string,
  ): Promise<Array<{ name: string; path: string; type: "file" | "dir"; sha: string; size: number }> | null> {
    const state = this.state(repo);
    const clean = path.replace(/^\/+|\/+$/g, "");
    if (this.gitBackend?.listDirectory) {
      return this.gitBackend.listDirectory(
        repoKeyOf(state.repo.fullName),
        ref ?? state.repo.defaultBranch,
        clean,
      );
    }
    const prefix = clean ? `${clean}/` : "";
    const entries = new Map<
      string,
      { name: string; path: string; type: "file" | "dir"; sha: string; size: number }
    >();
    for (const [file, content] of state.files) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const [first, ...more] = rest.split("/");
      if (!first) continue;
      const entryPath = prefix + first;
      entries.set(first, {
        name: first,
        path: entryPath,
        type: more.length ? "dir" : "file",
        sha: syntheticSha(entryPath, more.length ? "tree" : content.toString("base64")),
        size: more.length ? 0 : content.length,
      });
    }
    return entries.size ? [...entries.values()] : null;
  }

  async getCommit(repo: RepoRef, sha: string): Promise<CommitInfo | null> {
    const state = this.state(repo);
    if (this.gitBackend?.getCommit) return this.gitBackend.getCommit(repoKeyOf(state.repo.fullName), sha);
    const resolved = await this.resolveRef(repo, sha);
    if (!resolved) return null;
    const push = [...state.pushes].reverse().find((p) => p.after === resolved);
    const commit = push?.commits.find((c) => c.id === resolved);
    const date = (push?.at ?? state.repo.createdAt).toISOString();
    return {
      sha: resolved,
      message: commit?.message ?? "Commit",
      authorName: commit?.author.name ?? "sandbox",
      authorEmail: commit?.author.email ?? "sandbox@users.noreply.github.com",
      authorDate: commit?.timestamp ?? date,
      committerDate: commit?.timestamp ?? date,
      parents: push && !push.created ? [push.before] : [],
    };
  }

  // ----- pull requests ------------------------------------------------------------------------------------

  /** Opens a pull request from an existing branch; emits `pull_request.opened`. */
  async createPull(repo: RepoRef, input: CreatePullInput): Promise<Issue> {
    const state = this.state(repo);
    const headBranch = input.head.includes(":") ? input.head.slice(input.head.indexOf(":") + 1) : input.head;
    // `head: "user:branch"` names a branch in that user's fork when the user is not the repository's owner:
    // https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request
    const headOwner = input.head.includes(":") ? input.head.slice(0, input.head.indexOf(":")) : null;
    const fork =
      headOwner && headOwner.toLowerCase() !== state.repo.owner.toLowerCase()
        ? `${headOwner}/${state.repo.name}`
        : undefined;
    const headSha = await this.resolveRef(
      repo,
      fork ? forkBranchRef(headOwner!, headBranch) : fullRef(headBranch),
    );
    const baseSha = await this.resolveRef(repo, fullRef(input.base));
    const invalid = (field: string) =>
      new StoreError(422, "Validation Failed", [{ resource: "PullRequest", field, code: "invalid" }]);
    if (!headSha) throw invalid("head");
    if (!baseSha) throw invalid("base");
    for (const other of state.issues.values()) {
      if (
        other.pull &&
        other.state === "open" &&
        other.pull.head.ref === headBranch &&
        other.pull.headRepo === fork &&
        other.pull.base.ref === input.base
      ) {
        throw new StoreError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: `A pull request already exists for ${state.repo.owner}:${headBranch}.`,
          },
        ]);
      }
    }
    if (headSha === baseSha) {
      throw new StoreError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `No commits between ${input.base} and ${headBranch}`,
        },
      ]);
    }
    const issue = this.newIssue(state, input.title, input.body ?? null, input.author);
    const pullId = this.id();
    issue.pull = {
      id: pullId,
      nodeId: encodeNodeId("PullRequest", pullId),
      head: { ref: headBranch, sha: headSha },
      base: { ref: input.base, sha: baseSha },
      draft: input.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      mergeable: null,
      mergeableState: "unknown",
      requestedReviewers: [],
      reviews: [],
      additions: 0,
      deletions: 0,
      changedFiles: 0,
      commits: 0,
      maintainerCanModify: input.maintainerCanModify ?? true,
      ...(fork ? { headRepo: fork } : {}),
    };
    await this.refreshPull(repo, issue.number);
    this.emit({
      name: "pull_request",
      action: "opened",
      repo: state.repo,
      sender: input.author,
      pull: issue,
    });
    return issue;
  }

  /** A pull request (an issue with `pull` set), or undefined. */
  getPull(repo: RepoRef, number: number): Issue | undefined {
    const issue = this.getIssue(repo, number);
    return issue?.pull ? issue : undefined;
  }

  requirePull(repo: RepoRef, number: number): Issue & { pull: PullFields } {
    const issue = this.getIssue(repo, number);
    if (!issue?.pull) throw new StoreError(404, "Not Found");
    return issue as Issue & { pull: PullFields };
  }

  listPulls(repo: RepoRef): Array<Issue & { pull: PullFields }> {
    return this.listIssues(repo).filter((i): i is Issue & { pull: PullFields } => !!i.pull);
  }

  /**
   * Recomputes a PR's head/base SHAs, diff stats and mergeability from git (GitHub does this lazily; the
   * REST and GraphQL layers call it before answering).
   */
  async refreshPull(repo: RepoRef, number: number): Promise<Issue & { pull: PullFields }> {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const pull = issue.pull;
    const key = repoKeyOf(state.repo.fullName);
    if (issue.state === "open") {
      const headSha = await this.resolveRef(repo, headRefOf(pull));
      if (headSha) pull.head.sha = headSha;
      const baseSha = await this.resolveRef(repo, fullRef(pull.base.ref));
      if (baseSha) pull.base.sha = baseSha;
      try {
        const diff = await this.compare(repo, pull.base.sha, pull.head.sha);
        pull.additions = diff.files.reduce((n, f) => n + f.additions, 0);
        pull.deletions = diff.files.reduce((n, f) => n + f.deletions, 0);
        pull.changedFiles = diff.files.length;
        pull.commits = diff.ahead_by;
      } catch {
        // a vanished branch leaves the last known numbers
      }
      let clean = true;
      if (this.gitBackend?.canMerge)
        clean = await this.gitBackend.canMerge(key, pull.base.ref, pull.head.sha);
      pull.mergeable = clean;
      pull.mergeableState = pull.draft ? "draft" : clean ? this.cleanStateFor(state, pull.head.sha) : "dirty";
    }
    return issue;
  }

  private cleanStateFor(state: RepoState, sha: string): PullFields["mergeableState"] {
    const runs = [...state.checkRuns.values()].filter((r) => r.headSha === sha);
    const statuses = this.latestStatuses(state, sha);
    const failing =
      runs.some(
        (r) => r.status === "completed" && !["success", "neutral", "skipped"].includes(r.conclusion ?? ""),
      ) || statuses.some((s) => s.state === "failure" || s.state === "error");
    const pending = runs.some((r) => r.status !== "completed") || statuses.some((s) => s.state === "pending");
    return failing || pending ? "unstable" : "clean";
  }

  /** Edits a PR (title/body/state/base); emits edited/closed/reopened. */
  updatePull(repo: RepoRef, number: number, patch: UpdatePullInput, actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const changes: {
      title?: { from: string };
      body?: { from: string | null };
      base?: { ref: { from: string } };
    } = {};
    if (patch.title !== undefined && patch.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = patch.title;
    }
    if (patch.body !== undefined && patch.body !== issue.body) {
      changes.body = { from: issue.body };
      issue.body = patch.body;
    }
    if (patch.base !== undefined && patch.base !== issue.pull.base.ref) {
      changes.base = { ref: { from: issue.pull.base.ref } };
      issue.pull.base.ref = patch.base;
      issue.pull.mergeable = null;
      issue.pull.mergeableState = "unknown";
    }
    if (Object.keys(changes).length) {
      issue.updatedAt = this.now();
      this.emit({
        name: "pull_request",
        action: "edited",
        repo: state.repo,
        sender: actor,
        pull: issue,
        changes,
      });
    }
    if (patch.state === "closed") this.closeIssue(repo, number, actor);
    else if (patch.state === "open") this.reopenIssue(repo, number, actor);
    return issue;
  }

  /**
   * Merges a PR through the git backend (or in memory): 405 when not mergeable or already merged, 409 when
   * `sha` does not match the head. Closes the PR as merged, emits `pull_request.closed` (merged) and the
   * base branch's `push`.
   */
  async mergePull(
    repo: RepoRef,
    number: number,
    options: { method?: MergeMethod; commitTitle?: string; commitMessage?: string; sha?: string },
    actor: string,
  ): Promise<{ sha: string; merged: true; message: string }> {
    const state = this.state(repo);
    const issue = await this.refreshPull(repo, number);
    const pull = issue.pull;
    if (pull.merged) throw new StoreError(405, "Pull Request is not mergeable");
    if (issue.state !== "open") throw new StoreError(405, "Pull Request is not mergeable");
    if (pull.draft) throw new StoreError(405, "Pull Request is still a draft");
    if (options.sha && options.sha !== pull.head.sha) {
      throw new StoreError(409, "Head branch was modified. Review and try the merge again.");
    }
    const method = options.method ?? "merge";
    const title =
      options.commitTitle ??
      (method === "merge"
        ? `Merge pull request #${number} from ${state.repo.owner}/${pull.head.ref}`
        : `${issue.title} (#${number})`);
    const message = options.commitMessage ? `${title}\n\n${options.commitMessage}` : title;
    const before = pull.base.sha;
    let sha: string;
    if (this.gitBackend) {
      const outcome = await this.gitBackend.mergeBranches(
        repoKeyOf(state.repo.fullName),
        pull.base.ref,
        pull.head.ref,
        method,
        message,
      );
      if ("conflict" in outcome) {
        pull.mergeable = false;
        pull.mergeableState = "dirty";
        throw new StoreError(405, "Pull Request is not mergeable");
      }
      sha = outcome.sha;
    } else {
      if (pull.mergeable === false) throw new StoreError(405, "Pull Request is not mergeable");
      sha = method === "rebase" ? pull.head.sha : syntheticSha(before, pull.head.sha, message);
      state.refs.set(fullRef(pull.base.ref), sha);
    }
    const at = this.now();
    pull.merged = true;
    pull.mergedAt = at;
    pull.mergedBy = actor;
    pull.mergeCommitSha = sha;
    pull.mergeable = null;
    pull.mergeableState = "unknown";
    pull.base.sha = before;
    issue.state = "closed";
    issue.closedAt = at;
    issue.closedBy = actor;
    issue.updatedAt = at;
    issue.events.push(this.event("merged", actor, { commitId: sha }));
    issue.events.push(this.event("closed", actor, { commitId: sha }));
    await this.recordPush(
      {
        repo: state.repo.fullName,
        ref: fullRef(pull.base.ref),
        before,
        after: sha,
        pusher: actor,
        commits: [
          {
            id: sha,
            message,
            timestamp: at.toISOString(),
            author: {
              name: actor,
              email: /^[A-Za-z0-9-]+$/.test(actor)
                ? `${actor}@users.noreply.github.com`
                : "noreply@github.com",
              username: actor,
            },
          },
        ],
      },
      false,
    );
    this.emit({ name: "pull_request", action: "closed", repo: state.repo, sender: actor, pull: issue });
    this.closeLinkedIssues(state, issue, actor, sha);
    return { sha, merged: true, message: "Pull Request successfully merged" };
  }

  /** GitHub closes `Closes #N` / `Fixes #N` issues when a PR merges into the default branch. */
  private closeLinkedIssues(
    state: RepoState,
    pull: Issue & { pull: PullFields },
    actor: string,
    sha: string,
  ): void {
    if (pull.pull.base.ref !== state.repo.defaultBranch) return;
    const pattern = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/gi;
    for (const match of (pull.body ?? "").matchAll(pattern)) {
      const target = state.issues.get(Number(match[1]));
      if (!target || target.pull || target.state === "closed") continue;
      this.closeIssue(state.repo.fullName, target.number, actor, "completed");
      const last = target.events[target.events.length - 1];
      if (last?.event === "closed") last.commitId = sha;
    }
  }

  requestReviewers(repo: RepoRef, number: number, reviewers: string[], actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    for (const reviewer of reviewers) {
      if (!this.getUser(reviewer)) {
        throw new StoreError(
          422,
          "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the repository.",
        );
      }
      if (issue.pull.requestedReviewers.some((r) => r.toLowerCase() === reviewer.toLowerCase())) continue;
      issue.pull.requestedReviewers.push(reviewer);
      issue.events.push(this.event("review_requested", actor, { requestedReviewer: reviewer }));
      this.emit({
        name: "pull_request",
        action: "review_requested",
        repo: state.repo,
        sender: actor,
        pull: issue,
        requestedReviewer: reviewer,
      });
    }
    return issue;
  }

  removeRequestedReviewers(repo: RepoRef, number: number, reviewers: string[], actor: string): Issue {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const drop = new Set(reviewers.map((r) => r.toLowerCase()));
    const removed = issue.pull.requestedReviewers.filter((r) => drop.has(r.toLowerCase()));
    issue.pull.requestedReviewers = issue.pull.requestedReviewers.filter((r) => !drop.has(r.toLowerCase()));
    for (const reviewer of removed) {
      this.emit({
        name: "pull_request",
        action: "review_request_removed",
        repo: state.repo,
        sender: actor,
        pull: issue,
        requestedReviewer: reviewer,
      });
    }
    return issue;
  }

  /**
   * Creates a review with `commitId` = the PR head now (unless given). With an event it is submitted at once
   * (emits `pull_request_review.submitted`); without one it stays PENDING.
   */
  createReview(repo: RepoRef, number: number, input: CreateReviewInput): Review {
    const issue = this.requirePull(repo, number);
    if (input.event && input.event !== "COMMENT" && issue.user.toLowerCase() === input.author.toLowerCase()) {
      throw new StoreError(422, "Unprocessable Entity", [
        { resource: "PullRequestReview", code: "custom", message: "Can not approve your own pull request" },
      ]);
    }
    if (input.event === "REQUEST_CHANGES" || input.event === "COMMENT") {
      if (!input.body?.trim() && input.event === "REQUEST_CHANGES") {
        throw new StoreError(422, "Unprocessable Entity", [
          {
            resource: "PullRequestReview",
            code: "custom",
            message: "Body is required for event REQUEST_CHANGES",
          },
        ]);
      }
    }
    const id = this.id();
    const review: Review = {
      id,
      nodeId: encodeNodeId("PullRequestReview", id),
      user: input.author,
      body: input.body ?? "",
      state: "PENDING",
      commitId: input.commitId ?? issue.pull.head.sha,
      submittedAt: null,
      comments: [],
    };
    for (const comment of input.comments ?? []) {
      const commentId = this.id();
      review.comments.push({
        id: commentId,
        nodeId: encodeNodeId("PullRequestReviewComment", commentId),
        reviewId: id,
        user: input.author,
        body: comment.body,
        path: comment.path,
        line: comment.line ?? null,
        commitId: review.commitId,
        createdAt: this.now(),
      });
    }
    issue.pull.reviews.push(review);
    if (input.event) this.submitReview(repo, number, id, input.event, input.body, input.author);
    return review;
  }

  /** Submits a PENDING review. */
  submitReview(
    repo: RepoRef,
    number: number,
    reviewId: number,
    event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT",
    body: string | undefined,
    actor: string,
  ): Review {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const review = issue.pull.reviews.find((r) => r.id === reviewId);
    if (!review) throw new StoreError(404, "Not Found");
    if (review.state !== "PENDING") {
      throw new StoreError(422, "Unprocessable Entity", [
        { resource: "PullRequestReview", code: "custom", message: "Can not submit a non-pending review" },
      ]);
    }
    review.state =
      event === "APPROVE" ? "APPROVED" : event === "REQUEST_CHANGES" ? "CHANGES_REQUESTED" : "COMMENTED";
    if (body !== undefined) review.body = body;
    review.submittedAt = this.now();
    issue.pull.requestedReviewers = issue.pull.requestedReviewers.filter(
      (r) => r.toLowerCase() !== review.user.toLowerCase(),
    );
    this.emit({
      name: "pull_request_review",
      action: "submitted",
      repo: state.repo,
      sender: actor,
      pull: issue,
      review,
    });
    return review;
  }

  dismissReview(repo: RepoRef, number: number, reviewId: number, actor: string): Review {
    const state = this.state(repo);
    const issue = this.requirePull(repo, number);
    const review = issue.pull.reviews.find((r) => r.id === reviewId);
    if (!review) throw new StoreError(404, "Not Found");
    review.state = "DISMISSED";
    this.emit({
      name: "pull_request_review",
      action: "dismissed",
      repo: state.repo,
      sender: actor,
      pull: issue,
      review,
    });
    return review;
  }

  // ----- checks and statuses ------------------------------------------------------------------------------

  /** The check suite of an app for a SHA, created on first use (status `queued`). */
  ensureCheckSuite(repo: RepoRef, headSha: string, appSlug: string = this.app.slug): CheckSuite {
    const state = this.state(repo);
    for (const suite of state.checkSuites.values())
      if (suite.headSha === headSha && suite.appSlug === appSlug) return suite;
    const id = this.id();
    const at = this.now();
    const suite: CheckSuite = {
      id,
      nodeId: encodeNodeId("CheckSuite", id),
      headSha,
      headBranch: this.branchForSha(state, headSha),
      appSlug,
      status: "queued",
      conclusion: null,
      createdAt: at,
      updatedAt: at,
    };
    state.checkSuites.set(id, suite);
    return suite;
  }

  private branchForSha(state: RepoState, sha: string): string | null {
    for (const [ref, s] of state.refs) if (s === sha && ref.startsWith("refs/heads/")) return branchOf(ref);
    for (const issue of state.issues.values()) if (issue.pull?.head.sha === sha) return issue.pull.head.ref;
    return null;
  }

  /** Creates a check run (emits `check_run.created`, and `completed` + suite completion when completed). */
  createCheckRun(repo: RepoRef, input: CreateCheckRunInput): CheckRun {
    const state = this.state(repo);
    const appSlug = input.appSlug ?? this.app.slug;
    const suite = this.ensureCheckSuite(repo, input.headSha, appSlug);
    const id = this.id();
    const status = input.conclusion ? "completed" : (input.status ?? "queued");
    const at = this.now();
    const run: CheckRun = {
      id,
      nodeId: encodeNodeId("CheckRun", id),
      name: input.name,
      headSha: input.headSha,
      checkSuiteId: suite.id,
      appSlug,
      status,
      conclusion: status === "completed" ? (input.conclusion ?? "success") : null,
      startedAt: input.startedAt ?? at,
      completedAt: status === "completed" ? (input.completedAt ?? at) : null,
      output: {
        title: input.output?.title ?? null,
        summary: input.output?.summary ?? null,
        text: input.output?.text ?? null,
      },
      detailsUrl: input.detailsUrl ?? null,
      externalId: input.externalId ?? null,
    };
    state.checkRuns.set(id, run);
    this.invalidateMergeability(state, input.headSha);
    const sender = input.actor ?? `${appSlug}[bot]`;
    this.emit({ name: "check_run", action: "created", repo: state.repo, sender, checkRun: run });
    this.afterCheckRunChange(state, suite, run, sender);
    return run;
  }

  /** Updates a check run; completing it emits `check_run.completed` (and `check_suite.completed` when all are). */
  updateCheckRun(repo: RepoRef, id: number, patch: UpdateCheckRunInput): CheckRun {
    const state = this.state(repo);
    const run = state.checkRuns.get(id);
    if (!run) throw new StoreError(404, "Not Found");
    const wasCompleted = run.status === "completed";
    if (patch.name !== undefined) run.name = patch.name;
    if (patch.detailsUrl !== undefined) run.detailsUrl = patch.detailsUrl;
    if (patch.externalId !== undefined) run.externalId = patch.externalId;
    if (patch.startedAt !== undefined) run.startedAt = patch.startedAt;
    if (patch.output) run.output = { ...run.output, ...patch.output };
    if (patch.conclusion) {
      run.status = "completed";
      run.conclusion = patch.conclusion;
      run.completedAt = patch.completedAt ?? this.now();
    } else if (patch.status) {
      run.status = patch.status;
      if (patch.status === "completed") {
        run.conclusion = run.conclusion ?? "success";
        run.completedAt = patch.completedAt ?? this.now();
      }
    }
    this.invalidateMergeability(state, run.headSha);
    const suite = state.checkSuites.get(run.checkSuiteId)!;
    if (!wasCompleted) this.afterCheckRunChange(state, suite, run, patch.actor ?? `${run.appSlug}[bot]`);
    return run;
  }

  private afterCheckRunChange(state: RepoState, suite: CheckSuite, run: CheckRun, sender: string): void {
    const runs = [...state.checkRuns.values()].filter((r) => r.checkSuiteId === suite.id);
    suite.updatedAt = this.now();
    if (run.status === "completed") {
      this.emit({ name: "check_run", action: "completed", repo: state.repo, sender, checkRun: run });
    }
    if (runs.every((r) => r.status === "completed")) {
      if (suite.status !== "completed") {
        suite.status = "completed";
        suite.conclusion = suiteConclusion(runs.map((r) => r.conclusion));
        this.emit({ name: "check_suite", action: "completed", repo: state.repo, sender, checkSuite: suite });
      }
    } else {
      suite.status = runs.some((r) => r.status === "in_progress") ? "in_progress" : "queued";
      suite.conclusion = null;
    }
  }

  private invalidateMergeability(state: RepoState, sha: string): void {
    for (const issue of state.issues.values()) {
      if (issue.pull && issue.pull.head.sha === sha && issue.pull.mergeable !== null) {
        issue.pull.mergeableState = issue.pull.mergeable ? this.cleanStateFor(state, sha) : "dirty";
      }
    }
  }

  getCheckRun(repo: RepoRef, id: number): CheckRun | undefined {
    return this.state(repo).checkRuns.get(id);
  }

  /** Check runs for a commit SHA, newest first (as GitHub lists them). */
  listCheckRuns(
    repo: RepoRef,
    sha: string,
    filter: { checkName?: string; status?: CheckStatus; suiteId?: number } = {},
  ): CheckRun[] {
    return [...this.state(repo).checkRuns.values()]
      .filter((r) => r.headSha === sha)
      .filter((r) => !filter.checkName || r.name === filter.checkName)
      .filter((r) => !filter.status || r.status === filter.status)
      .filter((r) => filter.suiteId === undefined || r.checkSuiteId === filter.suiteId)
      .reverse();
  }

  getCheckSuite(repo: RepoRef, id: number): CheckSuite | undefined {
    return this.state(repo).checkSuites.get(id);
  }

  listCheckSuites(repo: RepoRef, sha: string): CheckSuite[] {
    return [...this.state(repo).checkSuites.values()].filter((s) => s.headSha === sha);
  }

  /** Creates a commit status (emits `status`). */
  createStatus(repo: RepoRef, sha: string, input: CreateStatusInput): CommitStatus {
    const state = this.state(repo);
    const id = this.id();
    const at = this.now();
    const status: CommitStatus = {
      id,
      nodeId: encodeNodeId("StatusContext", id),
      sha,
      state: input.state,
      context: input.context ?? "default",
      description: input.description ?? null,
      targetUrl: input.targetUrl ?? null,
      creator: input.creator,
      createdAt: at,
      updatedAt: at,
    };
    state.statuses.push(status);
    this.invalidateMergeability(state, sha);
    this.emit({ name: "status", repo: state.repo, sender: input.creator, status });
    return status;
  }

  /** Every status of a SHA, newest first. */
  listStatuses(repo: RepoRef, sha: string): CommitStatus[] {
    return this.state(repo)
      .statuses.filter((s) => s.sha === sha)
      .reverse();
  }

  /** The latest status per context, and GitHub's combined state over them. */
  combinedStatus(repo: RepoRef, sha: string): { state: StatusState; statuses: CommitStatus[] } {
    const statuses = this.latestStatuses(this.state(repo), sha);
    let state: StatusState = "success";
    if (statuses.length === 0) state = "pending";
    else if (statuses.some((s) => s.state === "error" || s.state === "failure")) state = "failure";
    else if (statuses.some((s) => s.state === "pending")) state = "pending";
    return { state, statuses };
  }

  private latestStatuses(state: RepoState, sha: string): CommitStatus[] {
    const byContext = new Map<string, CommitStatus>();
    for (const s of state.statuses) if (s.sha === sha) byContext.set(s.context, s);
    return [...byContext.values()];
  }

  // ----- workflows and runs -------------------------------------------------------------------------------

  /** Registers a workflow file (`.github/workflows/x.yml`). */
  addWorkflow(repo: RepoRef, input: { path: string; name?: string }): Workflow {
    const state = this.state(repo);
    const path = input.path.includes("/") ? input.path : `.github/workflows/${input.path}`;
    for (const w of state.workflows.values()) if (w.path === path) return w;
    const id = this.id();
    const at = this.now();
    const file = path.slice(path.lastIndexOf("/") + 1);
    const workflow: Workflow = {
      id,
      nodeId: encodeNodeId("Workflow", id),
      name: input.name ?? file.replace(/\.ya?ml$/, ""),
      path,
      state: "active",
      createdAt: at,
      updatedAt: at,
    };
    state.workflows.set(id, workflow);
    return workflow;
  }

  /** A workflow by id or file name (`autopilot-worker.yml`) or path. */
  getWorkflow(repo: RepoRef, idOrFile: number | string): Workflow | undefined {
    const state = this.state(repo);
    const asNumber =
      typeof idOrFile === "number" ? idOrFile : /^\d+$/.test(idOrFile) ? Number(idOrFile) : null;
    if (asNumber !== null) return state.workflows.get(asNumber);
    for (const w of state.workflows.values()) {
      if (w.path === idOrFile || w.path.endsWith(`/${idOrFile}`)) return w;
    }
    return undefined;
  }

  listWorkflows(repo: RepoRef): Workflow[] {
    return [...this.state(repo).workflows.values()];
  }

  /**
   * `workflow_dispatch`: creates a run (`queued`), emits `workflow_dispatch` and `workflow_run.requested`, and
   * hands a {@link WorkflowRunRequest} to every {@link onWorkflowDispatch} listener (the Actions stand-in).
   * 404 for an unknown workflow, 422 for an unknown ref.
   */
  async dispatchWorkflow(
    repo: RepoRef,
    workflowIdOrFile: number | string,
    options: { ref: string; inputs?: Record<string, string>; actor: string },
  ): Promise<WorkflowRun> {
    const state = this.state(repo);
    const workflow = this.getWorkflow(repo, workflowIdOrFile);
    if (!workflow) throw new StoreError(404, "Not Found");
    if (workflow.state !== "active")
      throw new StoreError(422, "Cannot trigger a 'workflow_dispatch' on a disabled workflow");
    const sha = await this.resolveRef(repo, options.ref);
    if (!sha) throw new StoreError(422, `No ref found for: ${options.ref}`);
    const inputs = { ...(options.inputs ?? {}) };
    this.emit({
      name: "workflow_dispatch",
      repo: state.repo,
      sender: options.actor,
      workflow,
      ref: fullRef(options.ref),
      inputs,
    });
    const run = this.createWorkflowRun(repo, {
      workflow: workflow.id,
      event: "workflow_dispatch",
      headBranch: branchOf(options.ref),
      headSha: sha,
      actor: options.actor,
      inputs,
    });
    this.notifyRunRequest({ repo: state.repo, workflow, run, ref: options.ref, inputs, reason: "dispatch" });
    return run;
  }

  /**
   * Subscribes the Actions stand-in to runs it must execute (dispatches and re-runs). Returns an unsubscribe.
   * Listeners run synchronously inside the REST request: start work asynchronously.
   */
  onWorkflowDispatch(listener: Listener<WorkflowRunRequest>): () => void {
    this.dispatchListeners.add(listener);
    return () => this.dispatchListeners.delete(listener);
  }

  /**
   * Subscribes to cancellation requests (`POST …/runs/{id}/cancel`). With at least one listener the listener
   * owns completing the run as `cancelled`; with none, the store completes it at once.
   */
  onWorkflowRunCancel(listener: Listener<{ repo: Repo; run: WorkflowRun }>): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  private notifyRunRequest(request: WorkflowRunRequest): void {
    for (const listener of this.dispatchListeners) listener(request);
  }

  /** Creates a run record (`queued` unless told) and emits `workflow_run.requested`. */
  createWorkflowRun(repo: RepoRef, input: CreateWorkflowRunInput): WorkflowRun {
    const state = this.state(repo);
    const workflow = this.getWorkflow(repo, input.workflow);
    if (!workflow) throw new StoreError(404, "Not Found");
    const id = this.id();
    const at = this.now();
    const runNumber = [...state.runs.values()].filter((r) => r.workflowId === workflow.id).length + 1;
    const run: WorkflowRun = {
      id,
      nodeId: encodeNodeId("WorkflowRun", id),
      workflowId: workflow.id,
      name: workflow.name,
      displayTitle: input.displayTitle ?? workflow.name,
      event: input.event,
      status: input.status ?? "queued",
      conclusion: null,
      headBranch: input.headBranch,
      headSha: input.headSha,
      runNumber,
      runAttempt: 1,
      actor: input.actor,
      triggeringActor: input.actor,
      inputs: { ...(input.inputs ?? {}) },
      pullRequests: [...(input.pullRequests ?? [])],
      concurrencyGroup: null,
      cancelRequested: false,
      createdAt: at,
      updatedAt: at,
      runStartedAt: null,
      jobs: [],
    };
    state.runs.set(id, run);
    this.emit({
      name: "workflow_run",
      action: "requested",
      repo: state.repo,
      sender: input.actor,
      run,
      workflow,
    });
    return run;
  }

  /**
   * Changes a run's status/conclusion. Entering `in_progress` emits `workflow_run.in_progress`; a conclusion
   * (or status `completed`) emits `workflow_run.completed`.
   */
  updateWorkflowRun(repo: RepoRef, runId: number, patch: UpdateWorkflowRunInput): WorkflowRun {
    const state = this.state(repo);
    const run = state.runs.get(runId);
    if (!run) throw new StoreError(404, "Not Found");
    const workflow = state.workflows.get(run.workflowId)!;
    const before = run.status;
    if (patch.displayTitle !== undefined) run.displayTitle = patch.displayTitle;
    if (patch.concurrencyGroup !== undefined) run.concurrencyGroup = patch.concurrencyGroup;
    if (patch.runStartedAt !== undefined) run.runStartedAt = patch.runStartedAt;
    if (patch.conclusion) {
      run.status = "completed";
      run.conclusion = patch.conclusion;
    } else if (patch.status) {
      run.status = patch.status;
      if (patch.status === "completed" && !run.conclusion) run.conclusion = "success";
    }
    run.updatedAt = this.now();
    if (run.status === "in_progress" && before !== "in_progress") {
      run.runStartedAt = run.runStartedAt ?? this.now();
      this.emit({
        name: "workflow_run",
        action: "in_progress",
        repo: state.repo,
        sender: run.actor,
        run,
        workflow,
      });
    }
    if (run.status === "completed" && before !== "completed") {
      for (const job of run.jobs) {
        if (job.status !== "completed") {
          job.status = "completed";
          job.conclusion = run.conclusion;
          job.completedAt = this.now();
        }
      }
      this.emit({
        name: "workflow_run",
        action: "completed",
        repo: state.repo,
        sender: run.actor,
        run,
        workflow,
      });
    }
    return run;
  }

  getWorkflowRun(repo: RepoRef, runId: number): WorkflowRun | undefined {
    return this.state(repo).runs.get(runId);
  }

  private findRun(runId: number): { state: RepoState; run: WorkflowRun } | null {
    for (const state of this.repos.values()) {
      const run = state.runs.get(runId);
      if (run) return { state, run };
    }
    return null;
  }

  /** The repository a run belongs to. */
  repoOfRun(runId: number): Repo | undefined {
    return this.findRun(runId)?.state.repo;
  }

  /** Runs, newest first, filtered as `GET …/actions/runs` filters. */
  listWorkflowRuns(repo: RepoRef, filter: ListWorkflowRunsFilter = {}): WorkflowRun[] {
    const workflow = filter.workflow !== undefined ? this.getWorkflow(repo, filter.workflow) : undefined;
    if (filter.workflow !== undefined && !workflow) throw new StoreError(404, "Not Found");
    return [...this.state(repo).runs.values()]
      .filter((r) => !workflow || r.workflowId === workflow.id)
      .filter((r) => !filter.status || r.status === filter.status || r.conclusion === filter.status)
      .filter((r) => !filter.branch || r.headBranch === filter.branch)
      .filter((r) => !filter.event || r.event === filter.event)
      .filter((r) => !filter.actor || r.actor.toLowerCase() === filter.actor.toLowerCase())
      .filter((r) => !filter.headSha || r.headSha === filter.headSha)
      .filter((r) => !filter.createdFrom || r.createdAt.getTime() >= filter.createdFrom.getTime())
      .filter((r) => !filter.createdTo || r.createdAt.getTime() <= filter.createdTo.getTime())
      .reverse();
  }

  /** `POST …/cancel`: 409 when already completed; otherwise listeners (or the store) cancel it. */
  cancelWorkflowRun(repo: RepoRef, runId: number, actor: string): WorkflowRun {
    const state = this.state(repo);
    const run = state.runs.get(runId);
    if (!run) throw new StoreError(404, "Not Found");
    if (run.status === "completed")
      throw new StoreError(409, "Cannot cancel a workflow run that is completed.");
    run.cancelRequested = true;
    run.triggeringActor = actor;
    if (this.cancelListeners.size === 0) {
      this.updateWorkflowRun(repo, runId, { conclusion: "cancelled" });
    } else {
      for (const listener of this.cancelListeners) listener({ repo: state.repo, run });
    }
    return run;
  }

  /** `POST …/rerun`: a completed run starts a new attempt (`queued`), handed to dispatch listeners. */
  rerunWorkflowRun(repo: RepoRef, runId: number, actor: string): WorkflowRun {
    const state = this.state(repo);
    const run = state.runs.get(runId);
    if (!run) throw new StoreError(404, "Not Found");
    if (run.status !== "completed") throw new StoreError(403, "This workflow is already running");
    const workflow = state.workflows.get(run.workflowId)!;
    run.runAttempt += 1;
    run.status = "queued";
    run.conclusion = null;
    run.cancelRequested = false;
    run.triggeringActor = actor;
    run.updatedAt = this.now();
    run.runStartedAt = null;
    run.jobs = [];
    this.emit({ name: "workflow_run", action: "requested", repo: state.repo, sender: actor, run, workflow });
    this.notifyRunRequest({
      repo: state.repo,
      workflow,
      run,
      ref: run.headBranch ?? run.headSha,
      inputs: run.inputs,
      reason: "rerun",
    });
    return run;
  }

  /** Adds a job to a run (the Actions stand-in reports its jobs). */
  addWorkflowJob(repo: RepoRef, runId: number, input: { name: string; status?: RunStatus }): WorkflowJob {
    const run = this.getWorkflowRun(repo, runId);
    if (!run) throw new StoreError(404, "Not Found");
    const id = this.id();
    const status = input.status ?? "queued";
    const job: WorkflowJob = {
      id,
      nodeId: encodeNodeId("Job", id),
      runId,
      name: input.name,
      status,
      conclusion: null,
      startedAt: status === "in_progress" ? this.now() : null,
      completedAt: null,
      steps: [],
    };
    run.jobs.push(job);
    const state = this.state(repo);
    this.emit({ name: "workflow_job", action: "queued", repo: state.repo, sender: run.actor, run, job });
    if (status === "in_progress") {
      this.emit({
        name: "workflow_job",
        action: "in_progress",
        repo: state.repo,
        sender: run.actor,
        run,
        job,
      });
    }
    return job;
  }

  updateWorkflowJob(
    repo: RepoRef,
    runId: number,
    jobId: number,
    patch: { status?: RunStatus; conclusion?: RunConclusion; steps?: WorkflowJob["steps"] },
  ): WorkflowJob {
    const run = this.getWorkflowRun(repo, runId);
    const job = run?.jobs.find((j) => j.id === jobId);
    if (!job) throw new StoreError(404, "Not Found");
    const before = job.status;
    if (patch.steps) job.steps = patch.steps;
    if (patch.status === "in_progress" && !job.startedAt) job.startedAt = this.now();
    if (patch.conclusion) {
      job.status = "completed";
      job.conclusion = patch.conclusion;
      job.completedAt = this.now();
    } else if (patch.status) {
      job.status = patch.status;
    }
    if (job.status !== before && (job.status === "in_progress" || job.status === "completed")) {
      const state = this.state(repo);
      this.emit({
        name: "workflow_job",
        action: job.status,
        repo: state.repo,
        sender: run!.actor,
        run: run!,
        job,
      });
    }
    return job;
  }

  /** Finds a job by id across runs of a repository. */
  getWorkflowJob(repo: RepoRef, jobId: number): { run: WorkflowRun; job: WorkflowJob } | undefined {
    for (const run of this.state(repo).runs.values()) {
      const job = run.jobs.find((j) => j.id === jobId);
      if (job) return { run, job };
    }
    return undefined;
  }
}

function suiteConclusion(conclusions: CheckConclusion[]): CheckConclusion {
  const worst: CheckConclusion[] = ["action_required", "cancelled", "timed_out", "failure", "stale"];
  for (const c of worst) if (conclusions.includes(c)) return c;
  if (conclusions.includes("success")) return "success";
  if (conclusions.length && conclusions.every((c) => c === "skipped")) return "skipped";
  return conclusions.includes("neutral") ? "neutral" : "success";
}

export { ZERO_SHA };
