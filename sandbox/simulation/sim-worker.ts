/**
 * The worker as the simulation plays it: for each dispatch of the worker workflow it does, on simulated time and
 * straight on the store, what src/worker does on GitHub (docs/ARCHITECTURE.md "Worker ↔ controller"): the run's
 * title with the dispatch id, the claim (one progress comment with the running result marker), the pushes to the
 * task branch, the pull request with its markers and the review label, and the finished result, as the scenario's
 * demo-agent behaviour for the task decides. It is a model, not the worker: the worker's own checks are tested
 * by its own tests and the e2e scenarios; here it is the controller that is under test.
 */
import { buildPrompt } from "../../src/core/agent/prompt.js";
import { humanGateMarker, prMarker } from "../../src/core/contract.js";
import { planComment, planDigest, planFromComment } from "../../src/core/tasks/task-plan.js";
import {
  parseWorkerResult,
  renderWorkerResultMarker,
  type WorkerOutcome,
  type WorkerResult,
} from "../../src/core/tasks/worker-result.js";
import type { SandboxStore } from "../emulator/store.js";
import { syntheticSha } from "../emulator/store/ref-names.js";
import type { WorkflowRunRequest } from "../emulator/store/store-events.js";
import { taskTextRefusal } from "../../src/worker/job/task-text-check.js";
import type { AutopilotConfig } from "../../src/core/config/index.js";
import type { SimClock } from "./sim-clock.js";
import type { SimRandom } from "./sim-random.js";
import { HUNGRY_CALL, JobSpend, ORDINARY_CALL } from "./sim-spend.js";
import { trackingIssueNumber } from "./sim-timeline.js";

export interface SimAgent {
  /** One behaviour per job of the task; the last repeats. */
  behaviors: string[];
  answerIncludes?: string;
  resetInSeconds?: number;
}

/** One dispatch as the simulation recorded it. */
export interface SimDispatch {
  runId: number;
  issue: number;
  attempt: number;
  dispatchId: string;
  at: number;
  endedAt: number | null;
  candidate: boolean;
  /** A best-of candidate's number (its `config` input's `candidate`), or null. */
  candidateNumber: number | null;
  /** The iteration limit the dispatch's `config` input set for this job (a writer's `--iterations M`), or null. */
  maxIterations: number | null;
  /** The task text's digest the controller approved (`task-digest`), or null when it gave none. */
  taskDigest: string | null;
  /** The SHAs this run reported pushed in its result (`headSha`). */
  pushed: string[];
  /**
   * The plan gate's word in the dispatch's `config` input (src/core/reconcile/commands/plan-approval.ts):
   * `propose` (a planning run), the approved plan's digest, or null.
   */
  plan: string | null;
  /**
   * In a world with `budgets`: the tokens of the call that crossed a run's cap when the job was stopped at it (the
   * overrun docs/WORKER.md allows), else 0.
   */
  overrun: number;
}

interface WorkerOptions {
  store: SandboxStore;
  repo: string;
  clock: SimClock;
  rng: SimRandom;
  bot: string;
  agents: Map<number, SimAgent>;
  writers: Set<string>;
  /** The configuration file's `maxIterations`: a job's limit unless its `config` input sets another. */
  maxIterations: number;
  /** How many candidates a best-of round has (`bestOf.candidates`), for a candidate's pull-request title. */
  candidates: number;
  /** The configuration's budgets and `maxParallel`, when it sets a budget: each job's spend is then metered. */
  budgets: { budgets: AutopilotConfig["budgets"]; maxParallel: number } | null;
  /** Called when a job ends (its run completed): the end-of-run reconcile of Actions mode, the invariants. */
  onRunEnded: (dispatch: SimDispatch) => void;
  /** Called when a job stops at an iteration boundary for the session's budget, before it writes its end. */
  onSessionBudgetStop: (dispatch: SimDispatch) => void;
  /** Called with the first prompt of a job, once the task passed the worker's checks: the invariants. */
  onPrompt: (dispatch: SimDispatch, prompt: string) => void;
}

const JOB_TIMEOUT_MS = 60 * 60_000;

export class SimWorker {
  readonly dispatches: SimDispatch[] = [];
  /** Jobs ended at a budget, the task's or the session's (in a world with budgets). */
  budgetStops = 0;
  private readonly jobsOf = new Map<number, number>();
  private readonly options: WorkerOptions;
  /** Runs a `killRun` or a cancel ended: their later steps do nothing. */
  private readonly killed = new Set<number>();

  constructor(options: WorkerOptions) {
    this.options = options;
  }

  live(): SimDispatch[] {
    return this.dispatches.filter((d) => d.endedAt === null);
  }

  /** The store's dispatch listener: runs inside the REST request, so everything else is scheduled. */
  onDispatch(request: WorkflowRunRequest): SimDispatch | null {
    const inputs = request.inputs;
    const issue = Number(inputs.issue);
    const attempt = Number(inputs.attempt);
    const dispatchId = inputs["dispatch-id"] ?? "";
    if (!issue || !attempt || !dispatchId) return null;
    const { store, repo, clock, rng } = this.options;
    // The worker workflow's run-name (templates/workflows/autopilot-worker.yml) is evaluated at creation.
    store.updateWorkflowRun(repo, request.run.id, {
      displayTitle: `autopilot #${issue} attempt ${attempt} [${dispatchId}]`,
    });
    const config = parseJson(inputs.config);
    const override = typeof config?.maxIterations === "number" ? config.maxIterations : null;
    const dispatch: SimDispatch = {
      runId: request.run.id,
      issue,
      attempt,
      dispatchId,
      at: clock.ms(),
      endedAt: null,
      candidate: config?.candidate !== undefined,
      candidateNumber: typeof config?.candidate === "number" ? config.candidate : null,
      maxIterations: override,
      taskDigest: inputs["task-digest"] ?? null,
      pushed: [],
      plan: typeof config?.plan === "string" ? config.plan : null,
      overrun: 0,
    };
    this.dispatches.push(dispatch);
    // A planning run is not one of the task's jobs: the behaviours are the implementing jobs'.
    const job = this.jobsOf.get(issue) ?? 0;
    if (dispatch.plan !== "propose") this.jobsOf.set(issue, job + 1);
    const maxIterations = override ?? this.options.maxIterations;
    clock.after(rng.int(5, 40) * 1000, `worker-start-${issue}`, () =>
      this.start(dispatch, job, maxIterations),
    );
    clock.after(JOB_TIMEOUT_MS, `worker-timeout-${issue}`, () => this.end(dispatch, "failure"));
    return dispatch;
  }

  /** A `killRun`: the runner is lost; the run fails and no result is written. */
  kill(issue: number): boolean {
    const dispatch = this.live().find((d) => d.issue === issue);
    if (!dispatch) return false;
    this.end(dispatch, "failure");
    return true;
  }

  /** The controller cancelled the run (`POST …/cancel`). */
  cancel(runId: number): void {
    const dispatch = this.dispatches.find((d) => d.runId === runId && d.endedAt === null);
    if (dispatch) this.end(dispatch, "cancelled");
  }

  private end(dispatch: SimDispatch, conclusion: "success" | "failure" | "cancelled"): void {
    if (dispatch.endedAt !== null) return;
    dispatch.endedAt = this.options.clock.ms();
    this.killed.add(dispatch.runId);
    const run = this.options.store.getWorkflowRun(this.options.repo, dispatch.runId);
    if (run && run.status !== "completed")
      this.options.store.updateWorkflowRun(this.options.repo, dispatch.runId, { conclusion });
    this.options.onRunEnded(dispatch);
  }

  private start(dispatch: SimDispatch, job: number, maxIterations: number): void {
    if (this.killed.has(dispatch.runId)) return;
    const { store, repo, clock, rng, agents } = this.options;
    store.updateWorkflowRun(repo, dispatch.runId, { status: "in_progress" });
    // The claim (src/worker/job/progress-claim.ts): a finished result of this attempt from another dispatch,
    // or a fresh running one, means another worker has it.
    const own = this.progressComment(dispatch.issue);
    const previous = own ? parseWorkerResult(own.body) : null;
    if (
      previous &&
      previous.attempt === dispatch.attempt &&
      previous.dispatchId !== dispatch.dispatchId &&
      (previous.status === "finished" || clock.ms() - Date.parse(previous.updatedAt) < 30 * 60_000)
    ) {
      this.end(dispatch, "success");
      return;
    }
    const base: WorkerResult = {
      version: 1,
      issue: dispatch.issue,
      attempt: dispatch.attempt,
      dispatchId: dispatch.dispatchId,
      status: "running",
      iterations: 0,
      maxIterations,
      commits: 0,
      branch:
        dispatch.candidateNumber === null
          ? `autopilot/issue-${dispatch.issue}`
          : `autopilot/issue-${dispatch.issue}-candidate-${dispatch.candidateNumber}`,
      tokens: { input: 0, output: 0 },
      costUsd: 0,
      humanGate: { fired: false, rules: [] },
      startedAt: clock.now().toISOString(),
      updatedAt: clock.now().toISOString(),
    };
    // With budgets, the task's totals carry over from its earlier result (src/worker/job/claim.ts).
    const spend = this.options.budgets
      ? new JobSpend(
          dispatch.issue,
          this.options.budgets.budgets,
          this.options.budgets.maxParallel,
          previous
            ? { input: previous.tokens.input, output: previous.tokens.output, usd: previous.costUsd }
            : { input: 0, output: 0, usd: 0 },
        )
      : null;
    if (spend) {
      base.tokens = { input: spend.input, output: spend.output };
      base.costUsd = spend.usd;
    }
    this.writeResult(dispatch.issue, base);
    // The worker's own refusals before the agent sees a word (src/worker/job/prepare.ts): a closed task, or a
    // text that is not the one the controller approved (the digest it handed over).
    const issue = store.requireIssue(repo, dispatch.issue);
    const refusal =
      issue.state === "closed"
        ? `issue #${dispatch.issue} is closed`
        : taskTextRefusal(
            { number: dispatch.issue, title: issue.title, body: issue.body ?? "" },
            dispatch.taskDigest,
          );
    if (refusal) {
      this.writeResult(dispatch.issue, {
        ...base,
        status: "finished",
        result: "failed",
        reason: refusal,
        updatedAt: clock.now().toISOString(),
      });
      this.end(dispatch, "failure");
      return;
    }
    this.options.onPrompt(dispatch, this.prompt(dispatch.issue, maxIterations));
    if (this.plans(dispatch)) {
      clock.after(rng.int(60, 300) * 1000, `worker-plan-${dispatch.issue}`, () =>
        this.proposePlan(dispatch, base),
      );
      return;
    }
    const agent = agents.get(dispatch.issue) ?? { behaviors: ["complete"] };
    const behavior = agent.behaviors[Math.min(job, agent.behaviors.length - 1)] ?? "complete";
    if (behavior === "hang") return; // the job timeout (or a cancel) ends it
    const iterations =
      behavior === "complete" || behavior === "gated" ? rng.int(1, maxIterations) : maxIterations;
    if (spend) {
      const each = rng.int(60, 240) * 1000;
      this.iterate(dispatch, base, behavior, iterations, agent, spend, each, 0);
      return;
    }
    clock.after(iterations * rng.int(60, 240) * 1000, `worker-finish-${dispatch.issue}`, () =>
      this.finish(dispatch, base, behavior, iterations, agent),
    );
  }

  /**
   * Iteration `done + 1` of a job in a world with budgets: the boundary's checks, then one agent run metered call
   * by call (the `spend` behaviour's agent would go on past any budget; it completes only if never stopped), its
   * running totals reported at its end as the worker's progress comment does; the last one finishes the job.
   */
  private iterate(
    dispatch: SimDispatch,
    base: WorkerResult,
    behavior: string,
    iterations: number,
    agent: SimAgent,
    spend: JobSpend,
    each: number,
    done: number,
  ): void {
    if (this.killed.has(dispatch.runId)) return;
    const { store, repo, bot, clock } = this.options;
    const totals = () => ({
      iterations: done,
      tokens: { input: spend.input, output: spend.output },
      costUsd: spend.usd,
      updatedAt: clock.now().toISOString(),
    });
    const tracking = trackingIssueNumber(store, repo, bot);
    const stop = spend.boundary(tracking === null ? null : (store.getIssue(repo, tracking)?.body ?? null));
    if (stop) {
      const sessionBudget = stop.reason.includes("over its budget");
      if (stop.outcome === "budget_exceeded" || sessionBudget) this.budgetStops++;
      if (sessionBudget) this.options.onSessionBudgetStop(dispatch);
      this.writeResult(dispatch.issue, {
        ...base,
        ...totals(),
        status: "finished",
        result: stop.outcome,
        reason: stop.reason,
      });
      this.end(dispatch, "failure");
      return;
    }
    const stopped = spend.run(
      behavior === "spend" ? 40 : 4,
      behavior === "spend" ? HUNGRY_CALL : ORDINARY_CALL,
    );
    clock.after(each, `worker-iteration-${dispatch.issue}`, () => {
      if (this.killed.has(dispatch.runId)) return;
      done++;
      if (stopped) {
        this.budgetStops++;
        dispatch.overrun = spend.overrun;
        this.writeResult(dispatch.issue, {
          ...base,
          ...totals(),
          status: "finished",
          result: "budget_exceeded",
          reason: `${stopped}; the agent was stopped mid-run and its work so far is committed and pushed`,
        });
        this.end(dispatch, "failure");
      } else if (done < iterations) {
        this.writeResult(dispatch.issue, { ...base, ...totals() });
        this.iterate(dispatch, base, behavior, iterations, agent, spend, each, done);
      } else {
        const completes = behavior === "spend" ? "complete" : behavior;
        void this.finish(dispatch, { ...base, ...totals() }, completes, iterations, agent, true);
      }
    });
  }

  private async finish(
    dispatch: SimDispatch,
    base: WorkerResult,
    behavior: string,
    iterations: number,
    agent: SimAgent,
    metered = false,
  ): Promise<void> {
    if (this.killed.has(dispatch.runId)) return;
    const { clock } = this.options;
    const outcome = this.outcomeOf(behavior, dispatch.issue, agent);
    const result: WorkerResult = {
      ...base,
      status: "finished",
      result: outcome,
      iterations,
      ...(metered
        ? {}
        : { tokens: { input: 1000 * iterations, output: 200 * iterations }, costUsd: 0.01 * iterations }),
      updatedAt: clock.now().toISOString(),
    };
    if (outcome === "rate_limited" || outcome === "usage_limited") {
      result.resumeAt = new Date(clock.ms() + (agent.resetInSeconds ?? 60) * 1000).toISOString();
    }
    if (outcome === "blocked" || outcome === "needs_human") result.reason = "The agent asked for help.";
    if (outcome === "complete") {
      const pushed = await this.pushAndOpen(dispatch, behavior === "gated");
      result.commits = 1;
      result.headSha = pushed.headSha;
      dispatch.pushed.push(pushed.headSha);
      result.prNumber = pushed.prNumber;
      result.humanGate = pushed.humanGate;
    }
    this.writeResult(dispatch.issue, result);
    // A candidate's words go into its result, not onto the task (docs/CONTROLLER.md "Best of N").
    if (outcome === "blocked" && !dispatch.candidate) this.moveLabel(dispatch.issue, "autopilot:blocked");
    if (outcome === "needs_human" && !dispatch.candidate)
      this.moveLabel(dispatch.issue, "autopilot:needs-human");
    this.end(dispatch, outcome === "complete" ? "success" : "failure");
  }

  /**
   * Whether this job is a planning run (src/worker/job/plan.ts `planStep`): asked to propose, or given an
   * approved plan whose comment (Autopilot's own) no longer has that digest.
   */
  private plans(dispatch: SimDispatch): boolean {
    if (dispatch.plan === null) return false;
    if (dispatch.plan === "propose") return true;
    const { store, repo, bot } = this.options;
    const digest = dispatch.plan;
    return !store
      .listComments(repo, dispatch.issue)
      .some((c) => c.user.toLowerCase() === bot.toLowerCase() && planFromComment(c.body, digest) !== null);
  }

  /**
   * A planning run's end (src/worker/job/plan.ts `postPlan`): the plan posted on the issue, then the result
   * naming its digest, then the move to needs-human; nothing pushed. Each run's plan differs (its dispatch id).
   */
  private proposePlan(dispatch: SimDispatch, base: WorkerResult): void {
    if (this.killed.has(dispatch.runId)) return;
    const { store, repo, bot, clock } = this.options;
    const plan = `1. Change src/task-${dispatch.issue}.js.\n2. Test it. (run ${dispatch.dispatchId})`;
    const posted = store.createComment(repo, dispatch.issue, planComment(dispatch.issue, plan), bot);
    this.writeResult(dispatch.issue, {
      ...base,
      status: "finished",
      result: "needs_human",
      iterations: 1,
      // As the worker names it: when GitHub says the plan's comment was posted (src/worker/job/ending.ts).
      plan: { digest: planDigest(plan), postedAt: posted.createdAt.toISOString() },
      reason: `plan proposed: waiting for a writer's \`/autopilot approve #${dispatch.issue}\``,
      updatedAt: clock.now().toISOString(),
    });
    this.moveLabel(dispatch.issue, "autopilot:needs-human");
    this.end(dispatch, "failure");
  }

  private outcomeOf(behavior: string, issue: number, agent: SimAgent): WorkerOutcome {
    switch (behavior) {
      case "complete":
      case "gated":
      case "ci-fix":
      case "fail-gate-once":
        return "complete";
      case "blocked":
        return "blocked";
      case "needs-human":
        return this.answered(issue, agent.answerIncludes ?? "") ? "complete" : "needs_human";
      case "rate-limit":
        return "rate_limited";
      case "usage-limit":
        return "usage_limited";
      case "never-finish":
        return "timeout";
      case "idle":
        return "stuck";
      case "spend":
        return "budget_exceeded";
      default:
        return "failed";
    }
  }

  /**
   * The first prompt of a job, built by the product's own prompt builder from what the worker reads for it
   * (src/worker/job/feedback.ts): the task's title and body, and the answers of people with write access.
   */
  private prompt(issue: number, maxIterations: number): string {
    const { store, repo, writers, bot } = this.options;
    const task = store.requireIssue(repo, issue);
    const humanAnswers = store
      .listComments(repo, issue)
      .filter((c) => writers.has(c.user.toLowerCase()) && c.user.toLowerCase() !== bot.toLowerCase())
      .filter((c) => !c.body.trim().startsWith("/autopilot"))
      .map((c) => ({ author: c.user, body: c.body }));
    return buildPrompt({
      repo,
      issue: { number: issue, title: task.title, body: task.body ?? "" },
      branch: `autopilot/issue-${issue}`,
      iteration: 1,
      maxIterations,
      humanAnswers,
      reviewComments: [],
      failingChecks: [],
      qualityFailures: [],
      progressNotes: "",
    });
  }

  /** Whether a writer's comment on the task holds the answer the agent waits for (only writers reach a prompt). */
  private answered(issue: number, answer: string): boolean {
    const { store, repo, writers } = this.options;
    return store
      .listComments(repo, issue)
      .some((c) => writers.has(c.user.toLowerCase()) && answer !== "" && c.body.includes(answer));
  }

  private async pushAndOpen(
    dispatch: SimDispatch,
    gated: boolean,
  ): Promise<{ headSha: string; prNumber: number; humanGate: WorkerResult["humanGate"] }> {
    const { store, repo, clock, bot } = this.options;
    const k = dispatch.candidateNumber;
    if (k !== null) return this.pushCandidate(dispatch, k, gated);
    const branch = `autopilot/issue-${dispatch.issue}`;
    const sha = syntheticSha(repo, dispatch.dispatchId, String(clock.ms()));
    const before = await store.resolveRef(repo, `refs/heads/${branch}`);
    // The worker resumes the task branch and pushes on top of it (src/worker/job/prepare.ts): a fast-forward.
    if (before) await store.updateRef(repo, `refs/heads/${branch}`, sha, false, bot);
    else await store.createRef(repo, `refs/heads/${branch}`, sha, bot);
    const humanGate: WorkerResult["humanGate"] = gated
      ? {
          fired: true,
          rules: [
            { rule: "migrations", where: "path", match: "db/migrations/1.sql", neverAutoApprove: false },
          ],
        }
      : { fired: false, rules: [] };
    const body = `Closes #${dispatch.issue}\n\nDone by the simulated agent.\n\n${prMarker(dispatch.issue)}\n${humanGateMarker(humanGate)}`;
    let pull = store.listPulls(repo).find((p) => p.state === "open" && p.pull.head.ref === branch);
    if (!pull) {
      const created = await store.createPull(repo, {
        title: `Task ${dispatch.issue} (#${dispatch.issue})`,
        body,
        head: branch,
        base: "main",
        author: bot,
      });
      store.addLabels(repo, created.number, ["autopilot:review"], bot);
      pull = store.requirePull(repo, created.number);
    } else {
      store.updatePull(repo, pull.number, { body }, bot);
    }
    this.moveLabel(dispatch.issue, "autopilot:review");
    return { headSha: sha, prNumber: pull.number, humanGate };
  }

  /**
   * A best-of candidate's end (src/worker/job/outcome.ts): its branch `autopilot/issue-N-candidate-K` from the
   * default branch, its own pull request titled as a candidate's, no review label, and the task left in progress
   * for the controller to choose.
   */
  private async pushCandidate(
    dispatch: SimDispatch,
    k: number,
    gated: boolean,
  ): Promise<{ headSha: string; prNumber: number; humanGate: WorkerResult["humanGate"] }> {
    const { store, repo, clock, bot } = this.options;
    const branch = `autopilot/issue-${dispatch.issue}-candidate-${k}`;
    const sha = syntheticSha(repo, dispatch.dispatchId, String(clock.ms()));
    if (await store.resolveRef(repo, `refs/heads/${branch}`))
      await store.updateRef(repo, `refs/heads/${branch}`, sha, true, bot);
    else await store.createRef(repo, `refs/heads/${branch}`, sha, bot);
    const humanGate: WorkerResult["humanGate"] = gated
      ? {
          fired: true,
          rules: [
            { rule: "migrations", where: "path", match: "db/migrations/1.sql", neverAutoApprove: false },
          ],
        }
      : { fired: false, rules: [] };
    const body = `Closes #${dispatch.issue}\n\nCandidate ${k}, done by the simulated agent.\n\n${prMarker(dispatch.issue)}\n${humanGateMarker(humanGate)}`;
    const title = `[candidate ${k} of ${this.options.candidates}] Task ${dispatch.issue} (#${dispatch.issue})`;
    const open = store.listPulls(repo).find((p) => p.state === "open" && p.pull.head.ref === branch);
    if (open) store.updatePull(repo, open.number, { title, body }, bot);
    const number =
      open?.number ??
      (await store.createPull(repo, { title, body, head: branch, base: "main", author: bot })).number;
    return { headSha: sha, prNumber: number, humanGate };
  }

  /** The worker's own label move on its task: from in-progress to `label`. */
  private moveLabel(issue: number, label: string): void {
    const { store, repo, bot } = this.options;
    const current = store.requireIssue(repo, issue).labels.map(String);
    if (current.includes("autopilot:in-progress"))
      store.removeLabel(repo, issue, "autopilot:in-progress", bot);
    if (!current.includes(label)) store.addLabels(repo, issue, [label], bot);
  }

  private progressComment(issue: number): { id: number; body: string } | null {
    const { store, repo, bot } = this.options;
    const own = store
      .listComments(repo, issue)
      .find((c) => c.user.toLowerCase() === bot.toLowerCase() && parseWorkerResult(c.body) !== null);
    return own ? { id: own.id, body: own.body } : null;
  }

  private writeResult(issue: number, result: WorkerResult): void {
    const { store, repo, bot } = this.options;
    const body = `Autopilot worker: ${result.status}${result.result ? ` (${result.result})` : ""}\n\n${renderWorkerResultMarker(result)}`;
    const own = this.progressComment(issue);
    if (own) store.updateComment(repo, own.id, body, bot);
    else store.createComment(repo, issue, body, bot);
  }
}

function parseJson(text: string | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
