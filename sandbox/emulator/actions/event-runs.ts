/**
 * Runs started by events and by `schedule`, as GitHub starts them for the workflows of a repository: every
 * store event is checked against each registered workflow's `on:` (workflow-triggers.ts) and, when it
 * matches, becomes a workflow run with the event's webhook payload as `github.event`; each `schedule` cron
 * starts a run every period, a cron minute lasting `scheduleMinuteMs` (the sandbox's scaled time).
 *
 * Which file and commit a run uses: a `push` runs the workflow at the pushed commit; every other event runs
 * the default branch's file (as registered by the last sync of the default branch) at its head — GitHub does so for issues, comments, checks, `workflow_run` and
 * `schedule` ("This event will only trigger a workflow run if the workflow file exists on the default
 * branch"); for `pull_request` GitHub uses the PR's merge commit, which the stand-in approximates by the
 * base branch (a PR that edits the workflow itself runs the base's version here).
 * https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows
 */
import type { ActionsOptions } from "./actions-types.js";
import { Shapes } from "../shapes.js";
import type { Repo, SandboxStore, StoreEvent, Workflow, WorkflowRunRequest } from "../store.js";
import { webhookFor } from "../server/webhooks.js";
import { cronPeriodMinutes, eventStartsRun, scheduleCrons } from "./workflow-triggers.js";
import { readWorkflow, type WorkflowDefinition } from "./workflow-template.js";

export class EventRuns {
  private readonly schedules = new Map<string, NodeJS.Timeout>();
  /** Each workflow's file on its repository's default branch, by `owner/name::path` (set by each sync). */
  private readonly files = new Map<string, WorkflowDefinition | null>();
  private stopped = false;
  /** Events that matched a workflow but were lost (a fault); counted for the report. */
  lost = 0;

  constructor(
    private readonly store: SandboxStore,
    private readonly options: ActionsOptions,
    private readonly enqueue: (request: WorkflowRunRequest) => void,
  ) {}

  /** Checks one store event against every workflow of its repository; starts the runs it triggers. */
  async onStoreEvent(event: StoreEvent): Promise<void> {
    if (this.stopped || event.name === "workflow_dispatch") return;
    const repo = event.repo;
    for (const workflow of this.store.listWorkflows(repo.fullName)) {
      if (workflow.state !== "active") continue;
      let file = this.files.get(`${repo.fullName}::${workflow.path}`) ?? null;
      if (!file || !(event.name in file.events)) continue;
      if (event.name === "push") file = await this.readWorkflow(repo, workflow, event.push.after);
      if (!file || this.stopped) continue;
      const verdict = eventStartsRun(file.events, event, {
        workflowName: workflow.name,
        checkSuiteApp: event.name === "check_suite" ? event.checkSuite.appSlug : null,
      });
      if (!verdict.starts) continue;
      if (this.options.loseEvent?.()) {
        this.lost += 1;
        continue;
      }
      const payload = webhookFor(event, new Shapes(this.store, this.options.url), this.store).payload;
      if (event.name === "push") {
        await this.start(repo, workflow, event.name, event.sender, event.push.ref, event.push.after, payload);
      } else if (event.name === "merge_group") {
        // `GITHUB_SHA` and `GITHUB_REF` are the merge group's commit and ref.
        // https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#merge_group
        await this.start(
          repo,
          workflow,
          event.name,
          event.sender,
          event.group.headRef,
          event.group.headSha,
          payload,
        );
      } else {
        const sha = await this.store.resolveRef(repo.fullName, repo.defaultBranch);
        if (!sha) continue;
        const pr = event.name === "pull_request" || event.name === "pull_request_review" ? event.pull : null;
        await this.start(
          repo,
          workflow,
          event.name,
          event.sender,
          repo.defaultBranch,
          sha,
          payload,
          pr?.number,
        );
      }
    }
  }

  /**
   * Takes the repository's workflow files on the default branch (read by the runner's sync) and (re)arms
   * their `schedule` timers. Without `scheduleMinuteMs` no schedule runs (a real minute outlasts any sandbox
   * run).
   */
  sync(repo: Repo, files: Map<string, WorkflowDefinition | null>): void {
    for (const [path, file] of files) this.files.set(`${repo.fullName}::${path}`, file);
    const minuteMs = this.options.scheduleMinuteMs;
    for (const [key, timer] of this.schedules) {
      if (key.startsWith(`${repo.fullName}::`)) {
        clearInterval(timer);
        this.schedules.delete(key);
      }
    }
    if (!minuteMs || this.stopped) return;
    for (const workflow of this.store.listWorkflows(repo.fullName)) {
      const file = this.files.get(`${repo.fullName}::${workflow.path}`);
      for (const cron of scheduleCrons(file?.events)) {
        const period = cronPeriodMinutes(cron);
        const key = `${repo.fullName}::${workflow.path}::${cron}`;
        if (period === null || this.schedules.has(key) || this.stopped) continue;
        const timer = setInterval(() => void this.scheduled(repo, workflow, cron), period * minuteMs);
        timer.unref();
        this.schedules.set(key, timer);
      }
    }
  }

  /**
   * One `schedule` tick: a run on the default branch's head, its actor the repository owner (GitHub names
   * the last person to change the cron). https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#schedule
   */
  private async scheduled(repo: Repo, workflow: Workflow, cron: string): Promise<void> {
    if (this.stopped || workflow.state !== "active") return;
    const sha = await this.store.resolveRef(repo.fullName, repo.defaultBranch);
    if (!sha) return;
    const shapes = new Shapes(this.store, this.options.url);
    const payload = {
      schedule: cron,
      workflow: workflow.path,
      repository: shapes.repository(repo),
      sender: shapes.user(repo.owner),
    };
    await this.start(repo, workflow, "schedule", repo.owner, repo.defaultBranch, sha, payload);
  }

  private async start(
    repo: Repo,
    workflow: Workflow,
    event: string,
    actor: string,
    ref: string,
    sha: string,
    payload: Record<string, unknown>,
    pullRequest?: number,
  ): Promise<void> {
    if (this.stopped) return;
    const run = this.store.createWorkflowRun(repo.fullName, {
      workflow: workflow.id,
      event,
      headBranch: ref.replace(/^refs\/heads\//, ""),
      headSha: sha,
      actor,
      ...(pullRequest !== undefined ? { pullRequests: [pullRequest] } : {}),
    });
    this.enqueue({ repo, workflow, run, ref, inputs: {}, reason: "event", payload });
  }

  private async readWorkflow(
    repo: Repo,
    workflow: Workflow,
    ref: string,
  ): Promise<WorkflowDefinition | null> {
    try {
      const text = await this.store.readFile(repo.fullName, workflow.path, ref);
      return text ? (await readWorkflow(workflow.path, text.toString("utf8"))).workflow : null;
    } catch {
      // A workflow file GitHub's parser rejects starts nothing here; GitHub would show a run failed at startup.
      return null;
    }
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.schedules.values()) clearInterval(timer);
    this.schedules.clear();
  }
}
