/** GitHub Actions: workflows, their runs and jobs, and the listeners that execute and cancel runs. */
import { encodeNodeId } from "./node-ids.js";
import { branchOf, fullRef } from "./ref-names.js";
import type { Repo, RepoRef } from "./repo-records.js";
import type { Listener } from "./store-core.js";
import { StoreError } from "./store-error.js";
import type { WorkflowRunRequest } from "./store-events.js";
import type {
  RunConclusion,
  RunStatus,
  Workflow,
  WorkflowArtifact,
  WorkflowJob,
  WorkflowRun,
} from "./workflow-records.js";
import { createHash } from "node:crypto";
import { StoreWithReviews } from "./with-reviews.js";

interface CreateWorkflowRunInput {
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

interface UpdateWorkflowRunInput {
  status?: RunStatus;
  conclusion?: RunConclusion;
  displayTitle?: string;
  concurrencyGroup?: string | null;
  runStartedAt?: Date | null;
}

interface ListWorkflowRunsFilter {
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

/** A repository's longest artifact retention when its settings do not shorten it. */
const ARTIFACT_RETENTION_DAYS = 90;

export class StoreWithWorkflows extends StoreWithReviews {
  private readonly dispatchListeners = new Set<Listener<WorkflowRunRequest>>();
  private readonly cancelListeners = new Set<Listener<{ repo: Repo; run: WorkflowRun; force: boolean }>>();

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
  onWorkflowRunCancel(listener: Listener<{ repo: Repo; run: WorkflowRun; force: boolean }>): () => void {
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
      artifacts: [],
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
  cancelWorkflowRun(
    repo: RepoRef,
    runId: number,
    actor: string,
    options: { force?: boolean } = {},
  ): WorkflowRun {
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
      for (const listener of this.cancelListeners)
        listener({ repo: state.repo, run, force: options.force === true });
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

  /**
   * Keeps an artifact a step of the run uploaded. Its name must be new to the run: upload-artifact@v4 and later
   * fail with GitHub's 409 for a name the run already holds, unless `overwrite` deletes the old one first
   * (https://github.com/actions/upload-artifact#breaking-changes: "Uploading to the same named Artifact multiple
   * times"). A retention past the repository's longest (90 days unless its settings say otherwise) is cut to
   * it, and 0 takes it (https://docs.github.com/en/actions/how-tos/manage-workflow-runs/remove-workflow-artifacts#setting-the-retention-period-for-an-artifact).
   */
  addArtifact(
    repo: RepoRef,
    runId: number,
    input: { name: string; files: Record<string, Buffer>; retentionDays: number; overwrite?: boolean },
  ): WorkflowArtifact {
    const run = this.getWorkflowRun(repo, runId);
    if (!run) throw new StoreError(404, "Not Found");
    const taken = run.artifacts.findIndex((a) => a.name === input.name);
    if (taken >= 0 && !input.overwrite)
      throw new StoreError(409, "an artifact with this name already exists on the workflow run");
    if (taken >= 0) run.artifacts.splice(taken, 1);
    const id = this.id();
    const at = this.now();
    const days =
      input.retentionDays > 0
        ? Math.min(input.retentionDays, ARTIFACT_RETENTION_DAYS)
        : ARTIFACT_RETENTION_DAYS;
    const hash = createHash("sha256");
    for (const path of Object.keys(input.files).sort()) hash.update(path).update(input.files[path]!);
    const artifact: WorkflowArtifact = {
      id,
      nodeId: encodeNodeId("Artifact", id),
      name: input.name,
      runId,
      files: { ...input.files },
      sizeInBytes: Object.values(input.files).reduce((n, b) => n + b.length, 0),
      digest: `sha256:${hash.digest("hex")}`,
      createdAt: at,
      expiresAt: new Date(at.getTime() + days * 86_400_000),
    };
    run.artifacts.push(artifact);
    return artifact;
  }

  /** Artifacts, newest first, of one run or of every run of the repository, optionally of one name. */
  listArtifacts(repo: RepoRef, filter: { runId?: number; name?: string } = {}): WorkflowArtifact[] {
    const runs =
      filter.runId !== undefined
        ? [this.getWorkflowRun(repo, filter.runId) ?? null]
        : [...this.state(repo).runs.values()];
    if (runs[0] === null) throw new StoreError(404, "Not Found");
    return runs
      .flatMap((run) => run!.artifacts)
      .filter((a) => filter.name === undefined || a.name === filter.name)
      .sort((a, b) => b.id - a.id);
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
