/**
 * The base of the sandbox store: its clock, its id counter, the per-repository records every resource lives
 * in, and the event stream webhooks are made from. Each `with-*.ts` file adds one GitHub resource on top.
 */
import type { CheckRun, CheckSuite, CommitStatus } from "./check-records.js";
import type { Comment, Issue } from "./issue-records.js";
import type { PushRecord } from "./push-records.js";
import { type Label, type Repo, type RepoRef, fullNameOf } from "./repo-records.js";
import { StoreError } from "./store-error.js";
import type { StoreEvent } from "./store-events.js";
import type { Permission } from "./user-records.js";
import type { Workflow, WorkflowRun } from "./workflow-records.js";

export interface StoreOptions {
  /** Clock; defaults to the system clock. */
  now?: () => Date;
  app?: { id: number; slug: string; name: string; owner: string };
  installationId?: number;
}

/** Everything the store keeps for one repository. */
export interface RepoState {
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

export type Listener<T> = (value: T) => void;

/** The `issues` and `pull_request` actions both events have. */
type IssueOrPullAction = "edited" | "closed" | "reopened" | "labeled" | "unlabeled";

export class StoreCore {
  protected readonly now: () => Date;
  protected readonly repos = new Map<string, RepoState>();
  private readonly eventListeners = new Set<Listener<StoreEvent>>();
  private nextId = 1000;
  /** The GitHub App the sandbox plays host to. */
  readonly app: { id: number; slug: string; name: string; owner: string };
  /**
   * The id of the App's default installation, which covers every repository until installations are declared
   * (with-installations.ts); then the first declared one's id unless it names its own.
   */
  readonly installationId: number;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.app = options.app ?? { id: 1, slug: "autopilot", name: "Autopilot", owner: "autopilot-dev" };
    this.installationId = options.installationId ?? 100;
  }

  /** The current time on the store's clock. */
  clock(): Date {
    return this.now();
  }

  protected id(): number {
    this.nextId += 1;
    return this.nextId;
  }

  protected state(repo: RepoRef): RepoState {
    const state = this.repos.get(fullNameOf(repo));
    if (!state) throw new StoreError(404, "Not Found");
    return state;
  }

  /** The run with this id, in whichever repository it is. */
  protected findRun(runId: number): { state: RepoState; run: WorkflowRun } | null {
    for (const state of this.repos.values()) {
      const run = state.runs.get(runId);
      if (run) return { state, run };
    }
    return null;
  }

  // ----- events --------------------------------------------------------------------------------------------

  /** Subscribes to every state change that GitHub would deliver as a webhook. Returns an unsubscribe. */
  onEvent(listener: Listener<StoreEvent>): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  protected emit(event: StoreEvent): void {
    for (const listener of this.eventListeners) listener(event);
  }

  /**
   * Emits a change of an issue-or-pull-request record: GitHub delivers it as `pull_request` for a pull request
   * and as `issues` for an issue, with the same action.
   */
  protected emitIssueOrPull(
    state: RepoState,
    issue: Issue,
    action: IssueOrPullAction,
    sender: string,
    extra: { label?: Label; changes?: { title?: { from: string }; body?: { from: string | null } } } = {},
  ): void {
    if (issue.pull) {
      this.emit({ name: "pull_request", action, repo: state.repo, sender, pull: issue, ...extra });
    } else {
      this.emit({ name: "issues", action, repo: state.repo, sender, issue, ...extra });
    }
  }
}
