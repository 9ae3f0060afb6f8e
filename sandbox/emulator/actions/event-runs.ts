/**
 * Runs started by events and by `schedule`, as GitHub starts them for the workflows of a repository: every
 * store event is checked against each registered workflow's `on:` (workflow-triggers.ts) and, when it
 * matches, becomes a workflow run with the event's webhook payload as `github.event`; each `schedule` cron
 * starts a run at the minutes it names on a scaled clock, a cron minute lasting `scheduleMinuteMs`. The clock
 * reads {@link CLOCK_START_MINUTE} minutes past midnight UTC when the stand-in starts and runs on whatever the
 * repository does: as on GitHub, a schedule keeps its times when the default branch moves, and a workflow added
 * at 00:09 runs its `*\/10` cron first at 00:10.
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
import { cronOffsetMinutes, cronPeriodMinutes, eventStartsRun, scheduleCrons } from "./workflow-triggers.js";
import { readWorkflow, type WorkflowDefinition } from "./workflow-template.js";

/** The scaled clock's reading when the stand-in starts, in minutes past midnight UTC (see the header). */
const CLOCK_START_MINUTE = 9;

export class EventRuns {
  /** The armed `schedule` crons, by `owner/name::path::cron`: the timer of each one's next run. */
  private readonly schedules = new Map<string, NodeJS.Timeout>();
  /** When the scaled clock read midnight UTC (epoch ms). */
  private readonly midnightMs: number;
  /** Each workflow's file on its repository's default branch, by `owner/name::path` (set by each sync). */
  private readonly files = new Map<string, WorkflowDefinition | null>();
  private stopped = false;
  /** Events that matched a workflow but were lost (a fault); counted for the report. */
  lost = 0;

  constructor(
    private readonly store: SandboxStore,
    private readonly options: ActionsOptions,
    private readonly enqueue: (request: WorkflowRunRequest) => void,
  ) {
    this.midnightMs = Date.now() - CLOCK_START_MINUTE * (options.scheduleMinuteMs ?? 0);
  }

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
   * Takes the repository's workflow files on the default branch (read by the runner's sync) and arms the
   * `schedule` crons they name that are not armed yet; a cron no file names any more is disarmed. An armed
   * cron keeps its times (the clock's, not the sync's). Without `scheduleMinuteMs` no schedule runs (a real
   * minute outlasts any sandbox run).
   */
  sync(repo: Repo, files: Map<string, WorkflowDefinition | null>): void {
    for (const [path, file] of files) this.files.set(`${repo.fullName}::${path}`, file);
    const minuteMs = this.options.scheduleMinuteMs;
    const wanted = new Map<string, { path: string; cron: string; period: number }>();
    for (const workflow of this.store.listWorkflows(repo.fullName)) {
      const file = this.files.get(`${repo.fullName}::${workflow.path}`);
      for (const cron of scheduleCrons(file?.events)) {
        const period = cronPeriodMinutes(cron);
        if (period !== null)
          wanted.set(`${repo.fullName}::${workflow.path}::${cron}`, { path: workflow.path, cron, period });
      }
    }
    for (const [key, timer] of this.schedules) {
      if (key.startsWith(`${repo.fullName}::`) && !wanted.has(key)) {
        clearTimeout(timer);
        this.schedules.delete(key);
      }
    }
    if (!minuteMs || this.stopped) return;
    for (const [key, { path, cron, period }] of wanted) {
      if (!this.schedules.has(key)) this.arm(repo, key, path, cron, period, minuteMs);
    }
  }

  /** Sets the timer of a cron's next run on the scaled clock; each run arms the one after. */
  private arm(repo: Repo, key: string, path: string, cron: string, period: number, minuteMs: number): void {
    const now = (Date.now() - this.midnightMs) / minuteMs;
    const offset = cronOffsetMinutes(cron) % period;
    const next = Math.floor((now - offset) / period + 1) * period + offset;
    const timer = setTimeout(
      () => {
        if (this.stopped || this.schedules.get(key) !== timer) return;
        this.arm(repo, key, path, cron, period, minuteMs);
        const workflow = this.store.listWorkflows(repo.fullName).find((w) => w.path === path);
        if (workflow) void this.scheduled(repo, workflow, cron).catch(() => {});
      },
      Math.max(0, this.midnightMs + next * minuteMs - Date.now()),
    );
    timer.unref();
    this.schedules.set(key, timer);
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
    for (const timer of this.schedules.values()) clearTimeout(timer);
    this.schedules.clear();
  }
}
