/** Check suites, check runs and commit statuses, and what they make of a pull request's mergeability. */
import type {
  CheckConclusion,
  CheckOutput,
  CheckRun,
  CheckStatus,
  CheckSuite,
  CommitStatus,
  StatusState,
} from "./check-records.js";
import { encodeNodeId } from "./node-ids.js";
import type { PullFields } from "./pull-records.js";
import { branchOf } from "./ref-names.js";
import type { RepoRef } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { StoreWithGit } from "./with-git.js";

interface CreateCheckRunInput {
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

type UpdateCheckRunInput = Partial<Omit<CreateCheckRunInput, "headSha" | "appSlug">>;

interface CreateStatusInput {
  state: StatusState;
  context?: string;
  description?: string | null;
  targetUrl?: string | null;
  creator: string;
}

export class StoreWithChecks extends StoreWithGit {
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

  /** A mergeable pull request's state from its head commit's checks and statuses. */
  protected cleanStateFor(state: RepoState, sha: string): PullFields["mergeableState"] {
    const runs = [...state.checkRuns.values()].filter((r) => r.headSha === sha);
    const statuses = this.latestStatuses(state, sha);
    const failing =
      runs.some(
        (r) => r.status === "completed" && !["success", "neutral", "skipped"].includes(r.conclusion ?? ""),
      ) || statuses.some((s) => s.state === "failure" || s.state === "error");
    const pending = runs.some((r) => r.status !== "completed") || statuses.some((s) => s.state === "pending");
    return failing || pending ? "unstable" : "clean";
  }
}

/** A completed suite's conclusion from its runs': the worst one, else success (skipped when all were skipped). */
function suiteConclusion(conclusions: CheckConclusion[]): CheckConclusion {
  const worst: CheckConclusion[] = ["action_required", "cancelled", "timed_out", "failure", "stale"];
  for (const c of worst) if (conclusions.includes(c)) return c;
  if (conclusions.includes("success")) return "success";
  if (conclusions.length && conclusions.every((c) => c === "skipped")) return "skipped";
  return conclusions.includes("neutral") ? "neutral" : "success";
}
