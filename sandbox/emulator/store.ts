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
 *
 * The store is built in layers under `store/`, one GitHub resource each, every layer extending the one
 * before: `store-core.ts` (clock, ids, events) → `with-users.ts` (users, permissions, tokens) →
 * `with-repos.ts` → `with-installations.ts` (the App's installations and what their tokens reach) →
 * `with-labels.ts` → `with-issues.ts` → `with-issue-links.ts` (pins, sub-issues,
 * dependencies) → `with-comments.ts` (and reactions) → `with-git.ts` (refs, pushes, contents) →
 * `with-checks.ts` (and statuses) → `with-pulls.ts` → `with-reviews.ts` → `with-workflows.ts` (Actions) →
 * `with-variables.ts` (Actions variables).
 * The records they keep are typed in `store/*-records.ts`.
 */
import { StoreWithVariables } from "./store/with-variables.js";
import type { StoreOptions } from "./store/store-core.js";

export { ZERO_SHA } from "./git/git-constants.js";
export type {
  CheckConclusion,
  CheckRun,
  CheckStatus,
  CheckSuite,
  CommitStatus,
  StatusState,
} from "./store/check-records.js";
export type {
  ChangedFile,
  CommitInfo,
  GitBackend,
} from "./store/git-backend-contract.js";
export type {
  Comment,
  Issue,
  IssueEvent,
  IssueState,
  LockReason,
  Reaction,
  ReactionContent,
  StateReason,
} from "./store/issue-records.js";
export { decodeNodeId, encodeNodeId } from "./store/node-ids.js";
export {
  type MergeMethod,
  type PullFields,
  type Review,
  type ReviewComment,
  forkBranchRef,
} from "./store/pull-records.js";
export type { Installation } from "./store/installation-records.js";
export type { PushRecord } from "./store/push-records.js";
export { syntheticSha } from "./store/ref-names.js";
export { type Label, type Repo, repoKeyOf } from "./store/repo-records.js";
export type { StoreOptions } from "./store/store-core.js";
export { StoreError } from "./store/store-error.js";
export type { StoreEvent, WorkflowRunRequest } from "./store/store-events.js";
export {
  type Permission,
  type TokenInfo,
  type TokenKind,
  type User,
  permissionAtLeast,
} from "./store/user-records.js";
export type {
  Workflow,
  WorkflowArtifact,
  WorkflowJob,
  WorkflowRun,
} from "./store/workflow-records.js";

/** The one store the sandbox's REST, GraphQL, git remote and Actions stand-in share. */
export class SandboxStore extends StoreWithVariables {
  constructor(options: StoreOptions = {}) {
    super(options);
    this.addUser(`${this.app.slug}[bot]`, { type: "Bot", permission: "write" });
    this.addUser("github-actions[bot]", { type: "Bot", permission: "write" });
  }
}
