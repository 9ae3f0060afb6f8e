/**
 * One simulated world: the sandbox (in memory, on the simulation's clock), the world's repository, people and
 * tasks, Autopilot's controllers reconciling on webhooks and ticks (hosted) or on the controller workflow's
 * events and schedule (Actions), the simulated worker and CI, the timeline, and the invariants
 * (sim-invariants.ts) checked after every reconcile, dispatch and merge and once the world has run its course.
 */
import { CONFIG_PATH, DEFAULT_CONFIG, parseConfig } from "../../src/core/config/index.js";
import { parseDashboard } from "../../src/core/dashboard/index.js";
import { startSandbox } from "../emulator/index.js";
import type { StoreEvent } from "../emulator/store/store-events.js";
import { openIssues } from "../scenario/seed-scenario.js";
import { scenarioConfigText } from "../scenario/scenario-config.js";
import { type Scenario, ScenarioSchema } from "../scenario/scenario-file.js";
import { SimClock } from "./sim-clock.js";
import { type ControllerHooks, SimControllers } from "./sim-controllers.js";
import * as invariants from "./sim-invariants.js";
import * as workInvariants from "./sim-work-invariants.js";
import { planGatedWorkOnlyOnWritersApproval } from "./sim-plan-invariants.js";
import { commandWorkOnlyByWriters, rollbackRevertsOnlyAutopilotsMerges } from "./sim-command-invariants.js";
import { bestOfOneWinner, bestOfOnlyByWritersWord } from "./sim-best-of-invariants.js";
import { botsAreNeverObeyed } from "./sim-bot-invariants.js";
import {
  budgetsNeverExceededAtDispatch,
  budgetsNeverExceededAtEnd,
  type ReportedSpend,
  reportedSpend,
  sessionBudgetStopOnlyWhenSpent,
} from "./sim-budget-invariants.js";
import type { SimObservation, Violation } from "./sim-invariants.js";
import { SimRandom } from "./sim-random.js";
import { playAction, trackingIssueNumber } from "./sim-timeline.js";
import { type SimAgent, SimWorker } from "./sim-worker.js";
import type { ControllerMode, WorldInput } from "./world-generator.js";

export interface WorldOutcome {
  name: string;
  mode: ControllerMode;
  violations: Violation[];
  counts: {
    tasks: number;
    events: number;
    faults: number;
    reconciles: number;
    dispatches: number;
    merges: number;
    requests: number;
    /** Planning runs of the plan gate, and implementing runs on an approved plan. */
    planRuns: number;
    approvedPlanRuns: number;
    /** `fix`, `follow-up` and `rollback` commands given, by anyone. */
    roundCommands: number;
    /** In a world with budgets: jobs the worker ended at a budget (the task's, or the session's). */
    budgetStops: number;
    /** Best-of candidates dispatched. */
    candidates: number;
    /** Commands written and labels set by bot accounts (another app's, Autopilot's own account's commands). */
    botWords: number;
  };
  simulatedSeconds: number;
}

const START = Date.parse("2026-11-02T09:00:00Z");
const WORKER_WORKFLOW = "autopilot-worker.yml";
/** How long one reconcile lasts in simulated time: what happens meanwhile may land between its requests. */
const RECONCILE_WINDOW_MS = 4000;
/**
 * How long a world that ends with a task in progress and no run (or an off-ramp its labels do not show yet) plays
 * on before it is judged: the settle window (or a dispatch's grace), ten minutes, then the next ten-minute
 * schedule, with room to spare.
 */
const SETTLE_BOUND_MS = 30 * 60_000;

/** Runs one world (the scenario format, as the generator or a replay file gives it). */
export async function runWorld(input: WorldInput, seed: number): Promise<WorldOutcome> {
  const scenario: Scenario = ScenarioSchema.parse(input);
  const mode: ControllerMode = scenario.controllers?.mode ?? "hosted";
  const clock = new SimClock(START);
  const rng = new SimRandom(seed ^ 0x5bd1e995);
  const sandbox = await startSandbox({ store: { now: () => clock.now() } });
  try {
    return await simulate(scenario, mode, clock, rng, sandbox);
  } finally {
    await sandbox.stop();
  }
}

async function simulate(
  scenario: Scenario,
  mode: ControllerMode,
  clock: SimClock,
  rng: SimRandom,
  sandbox: Awaited<ReturnType<typeof startSandbox>>,
): Promise<WorldOutcome> {
  const { store } = sandbox;
  const owner = scenario.repo.owner;
  const name = scenario.repo.name;
  const repo = `${owner}/${name}`;
  const bot = `${store.app.slug}[bot]`;
  const writers = new Set(
    scenario.users
      .filter((u) => ["admin", "maintain", "write"].includes(u.permission))
      .map((u) => u.login.toLowerCase()),
  );
  // An app's bot account (`…[bot]`) is GitHub's type Bot.
  for (const user of scenario.users)
    store.addUser(user.login, {
      permission: user.permission,
      ...(user.login.endsWith("[bot]") ? { type: "Bot" as const } : {}),
    });
  store.createRepo({ owner, name });
  for (const user of scenario.users) store.setPermission(repo, user.login, user.permission);
  const configText = scenarioConfigText(scenario, "demo-agent {prompt_file}");
  store.setFile(repo, CONFIG_PATH, configText);
  // A job's iteration limit unless a writer's `--iterations M` set another (iterationLimitByWritersWord).
  const parsedConfig = parseConfig(configText);
  const configuredIterations = parsedConfig.ok
    ? parsedConfig.config.maxIterations
    : DEFAULT_CONFIG.maxIterations;
  const planGate = parsedConfig.ok ? parsedConfig.config.planGate : DEFAULT_CONFIG.planGate;
  const config = parsedConfig.ok ? parsedConfig.config : DEFAULT_CONFIG;
  const { task: taskBudget, session: sessionBudget } = config.budgets;
  const budgeted = [taskBudget.tokens, taskBudget.usd, sessionBudget.tokens, sessionBudget.usd].some(
    (b) => b !== null,
  );
  for (const [path, text] of Object.entries(scenario.repo.files)) store.setFile(repo, path, text);
  store.addWorkflow(repo, { path: `.github/workflows/${WORKER_WORKFLOW}`, name: "Autopilot worker" });
  const agents = new Map<number, SimAgent>();
  scenario.issues.forEach((issue, i) => {
    agents.set(i + 1, {
      behaviors: issue.agent?.behavior ?? ["complete"],
      ...(issue.agent?.answerIncludes ? { answerIncludes: issue.agent.answerIncludes } : {}),
      ...(issue.agent?.resetInSeconds ? { resetInSeconds: issue.agent.resetInSeconds } : {}),
    });
  });
  openIssues(scenario.issues, repo, store, scenario.users[0]?.login ?? owner);
  if (scenario.faults)
    sandbox.faults.set({ ...scenario.faults, webhookDropRate: 0, webhookDuplicateRate: 0 });

  const violations: Violation[] = [];
  const seen = new Set<string>();
  const report = (found: Violation[]) => {
    for (const v of found) {
      const key = `${v.invariant}:${v.detail}`;
      if (!seen.has(key)) {
        seen.add(key);
        violations.push(v);
      }
    }
  };
  const counts = {
    tasks: scenario.issues.length,
    events: 0,
    faults: 0,
    reconciles: 0,
    dispatches: 0,
    merges: 0,
    requests: 0,
    planRuns: 0,
    approvedPlanRuns: 0,
    roundCommands: 0,
    budgetStops: 0,
    candidates: 0,
    botWords: 0,
  };
  const observation: SimObservation = {
    store,
    repo,
    bot,
    writers,
    dispatches: [],
    writerCommands: [],
    gatedHeads: new Map(),
    trackingTampered: false,
    elapsed: () => Math.round((clock.ms() - START) / 1000),
  };

  const controllers = await SimControllers.create(scenario.controllers?.instances ?? 1);
  const pendingReconcile = new Map<number, boolean>();
  const requestReconcile = (id: number, delayMs: number, endingRunId?: number) => {
    if (pendingReconcile.get(id) && !endingRunId) return;
    pendingReconcile.set(id, true);
    clock.after(delayMs, `reconcile-${id}`, () => runReconcile(id, endingRunId));
  };
  const everyController = (delayMs: number, endingRunId?: number) => {
    for (const state of controllers.states)
      requestReconcile(state.id, delayMs + (state.id - 1) * rng.int(0, 1500), endingRunId);
  };

  const worker = new SimWorker({
    store,
    repo,
    clock,
    rng: rng.fork(),
    bot,
    agents,
    writers,
    maxIterations: configuredIterations,
    candidates: config.bestOf.candidates.length,
    budgets: budgeted ? { budgets: config.budgets, maxParallel: config.maxParallel } : null,
    onRunEnded: (d) => {
      if (mode === "actions") everyController(1000, d.runId);
    },
    onSessionBudgetStop: (d) => report(sessionBudgetStopOnlyWhenSpent(observation, d, config.budgets)),
    onPrompt: (d, prompt) => report(workInvariants.promptHoldsOnlyWritersWords(observation, d, prompt)),
  });
  // Whether the controller has rebuilt its state (its block lost, or the dashboard deleted) so far: a rebuilt state
  // starts the session budget's count again (docs/WORKER.md, "Budgets"), so the session's bound counts from there.
  let rebuilt = false;
  const stateRebuilt = (): boolean => {
    if (rebuilt) return true;
    const tracking = trackingIssueNumber(store, repo, bot);
    const text = tracking === null ? null : (store.getIssue(repo, tracking)?.body ?? null);
    const incidents = text === null ? [] : (parseDashboard(text).state?.incidents ?? []);
    rebuilt = incidents.some((i) => i.kind === "state_rebuilt" || i.kind === "tracking_issue_missing");
    return rebuilt;
  };

  observation.dispatches = worker.dispatches;
  store.onWorkflowDispatch((request) => {
    const dispatch = worker.onDispatch(request);
    if (!dispatch) return;
    counts.dispatches++;
    if (dispatch.candidateNumber !== null) counts.candidates++;
    if (dispatch.plan === "propose") counts.planRuns++;
    else if (dispatch.plan !== null && dispatch.plan !== "split") counts.approvedPlanRuns++;
    report(invariants.noTaskDispatchedTwiceAtOnce(observation, dispatch));
    report(invariants.dispatchOnlyByWritersWord(observation, dispatch));
    report(invariants.iterationLimitByWritersWord(observation, dispatch, configuredIterations));
    report(workInvariants.dependenciesDoneBeforeDispatch(observation, dispatch));
    report(workInvariants.noEpicDispatched(observation, dispatch));
    report(planGatedWorkOnlyOnWritersApproval(observation, dispatch, planGate));
    report(bestOfOnlyByWritersWord(observation, dispatch, config.bestOf.onRetry));
    const read = spendAtRead.get(requesting);
    if (budgeted && read)
      report(budgetsNeverExceededAtDispatch(observation, dispatch, config.budgets, read, !stateRebuilt()));
  });
  store.onWorkflowRunCancel(({ run }) => worker.cancel(run.id));

  // CI: every head of a task PR gets a `ci` check run a while later; a `ci-fix` task's first head fails.
  const ciFailuresLeft = new Map<number, number>();
  scenario.issues.forEach((issue, i) => {
    if (issue.agent?.behavior.includes("ci-fix")) ciFailuresLeft.set(i + 1, 1);
  });
  const runCi = (sha: string, branch: string) => {
    const task = Number(/issue-(\d+)$/.exec(branch)?.[1] ?? 0);
    clock.after(rng.int(30, 180) * 1000, "ci", () => {
      const left = ciFailuresLeft.get(task) ?? 0;
      if (left > 0) ciFailuresLeft.set(task, left - 1);
      store.createCheckRun(repo, {
        name: "ci",
        appSlug: "github-actions",
        headSha: sha,
        status: "completed",
        conclusion: left > 0 ? "failure" : "success",
        completedAt: clock.now(),
      });
    });
  };

  const webhookDrop = scenario.faults?.webhookDropRate ?? 0;
  const webhookDuplicate = scenario.faults?.webhookDuplicateRate ?? 0;
  const pendingMerges: { number: number; by: string; readAt: number }[] = [];
  // The world's events in order (simulated time stands still within a reconcile, so it cannot order them): the
  // event each running reconcile began after, each review's, and whose request goes out now (set once the world
  // has moved before it). A merge was decided on what GitHub said when its reconcile read the repository.
  let eventSeq = 0;
  const reviewSeq = new Map<number, number>();
  const reconcileStarts = new Map<number, number>();
  // The event each running reconcile's first GraphQL read (the snapshot, reviews included) was sent after: a
  // review submitted before it was seen, however late in the reconcile it came.
  const reconcileReads = new Map<number, number>();
  // In a world with budgets, the spend the workers had reported at that first read.
  const spendAtRead = new Map<number, ReportedSpend>();
  let requesting = 0;
  store.onEvent((event: StoreEvent) => {
    counts.events++;
    eventSeq++;
    if (event.name === "pull_request_review" && !reviewSeq.has(event.review.id))
      reviewSeq.set(event.review.id, eventSeq);
    if (event.name === "pull_request" && (event.action === "opened" || event.action === "synchronize"))
      runCi(event.pull.pull!.head.sha, event.pull.pull!.head.ref);
    if (event.name === "pull_request" && event.action === "closed" && event.pull.pull?.merged)
      pendingMerges.push({
        number: event.pull.number,
        by: event.sender,
        readAt: reconcileReads.get(requesting) ?? reconcileStarts.get(requesting) ?? eventSeq,
      });
    if (!triggers(mode, event, bot)) return;
    if (rng.chance(webhookDrop)) {
      counts.faults++;
      return;
    }
    everyController(rng.int(1000, 3000));
    if (rng.chance(webhookDuplicate)) {
      counts.faults++;
      everyController(rng.int(3000, 6000));
    }
  });

  // Rules armed on a PR's passing checks fire between two requests, at a moment the seed chooses: most likely
  // just before a merge request, the race they stand for (a push between Autopilot's read of the head and its
  // merge, which only the merge's pinned head SHA stops: `npm run simulate -- --mutant merge-head-sha`).
  const armed = scenario.timeline.filter((r) => r.when.pr !== undefined && r.when.checks === "success");
  const fireArmed = async (method: string, url: string) => {
    const merging = method === "PUT" && /\/pulls\/\d+\/merge$/.test(url);
    for (const rule of [...armed]) {
      const branch = `autopilot/issue-${rule.when.pr}`;
      const pulls = store.listPulls(repo).filter((p) => p.pull.head.ref === branch);
      const head = pulls.find((p) => p.state === "open")?.pull.head.sha;
      // A person's push also comes after the merge, onto the branch still at the merged head (they did not see
      // the merge): what Autopilot's deletion of the merged branch must not take with it (noCommitLost).
      const merged = pulls.find((p) => p.pull.merged)?.pull.head.sha;
      const lateOnMerged =
        !head &&
        merged !== undefined &&
        rule.do.some((a) => a.push) &&
        (await store.resolveRef(repo, `refs/heads/${branch}`)) === merged;
      if (
        !lateOnMerged &&
        (!head || !store.listCheckRuns(repo, head).some((r) => r.name === "ci" && r.conclusion === "success"))
      )
        continue;
      if (!rng.chance(merging ? 0.5 : 0.1)) continue;
      armed.splice(armed.indexOf(rule), 1);
      for (const action of rule.do) await playAction(action, timelineCtx);
    }
  };
  // The world may move between two requests of a reconcile: what is due within its window, chosen by the seed.
  let depth = 0;
  const hooks: ControllerHooks = {
    beforeRequest: async (id, method, url) => {
      if (armed.length) await fireArmed(method, url);
      if (depth <= 1 && rng.chance(0.25)) {
        const task = clock.takeWithin(clock.ms() + RECONCILE_WINDOW_MS, (t) =>
          t.label.startsWith("reconcile-")
            ? t.label !== `reconcile-${id}` && depth === 1
            : !t.label.startsWith("tick"),
        );
        if (task) await task.run();
      }
      requesting = id;
      if (method === "POST" && url.endsWith("/graphql") && !reconcileReads.has(id)) {
        reconcileReads.set(id, eventSeq);
        if (budgeted) spendAtRead.set(id, reportedSpend(observation));
      }
    },
  };

  const runReconcile = async (id: number, endingRunId?: number) => {
    pendingReconcile.set(id, false);
    const state = controllers.states[id - 1]!;
    if (state.running) return;
    depth++;
    counts.reconciles++;
    reconcileStarts.set(id, eventSeq);
    try {
      const { result } = await controllers.reconcile(id, {
        mode,
        url: sandbox.url,
        token: sandbox.installationToken(),
        repo: { owner, name },
        bot,
        now: () => clock.now(),
        hooks,
        ...(endingRunId ? { endingRunId } : {}),
      });
      if (result) counts.requests += Object.values(result.requests).reduce((a, b) => a + b, 0);
    } finally {
      depth--;
      reconcileStarts.delete(id);
      reconcileReads.delete(id);
      spendAtRead.delete(id);
    }
    await afterReconcile();
  };

  const afterReconcile = async () => {
    for (const merge of pendingMerges.splice(0)) {
      counts.merges++;
      report(
        await invariants.mergeOnlyWithEveryGate(
          observation,
          merge.number,
          merge.by,
          (review) => (reviewSeq.get(review) ?? 0) <= merge.readAt,
        ),
      );
    }
    const tracking = trackingIssueNumber(store, repo, bot);
    const body = tracking === null ? null : (store.getIssue(repo, tracking)?.body ?? null);
    if (tracking !== null) {
      const lastEditor = store.requireIssue(repo, tracking).contentEdits?.at(-1)?.editor;
      if (lastEditor === undefined || lastEditor.toLowerCase() === bot.toLowerCase())
        observation.trackingTampered = false;
    }
    report(invariants.trackingStateRoundTrips(observation, body));
    const session = body === null ? null : (parseDashboard(body).state?.session ?? null);
    if (session) report(invariants.sessionMovesOnlyByWriters(observation, session));
  };

  // Gated heads, as the worker's results said them.
  store.onEvent((event) => {
    if (event.name !== "issue_comment" || event.sender.toLowerCase() !== bot.toLowerCase()) return;
    const match = /"humanGate":\{"fired":true/.test(event.comment.body)
      ? /"headSha":"([0-9a-f]{40})".*"prNumber":(\d+)/.exec(event.comment.body)
      : null;
    if (!match) return;
    const pr = Number(match[2]);
    const heads = observation.gatedHeads.get(pr) ?? new Set<string>();
    heads.add(match[1]!);
    observation.gatedHeads.set(pr, heads);
  });

  const timelineCtx = {
    store,
    repo,
    bot,
    writers,
    nowMs: () => clock.ms(),
    recordWriterCommand: (id: number, body: string) => observation.writerCommands.push({ id, body }),
    tamperTracking: () => {
      observation.trackingTampered = true;
    },
    killRun: (issue: number) => worker.kill(issue),
    killController: (afterWrites: number) => {
      controllers.states[0]!.killAfterWrites = afterWrites;
    },
  };
  // Rules armed on a comment of Autopilot's on an issue (a plan posted: world-generator.ts `gateByPlan`) fire
  // once, a moment later or a while later as the seed chooses: a writer's approval may race the planning run's
  // result, or come long after.
  const onComment = scenario.timeline.filter((r) => r.when.issue !== undefined && r.when.commented);
  store.onEvent((event) => {
    if (event.name !== "issue_comment" || event.sender.toLowerCase() !== bot.toLowerCase()) return;
    for (const rule of [...onComment]) {
      if (rule.when.issue !== event.comment.issueNumber) continue;
      if (!new RegExp(rule.when.commented!).test(event.comment.body)) continue;
      onComment.splice(onComment.indexOf(rule), 1);
      const delay = rng.chance(0.4) ? rng.int(0, 5) : rng.int(5, 1800);
      clock.after(delay * 1000, "timeline", async () => {
        for (const action of rule.do) await playAction(action, timelineCtx);
      });
    }
  });
  for (const rule of scenario.timeline) {
    if (rule.when.afterSeconds === undefined) continue;
    clock.after(rule.when.afterSeconds * 1000, "timeline", async () => {
      for (const action of rule.do) {
        const did = await playAction(action, timelineCtx);
        if (did && (action.killRun || action.killController || action.corruptState || action.delete))
          counts.faults++;
      }
    });
  }

  // Ticks: the hosted app's periodic reconcile; the controller workflow's schedule in Actions mode.
  const tick = () => {
    everyController(0);
    // Idle ticks are cheap on GitHub but not free here: while nothing runs the hosted tick slows down.
    const busy = worker.live().length > 0;
    clock.after(mode === "actions" ? 600_000 : busy ? 120_000 : 600_000, "tick", tick);
  };
  clock.after(1000, "tick", tick);

  const horizon = START + scenario.limits.maxDurationSeconds * 1000;
  let quietTicks = 0;
  for (let task = clock.next(horizon); task; task = clock.next(horizon)) {
    await task.run();
    if (task.label === "tick") {
      const busy = worker.live().length > 0 || clock.pendingWork();
      quietTicks = busy ? 0 : quietTicks + 1;
      if (quietTicks >= 6) break;
    }
  }
  // Liveness has a bound, not a deadline: a label write lost in the world's last minutes is repaired by a
  // reconcile past Autopilot's settle window or its dispatch's grace (src/core/reconcile/timing.ts, ten minutes
  // each) on the next scheduled run. A world that ends with a task in progress and no run plays on for that
  // bound (its ticks, runs and CI go on) before it is judged, as does one whose labels do not yet show an
  // off-ramp Autopilot's state records (labelsFollowTheState); the others end as they did.
  const finalState = () => {
    const tracking = trackingIssueNumber(store, repo, bot);
    const text = tracking === null ? null : (store.getIssue(repo, tracking)?.body ?? null);
    return { body: text, state: text === null ? null : parseDashboard(text).state };
  };
  if (
    invariants.everyTaskSettles(observation, "paused", planGate.label).length > 0 ||
    invariants.labelsFollowTheState(observation, finalState().state).length > 0
  ) {
    const settled = clock.ms() + SETTLE_BOUND_MS;
    for (let task = clock.next(settled); task; task = clock.next(settled)) await task.run();
  }
  report(invariants.everyWriterCommandAcknowledged(observation));
  report(invariants.oneTrackingIssue(observation));
  const { body, state } = finalState();
  const status = state?.session.status ?? null;
  report(invariants.everyTaskSettles(observation, status, planGate.label));
  report(invariants.labelsFollowTheState(observation, state));
  report(await workInvariants.noCommitLost(observation));
  report(commandWorkOnlyByWriters(observation));
  report(rollbackRevertsOnlyAutopilotsMerges(observation));
  // The session's end bound is promised for one worker at a time, and counts from the state: a state rebuilt (its
  // block lost, or the dashboard deleted) starts the count again (docs/WORKER.md, "Budgets").
  if (budgeted)
    report(
      budgetsNeverExceededAtEnd(observation, config.budgets, config.maxParallel === 1 && !stateRebuilt()),
    );
  report(bestOfOneWinner(observation));
  report(botsAreNeverObeyed(observation));
  counts.botWords =
    store.listComments(repo).filter((c) => /\[bot\]$/i.test(c.user) && /^\/autopilot\b/.test(c.body.trim()))
      .length +
    store
      .listIssues(repo)
      .flatMap((i) => i.events)
      .filter(
        (e) =>
          e.event === "labeled" && /\[bot\]$/i.test(e.actor) && e.actor.toLowerCase() !== bot.toLowerCase(),
      ).length;
  counts.budgetStops = worker.budgetStops;
  counts.roundCommands = store
    .listComments(repo)
    .filter((c) => /^\/autopilot (fix|follow-up|rollback)\b/.test(c.body)).length;
  if (process.env.SIM_DEBUG) {
    for (const issue of store.listIssues(repo))
      console.log(
        issue.number,
        issue.state,
        issue.labels.map(String).join(","),
        issue.pull ? `pr head ${issue.pull.head.ref} merged=${issue.pull.merged}` : "",
      );
    console.log(body);
  }
  return {
    name: scenario.name,
    mode,
    violations,
    counts,
    simulatedSeconds: Math.round((clock.ms() - START) / 1000),
  };
}

/** Whether an event starts a reconcile: every webhook for the hosted app; the controller workflow's triggers in Actions. */
function triggers(mode: ControllerMode, event: StoreEvent, bot: string): boolean {
  if (mode === "hosted")
    return [
      "issues",
      "issue_comment",
      "pull_request",
      "pull_request_review",
      "check_run",
      "workflow_run",
      "push",
    ].includes(event.name);
  if (event.name === "workflow_run") return "action" in event && event.action === "completed";
  if (event.name === "check_run" || event.name === "check_suite") return true;
  // The template's `if:` skips most of the App's own events (templates/workflows/autopilot-controller.yml).
  if (event.sender.toLowerCase() === bot.toLowerCase())
    return event.name === "pull_request" && "action" in event && event.action === "closed";
  return ["issues", "issue_comment", "pull_request", "pull_request_review", "push"].includes(event.name);
}
