/**
 * The Actions stand-in: runs the sandbox's workflow runs the way a GitHub-hosted runner does, and the
 * repository's CI command on pull request heads.
 *
 * A `workflow_dispatch` (or re-run) handed over by the store starts a run of the workflow file read from the
 * repository at the dispatched ref. Each job gets a fresh workspace and runner directories; `actions/checkout`
 * clones the repository over the sandbox's git remote with the run's `GITHUB_TOKEN` (and persists it as
 * checkout does); a step that uses the configured action (`./` or `<owner>/autopilot@…`) runs
 * `node <actionDir>/<runs.main>` with `INPUT_*` from `with:` and the action's input defaults, and the
 * `GITHUB_*` / `RUNNER_*` environment; `run:` steps run in bash. `GITHUB_OUTPUT`, `GITHUB_ENV`,
 * `GITHUB_PATH`, `GITHUB_STATE` and `GITHUB_STEP_SUMMARY` are read back between steps as the runner does.
 *
 * With `eventTriggers`, the events a workflow's `on:` lists and its `schedule` start runs too (event-runs.ts);
 * a run whose every job is skipped by its `if:` concludes `skipped`.
 *
 * Runs move queued → in_progress → completed (success, failure, cancelled, timed_out); concurrency groups
 * keep at most one running and one pending run per group, a newer pending run cancelling the older one, and
 * `cancel-in-progress` cancelling the running one. Cancelling sends SIGINT to the step's process group, then
 * SIGTERM and SIGKILL after grace periods; {@link ActionsRunner.killRun} SIGKILLs it at once, as a lost runner.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ActionsOptions, CiConfig, RunConclusion, RunHandle, RunRecord } from "./actions-types.js";
import { conditionHolds, evaluateToken, exprToString, tokenString } from "./expressions.js";
import { EventRuns } from "./event-runs.js";
import type { JobHost } from "./job-host.js";
import { runJob } from "./job-runner.js";
import { PullRequestCi } from "./pull-request-ci.js";
import { runContext } from "./run-context.js";
import { killGroup, StepProcesses } from "./step-process.js";
import type { Repo, SandboxStore, StoreEvent, WorkflowRunRequest } from "../store.js";
import { truthyFlag } from "./file-commands.js";
import { readWorkflow, type WorkflowDefinition } from "./workflow-template.js";

export type {
  ActionsEvent,
  RunRecord,
} from "./actions-types.js";

/** The runs of one concurrency group: at most one running and one pending. */
interface GroupState {
  running: RunHandle | null;
  pending: RunHandle | null;
}

export class ActionsRunner {
  private readonly store: SandboxStore;
  private readonly options: ActionsOptions;
  private readonly actionDir: string | undefined;
  private readonly workDir: string;
  private readonly ownsWorkDir: boolean;
  private readonly handles = new Map<number, RunHandle>();
  private readonly groups = new Map<string, GroupState>();
  private readonly workflowTexts = new Map<string, string>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly ci: PullRequestCi;
  private readonly steps: StepProcesses;
  private readonly jobHost: JobHost;
  /** Runs started by events and schedules (null unless `eventTriggers`). */
  readonly eventRuns: EventRuns | null;
  private stopped = false;

  constructor(options: ActionsOptions) {
    this.options = options;
    this.store = options.store;
    this.actionDir = options.actionDir === undefined ? undefined : resolve(options.actionDir);
    this.ownsWorkDir = !options.workDir;
    this.workDir = options.workDir ?? mkdtempSync(join(tmpdir(), "autopilot-actions-"));
    mkdirSync(this.workDir, { recursive: true });
    this.ci = new PullRequestCi(this.store, options, this.workDir, () => this.stopped);
    this.steps = new StepProcesses(options);
    this.jobHost = { store: this.store, options, actionDir: this.actionDir, steps: this.steps };
    this.eventRuns = options.eventTriggers
      ? new EventRuns(this.store, options, (request) => this.enqueue(request))
      : null;
  }

  /** Subscribes to the store: dispatches, cancellations, and the events that sync workflows and start CI. */
  start(): this {
    this.unsubscribe.push(
      this.store.onWorkflowDispatch((request) => this.enqueue(request)),
      this.store.onWorkflowRunCancel(({ run, force }) => this.cancelRun(run.id, undefined, force)),
      this.store.onEvent((event) => this.onStoreEvent(event)),
    );
    return this;
  }

  /** Sets (or clears) the CI command of a repository. */
  setCi(repo: string, config: CiConfig | null): void {
    this.ci.setCi(repo, config);
  }

  /**
   * Registers every `.github/workflows/*.yml` on the default branch with the store (GitHub does this when
   * workflow files land on the default branch).
   */
  async syncWorkflows(repo: Repo | string): Promise<void> {
    const record = typeof repo === "string" ? this.store.getRepo(repo) : repo;
    if (!record) return;
    const entries = await this.store.listDirectory(
      record.fullName,
      ".github/workflows",
      record.defaultBranch,
    );
    const files = new Map<string, WorkflowDefinition | null>();
    for (const entry of entries ?? []) {
      if (entry.type !== "file" || !/\.ya?ml$/.test(entry.name)) continue;
      const text = (await this.store.readFile(record.fullName, entry.path, record.defaultBranch))?.toString(
        "utf8",
      );
      // GitHub registers workflow files its parser rejects too, named by their path (their runs fail at startup).
      const parsed = text ? (await readWorkflow(entry.path, text)).workflow : null;
      const workflow = this.store.addWorkflow(record.fullName, {
        path: entry.path,
        ...(parsed?.name ? { name: parsed.name } : {}),
      });
      files.set(workflow.path, parsed);
    }
    this.eventRuns?.sync(record, files);
  }

  private onStoreEvent(event: StoreEvent): void {
    if (this.stopped) return;
    if (
      event.name === "push" &&
      event.push.ref === `refs/heads/${event.repo.defaultBranch}` &&
      !event.push.deleted
    ) {
      void this.syncWorkflows(event.repo).catch(() => {});
    }
    this.ci.onStoreEvent(event);
    // A repository deleted while its event is checked (a test tearing down) starts nothing.
    void this.eventRuns?.onStoreEvent(event).catch(() => {});
  }

  // ---------------------------------------------------------------------------------------------------------
  // Workflow runs

  /** Every run this stand-in has seen, oldest first. */
  listRuns(): RunRecord[] {
    return [...this.handles.values()].map((h) => h.record);
  }

  getRun(runId: number): RunRecord | undefined {
    return this.handles.get(runId)?.record;
  }

  /** Resolves when the run completes. */
  waitForRun(runId: number): Promise<RunRecord> {
    const handle = this.handles.get(runId);
    if (!handle) return Promise.reject(new Error(`unknown run ${runId}`));
    return handle.done;
  }

  /** Resolves when no run is queued, pending or in progress and no CI command is running. */
  async waitIdle(): Promise<void> {
    for (;;) {
      const open = [...this.handles.values()].filter((h) => h.record.status !== "completed");
      if (open.length === 0 && this.ci.runs.size === 0) return;
      await Promise.race([...open.map((h) => h.done), ...this.ci.runs]);
    }
  }

  /** Runs not yet completed. */
  activeRuns(): RunRecord[] {
    return this.listRuns().filter((r) => r.status !== "completed");
  }

  private enqueue(request: WorkflowRunRequest): void {
    if (this.stopped) return;
    let resolveDone!: (record: RunRecord) => void;
    const done = new Promise<RunRecord>((r) => {
      resolveDone = r;
    });
    const run = request.run;
    const previous = this.handles.get(run.id);
    const handle: RunHandle = {
      record: {
        id: run.id,
        repo: request.repo.fullName,
        workflowPath: request.workflow.path,
        workflowName: request.workflow.name,
        event: run.event,
        displayTitle: run.displayTitle,
        inputs: { ...request.inputs },
        status: "queued",
        conclusion: null,
        concurrencyGroup: null,
        outputs: {},
        steps: [],
        summary: "",
        log: [],
        annotations: [],
        reason: null,
        token: null,
        workspace: null,
        createdAt: new Date(),
        startedAt: null,
        completedAt: null,
      },
      request,
      cancelInProgress: false,
      cancelRequested: false,
      forceCancelled: false,
      cancelAcknowledged: false,
      killed: false,
      timedOut: false,
      process: null,
      dir: null,
      done,
      resolve: resolveDone,
      started: false,
      timers: [],
    };
    if (previous && previous.record.status !== "completed") return; // a re-run of a running run: ignore
    this.handles.set(run.id, handle);
    this.options.onEvent?.({ type: "run-queued", run: handle.record });
    // The REST request that dispatched is still being answered: continue asynchronously.
    setImmediate(() => {
      void this.prepare(handle).catch((error) =>
        this.finish(handle, "failure", `startup failure: ${(error as Error).message}`),
      );
    });
  }

  /** The workflow file at the run's commit (cached by commit: a commit's files never change). */
  private async loadWorkflow(handle: RunHandle): Promise<WorkflowDefinition> {
    const { repo, workflow, ref, run } = handle.request;
    const key = `${repo.fullName}::${workflow.path}@${run.headSha}`;
    let text = this.workflowTexts.get(key);
    if (text === undefined) {
      text = (await this.store.readFile(repo.fullName, workflow.path, run.headSha))?.toString("utf8") ?? "";
      if (this.workflowTexts.size > 200) this.workflowTexts.clear();
      this.workflowTexts.set(key, text);
    }
    if (!text) throw new Error(`${workflow.path} not found at ${ref}`);
    const reading = await readWorkflow(workflow.path, text);
    if (!reading.workflow) throw new Error(`Invalid workflow file: ${reading.errors.join("; ")}`);
    return reading.workflow;
  }

  /** Reads the workflow, names the run, applies concurrency, and starts it when its group allows. */
  private async prepare(handle: RunHandle): Promise<void> {
    const workflow = await this.loadWorkflow(handle);
    const { repo, run } = handle.request;
    const context = runContext(
      handle,
      workflow,
      null,
      this.options,
      this.store.variableValues(repo.fullName),
    );
    if (workflow.runName) {
      const title = tokenString(workflow.runName, context).trim();
      if (title) {
        handle.record.displayTitle = title;
        this.store.updateWorkflowRun(repo.fullName, run.id, { displayTitle: title });
      }
    }
    // Job-level concurrency applies to a job that runs: a job its `if:` skips never enters the group (so
    // it cancels no pending run), unlike workflow-level concurrency, which every run of the workflow enters.
    // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idconcurrency
    const jobs = workflow.jobs;
    const skips = (job: (typeof jobs)[number]) => !conditionHolds(job.if, context);
    if (!workflow.concurrency && jobs.length > 0 && jobs.every(skips)) {
      // Nothing to run: the run concludes skipped at once, no runner taken.
      // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idif
      return this.finish(handle, "skipped", null);
    }
    const firstJob = jobs[0];
    const jobSkipped = !workflow.concurrency && firstJob !== undefined && skips(firstJob);
    const concurrency = workflow.concurrency ?? (jobSkipped ? undefined : firstJob?.concurrency);
    let group: string | null = null;
    // `concurrency:` is a group name or `{ group, cancel-in-progress }`, either of which may be an expression.
    // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#concurrency
    const setting = evaluateToken(concurrency, context);
    if (setting && typeof setting === "object" && !Array.isArray(setting)) {
      group = exprToString(setting.group);
      handle.cancelInProgress = truthyFlag(exprToString(setting["cancel-in-progress"] ?? false));
    } else if (setting !== undefined && setting !== null) {
      group = exprToString(setting);
    }
    if (handle.cancelRequested) return this.finish(handle, "cancelled", "cancelled before it started");
    if (!group) return this.launch(handle, workflow);
    const key = `${repo.fullName.toLowerCase()}::${group}`;
    handle.record.concurrencyGroup = group;
    this.store.updateWorkflowRun(repo.fullName, run.id, { concurrencyGroup: group });
    const state = this.groups.get(key) ?? { running: null, pending: null };
    this.groups.set(key, state);
    if (state.pending) {
      const older = state.pending;
      state.pending = null;
      this.finish(
        older,
        "cancelled",
        `Canceling since a higher priority waiting request for '${group}' exists`,
      );
    }
    if (state.running && handle.cancelInProgress) {
      this.cancelRun(
        state.running.record.id,
        `Canceling since a higher priority waiting request for '${group}' exists`,
      );
    }
    if (state.running) {
      state.pending = handle;
      handle.record.status = "pending";
      this.store.updateWorkflowRun(repo.fullName, run.id, { status: "pending" });
      return;
    }
    state.running = handle;
    await this.launch(handle, workflow);
  }

  private releaseGroup(handle: RunHandle): void {
    const group = handle.record.concurrencyGroup;
    if (!group) return;
    const key = `${handle.record.repo.toLowerCase()}::${group}`;
    const state = this.groups.get(key);
    if (!state) return;
    if (state.pending === handle) state.pending = null;
    if (state.running === handle) {
      state.running = null;
      const next = state.pending;
      state.pending = null;
      if (next && !this.stopped) {
        state.running = next;
        void this.loadWorkflow(next)
          .then((workflow) => this.launch(next, workflow))
          .catch((error) => this.finish(next, "failure", `startup failure: ${(error as Error).message}`));
      }
    }
    if (!state.running && !state.pending) this.groups.delete(key);
  }

  private async launch(handle: RunHandle, workflow: WorkflowDefinition): Promise<void> {
    if (this.stopped) return;
    if (handle.cancelRequested) return this.finish(handle, "cancelled", "cancelled before it started");
    const { repo, run } = handle.request;
    handle.started = true;
    handle.record.status = "in_progress";
    handle.record.startedAt = new Date();
    const token = this.store.mintWorkerToken(run.id);
    handle.record.token = token;
    this.store.updateWorkflowRun(repo.fullName, run.id, { status: "in_progress" });
    this.options.onEvent?.({ type: "run-started", run: handle.record });

    const dir = mkdtempSync(join(this.workDir, `run-${run.id}-`));
    handle.dir = dir;
    let conclusion: RunConclusion = "success";
    let reason: string | null = null;
    let ranJobs = 0;
    // One OS user per running job on this machine, when the harness asks for it (ActionsOptions.jobUser).
    const agentUser = this.options.jobUser?.claim() ?? { name: undefined, release: () => {} };
    if (agentUser.name) handle.agentUser = agentUser.name;
    try {
      for (const job of workflow.jobs) {
        const result = await runJob(this.jobHost, handle, workflow, job, token, dir);
        if (result.conclusion !== "skipped") ranJobs += 1;
        if (result.conclusion !== "success" && result.conclusion !== "skipped") {
          conclusion = result.conclusion;
          reason = result.reason;
          break;
        }
      }
    } catch (error) {
      conclusion = "failure";
      reason = (error as Error).message;
    }
    agentUser.release();
    // A run whose every job was skipped by its `if:` concludes skipped (and bills no minutes).
    // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idif
    if (ranJobs === 0 && conclusion === "success" && !handle.killed && !handle.cancelRequested)
      conclusion = "skipped";
    if (handle.killed) {
      conclusion = "failure";
      reason = "The runner has received a shutdown signal. The operation was canceled.";
    } else if (handle.cancelRequested) {
      conclusion = "cancelled";
      reason = reason ?? "The run was canceled.";
    }
    this.finish(handle, conclusion, reason);
  }

  /**
   * Cancels a run: a pending one ends at once; a running one gets SIGINT → SIGTERM → SIGKILL. Steps on
   * `always()` / `cancelled()` still run after a plain cancel; after a forced one (`force`) none does.
   * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-cancellation
   * https://docs.github.com/en/rest/actions/workflow-runs#force-cancel-a-workflow-run
   */
  cancelRun(runId: number, reason = "The run was canceled.", force = false): boolean {
    const handle = this.handles.get(runId);
    if (!handle || handle.record.status === "completed") return false;
    handle.cancelRequested = true;
    if (force) handle.forceCancelled = true;
    if (!handle.started) {
      if (handle.record.status === "pending") this.finish(handle, "cancelled", reason);
      // a queued run still being prepared notices cancelRequested
      return true;
    }
    handle.record.reason = reason;
    this.steps.signal(handle, false);
    return true;
  }

  /** Fault: the runner is lost mid-way — SIGKILL the step's process group; the run fails. */
  killRun(runId: number): boolean {
    const handle = this.handles.get(runId);
    if (!handle || handle.record.status === "completed") return false;
    handle.killed = true;
    if (!handle.started) {
      this.finish(handle, "failure", "The runner was lost before the job started.");
      return true;
    }
    this.steps.signal(handle, true);
    return true;
  }

  private finish(handle: RunHandle, conclusion: RunConclusion, reason: string | null): void {
    if (handle.record.status === "completed") return;
    for (const timer of handle.timers) clearTimeout(timer);
    handle.timers = [];
    handle.record.status = "completed";
    handle.record.conclusion = conclusion;
    handle.record.reason = reason ?? handle.record.reason;
    handle.record.completedAt = new Date();
    if (handle.record.token) this.store.revokeToken(handle.record.token);
    try {
      if (this.store.getWorkflowRun(handle.record.repo, handle.record.id)?.status !== "completed") {
        this.store.updateWorkflowRun(handle.record.repo, handle.record.id, { conclusion });
      }
    } catch {
      // the repository may be gone (a test tearing down)
    }
    this.releaseGroup(handle);
    if (handle.dir && !this.options.keepWorkspaces) rmSync(handle.dir, { recursive: true, force: true });
    this.options.onEvent?.({ type: "run-completed", run: handle.record });
    handle.resolve(handle.record);
  }

  /** Last resort on a forced exit: SIGKILLs every run's and CI's process group and removes the work directory. */
  killAllSync(): void {
    this.stopped = true;
    this.eventRuns?.stop();
    for (const handle of this.handles.values()) if (handle.process) killGroup(handle.process, "SIGKILL");
    this.ci.killAll();
    if (this.ownsWorkDir) rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Kills every process, cancels every run, removes the work directory. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.eventRuns?.stop();
    for (const off of this.unsubscribe) off();
    const open = [...this.handles.values()].filter((h) => h.record.status !== "completed");
    for (const handle of open) {
      handle.killed = true;
      if (handle.process) killGroup(handle.process, "SIGKILL");
    }
    this.ci.killAll();
    await Promise.race([
      Promise.allSettled([...open.map((h) => h.done), ...this.ci.runs]),
      new Promise((r) => setTimeout(r, 3000)),
    ]);
    for (const handle of open) this.finish(handle, "cancelled", "the sandbox stopped");
    if (this.ownsWorkDir) rmSync(this.workDir, { recursive: true, force: true });
  }
}

/** Starts the Actions stand-in on a sandbox. */
export function startActions(options: ActionsOptions): ActionsRunner {
  return new ActionsRunner(options).start();
}
