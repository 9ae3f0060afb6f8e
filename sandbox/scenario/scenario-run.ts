/**
 * One run of a scenario on the sandbox, as explicit steps:
 *
 * 1. start: the GitHub stand-in (REST, GraphQL, webhooks) and its git remote; seed the repository, people and
 *    issues (sandbox/scenario/seed-scenario.ts); the Actions stand-in; a watch on the store; the real
 *    controller app with webhooks pointed at it. In this order: the controller first sees a seeded
 *    repository, and the recorders see only what happens after seeding.
 * 2. play: the scenario's timeline, as its people (sandbox/scenario/timeline/timeline.ts), until
 * 3. settle: every issue has settled, or the time limit, or an interrupt.
 * 4. report: the JSON report (sandbox/scenario/scenario-report.ts) with its final checks.
 *
 * Everything started is registered for cleanup and stopped at the end, whatever happens.
 * Ctrl-C (SIGINT/SIGTERM) stops the sandbox, kills every run and removes every temporary directory; a second
 * Ctrl-C exits at once after killing the runs' process groups.
 */
import { runExpectations } from "./checks/expect-schema.js";
import { startAlertReceiver } from "./alert-receiver.js";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AUTOPILOT_JOB_USER, isAutopilotActionRef } from "./autopilot-action.js";
import { type ActionsEvent, type ActionsRunner, startActions } from "../emulator/actions/actions.js";
import { attachGit, type SandboxGit } from "../emulator/git/sandbox-git.js";
import { type Sandbox, startSandbox, WebViewPortError } from "../emulator/index.js";
import type { SandboxStore } from "../emulator/store.js";
import { CleanupRegistry } from "./cleanup-registry.js";
import {
  controllerMode,
  isControllerRun,
  scheduleMinuteMs,
  timeLimitSeconds,
} from "./controllers/controller-mode.js";
import { addFinalChecks } from "./checks/final-checks.js";
import { killRunPlan, RunKiller } from "./controllers/kill-run-fault.js";
import { MissingPartsError, type StartControllerServer } from "./missing-parts.js";
import { issueOfRun, RunNarrator } from "./run-narrator.js";
import { ciSettings, type Scenario, ScenarioError, scenarioCi } from "./scenario-file.js";
import type { ReportState } from "./scenario-fields.js";
import { demoAgentCommand } from "./agent/demo-agent.js";
import { ScenarioObserver, TERMINAL } from "./scenario-observer.js";
import { type Progress, ProgressLog } from "./scenario-progress.js";
import {
  buildReport,
  emptyReport,
  type FaultCheck,
  type ScenarioReport,
  writeReport,
} from "./scenario-report.js";
import type { ScenarioRepo, ScenarioWorld } from "./scenario-world.js";
import { declareInstallations, orgRepos, seedOrgRepos } from "./seed-installations.js";
import { type SeededScenario, seedScenario } from "./seed-scenario.js";
import { type RunningControllers, startControllers } from "./controllers/start-controllers.js";
import { StoreWatch } from "./store-watch.js";
import { Timeline } from "./timeline/timeline.js";
import { TimelineActor } from "./timeline/timeline-actor.js";
import type { RunScenarioOptions } from "./run-scenario-options.js";

/**
 * When each started part is stopped (lowest first), the order that quiets things fastest: webhooks off, runs
 * killed, then the controller, the git remote and the sandbox, then temporary files.
 */
const STOP_ORDER = {
  webhookDeliveries: 0,
  pendingFaults: 0,
  storeWatch: 1,
  actionsRuns: 10,
  controller: 20,
  gitRemote: 50,
  sandbox: 60,
  temporaryFiles: 90,
} as const;

/** With `keep`, what is ordered before this stops (webhooks, runs, controller); the git remote and the sandbox
 * (whose pages read both) stay. */
const KEEP_UNTIL_ORDER = STOP_ORDER.gitRemote;

/** How often the run looks at the timeline and the issues. */
const STEP_MS = 200;
/** How long the settle check waits for the hosted controller to finish its reconciles before looking again. */
const IDLE_WAIT_MS = 10_000;

/** What `start` hands to the later steps. */
interface StartedRun {
  world: ScenarioWorld;
  seeded: SeededScenario;
  watch: StoreWatch;
  controllers: RunningControllers;
}

export class ScenarioRun {
  private readonly started = Date.now();
  private readonly log: ProgressLog;
  private readonly progress: Progress;
  private readonly cleanups: CleanupRegistry;
  private readonly repo: ScenarioRepo;
  /** The scenario's people and the repository owner (lowercase logins). */
  private readonly humans: Set<string>;
  /** Worker runs dispatched, by task issue. */
  private readonly runIssues = new Map<number, number>();
  private readonly faultChecks: FaultCheck[] = [];
  /** Holds the git remote, the Actions workspaces and the demo agent's script. */
  private readonly tempDir: string;
  private interrupted = false;
  // Set as each part is up: the error report and a forced exit use whatever exists.
  private sandbox: Sandbox | null = null;
  private actions: ActionsRunner | null = null;
  private observer: ScenarioObserver | null = null;

  constructor(
    private readonly scenario: Scenario,
    private readonly options: RunScenarioOptions,
    private readonly parts: { actionDir: string; startController: StartControllerServer },
  ) {
    this.log = new ProgressLog(this.started, options.onProgress);
    this.progress = this.log.emit;
    this.cleanups = new CleanupRegistry((message) => this.progress("warning", null, message));
    const { owner, name } = scenario.repo;
    this.repo = { owner, name, full: `${owner}/${name}` };
    this.humans = new Set(scenario.users.map((u) => u.login.toLowerCase()));
    this.humans.add(owner.toLowerCase());
    // The organization's people and accounts are people too (seed-installations.ts).
    for (const installation of scenario.installations ?? []) {
      this.humans.add(installation.account.toLowerCase());
      for (const other of installation.repositories)
        for (const user of other.users) this.humans.add(user.login.toLowerCase());
    }
    this.tempDir = mkdtempSync(join(tmpdir(), "autopilot-scenario-"));
    // Traversable by the worker's agent user, which reads the demo agent's script under it.
    chmodSync(this.tempDir, 0o755);
    this.cleanups.add("temporary files", STOP_ORDER.temporaryFiles, () =>
      rmSync(this.tempDir, { recursive: true, force: true }),
    );
  }

  /** Runs every step and stops everything; returns (and writes, when asked) the report. */
  async run(): Promise<ScenarioReport> {
    const stopHandlingSignals = this.handleInterrupts();
    let report: ScenarioReport;
    try {
      const started = await this.start();
      const outcome = await this.play(started);
      report = await this.report(started, outcome);
      await this.handOver(started.world, report);
    } catch (error) {
      if (
        error instanceof ScenarioError ||
        error instanceof MissingPartsError ||
        error instanceof WebViewPortError
      )
        throw error;
      report = { ...this.errorReport(), outcome: "error", error: (error as Error).stack ?? String(error) };
    } finally {
      // The handlers stay until everything is stopped: a second Ctrl-C during cleanup forces the exit.
      await this.cleanups.stopAll();
      stopHandlingSignals();
    }
    if (this.options.report) writeReport(this.options.report, report);
    return report;
  }

  // --- 1. start ------------------------------------------------------------------------------------------

  private async start(): Promise<StartedRun> {
    const { scenario, repo, progress, cleanups } = this;
    progress("setup", null, `scenario "${scenario.name}": starting the sandbox`);
    const sandbox = await startSandbox({ webPort: this.options.webPort ?? 0 });
    this.sandbox = sandbox;
    this.options.onWebView?.(sandbox.web.url);
    cleanups.add("webhook deliveries", STOP_ORDER.webhookDeliveries, () => sandbox.setWebhookTarget(null));
    cleanups.add("the sandbox", STOP_ORDER.sandbox, () => sandbox.stop());
    const store = sandbox.store;
    const git = await attachGit(sandbox, { root: join(this.tempDir, "git") });
    cleanups.add("the git remote", STOP_ORDER.gitRemote, () => git.stop());

    declareInstallations(scenario, repo, store);
    const seeded = await seedScenario(scenario, repo, { store, git }, this.tempDir, progress);
    await seedOrgRepos(scenario, { store, git }, dirname(seeded.scriptPath), progress);
    const observer = new ScenarioObserver(
      store,
      repo.full,
      seeded.config.labels,
      seeded.config.branchPrefix,
      this.humans,
    );
    this.observer = observer;
    const narrator = new RunNarrator(this.log, observer, store, repo.full, this.humans);
    // The alert webhook's receiver, on 127.0.0.1, stopped after the controller that sends to it. In Actions mode
    // the controller workflow maps its URL and secret from repository secrets (templates/workflows).
    const alertReceiver = runExpectations(scenario.expect).alertWebhook ? await startAlertReceiver() : null;
    if (alertReceiver) cleanups.add("the alert receiver", STOP_ORDER.gitRemote, () => alertReceiver.stop());
    const alertSecrets: Record<string, string> = alertReceiver
      ? {
          AUTOPILOT_ALERT_WEBHOOK_URL: alertReceiver.url,
          AUTOPILOT_ALERT_WEBHOOK_SECRET: alertReceiver.secret,
        }
      : {};
    const actions = await this.startActions(
      sandbox,
      store,
      git,
      narrator,
      dirname(seeded.scriptPath),
      alertSecrets,
    );
    const world: ScenarioWorld = {
      scenario,
      repo,
      sandbox,
      store,
      git,
      actions,
      observer,
      humans: this.humans,
      progress,
      agentCommand: demoAgentCommand(seeded.scriptPath),
      alertReceiver,
    };

    const watch = new StoreWatch(store, repo.full, scenario, seeded.config.labels.ready, narrator);
    const unwatch = watch.start();
    cleanups.add("progress", STOP_ORDER.storeWatch, () => unwatch());

    const controllers = await startControllers(
      world,
      this.parts.startController,
      cleanups,
      STOP_ORDER.controller,
    );
    if (scenario.faults) sandbox.faults.set(scenario.faults);
    return { world, seeded, watch, controllers };
  }

  /** The Actions stand-in: runs the worker workflow (and CI) of the scenario repository. */
  private async startActions(
    sandbox: Sandbox,
    store: SandboxStore,
    git: SandboxGit,
    narrator: RunNarrator,
    /** The demo agent's directory: it keeps its state there, so the agent's sandbox shares it. */
    agentDir: string,
    /** More repository secrets (the alert webhook's, when the scenario has a receiver). */
    moreSecrets: Record<string, string>,
  ): Promise<ActionsRunner> {
    const { scenario, repo, options } = this;
    const killer = new RunKiller(
      killRunPlan(scenario.faults?.killRun),
      this.progress,
      this.cleanups,
      STOP_ORDER.pendingFaults,
      join(agentDir, "demo-script.json"),
    );
    const ci = scenarioCi(scenario);
    const actionsMode = controllerMode(scenario) === "actions";
    const actions: ActionsRunner = startActions({
      // Actions mode: the controller workflow runs on its events and schedule, as GitHub runs it.
      ...(actionsMode
        ? {
            eventTriggers: true,
            scheduleMinuteMs: scheduleMinuteMs(scenario),
            // Lost webhooks (a fault) are lost events here: no run starts for them; the schedule recovers.
            loseEvent: () => sandbox.faults.forDelivery().drop,
          }
        : {}),
      url: sandbox.url,
      store,
      git,
      actionDir: this.parts.actionDir,
      actionRefs: isAutopilotActionRef,
      jobUser: AUTOPILOT_JOB_USER,
      ci: {
        // The organization's other repositories with a CI command of their own (scenario-installations.ts).
        ...Object.fromEntries(
          (scenario.installations ?? []).flatMap((i) =>
            i.repositories.flatMap((r) => (r.ci ? [[`${i.account}/${r.name}`, ciSettings(r.ci)]] : [])),
          ),
        ),
        ...(ci ? { [repo.full]: ci } : {}),
      },
      app: { id: sandbox.app.id, privateKey: sandbox.app.privateKey },
      vars: { AUTOPILOT_APP_ID: String(sandbox.app.id) },
      secrets: {
        AUTOPILOT_APP_PRIVATE_KEY: sandbox.app.privateKey,
        AUTOPILOT_PRIVATE_KEY: sandbox.app.privateKey,
        ...moreSecrets,
      },
      jobTimeoutMs: scenario.limits.jobTimeoutSeconds * 1000,
      // The demo agent keeps its per-issue state beside its script (src/worker/isolation/agent-user.ts reads the variable).
      runnerEnv: { AUTOPILOT_AGENT_SHARED_DIRS: agentDir },
      workDir: join(this.tempDir, "actions"),
      keepWorkspaces: options.keepWorkspaces ?? false,
      verbose: options.verbose ?? false,
      // Events come only once runs start, after `actions` is assigned.
      onEvent: (event) => this.onActionsEvent(event, actions, killer, narrator),
    });
    this.actions = actions;
    this.cleanups.add("the Actions runs", STOP_ORDER.actionsRuns, () => actions.stop());
    const runSecrets = [sandbox.app.privateKey];
    sandbox.web.setRunDetails((runId) => {
      const run = actions.getRun(runId);
      return run && { ...run, secrets: [...runSecrets, ...(run.token ? [run.token] : [])] };
    });
    await actions.syncWorkflows(repo.full);
    for (const other of orgRepos(scenario)) await actions.syncWorkflows(other);
    return actions;
  }

  private onActionsEvent(
    event: ActionsEvent,
    actions: ActionsRunner,
    killer: RunKiller,
    narrator: RunNarrator,
  ): void {
    // The scenario repository's worker runs (another repository of the organization has its own #1).
    const full = `${this.scenario.repo.owner}/${this.scenario.repo.name}`.toLowerCase();
    const ours = "run" in event && event.run.repo.toLowerCase() === full;
    if (event.type === "run-started" && ours && !isControllerRun(event.run)) {
      const issue = issueOfRun(event.run.inputs);
      if (issue) this.runIssues.set(issue, (this.runIssues.get(issue) ?? 0) + 1);
      killer.runStarted(actions, event.run.id, issue);
    }
    narrator.actionsEvent(event);
  }

  // --- 2. play, 3. settle --------------------------------------------------------------------------------

  /** Plays the timeline until the run settles, times out or is interrupted. */
  private async play({ world, watch, controllers }: StartedRun): Promise<ScenarioReport["outcome"]> {
    const { scenario, progress } = this;
    const timeline = new Timeline(world, new TimelineActor(world, controllers, this.faultChecks));
    const limitSeconds = timeLimitSeconds(scenario);
    const deadline = this.started + limitSeconds * 1000;
    const lastStates = new Map<number, ReportState>();
    for (;;) {
      if (this.interrupted) return "interrupted";
      if (Date.now() > deadline) {
        progress("warning", null, `time limit of ${limitSeconds}s reached`);
        return "timeout";
      }
      await timeline.step();
      world.observer.scanWorkerResults();
      this.reportStateChanges(world, lastStates);
      const paused = this.options.endOnPause ? world.observer.pausedBecause() : null;
      if (paused !== null) {
        progress("warning", null, `the session paused (${paused}); the run ends here`);
        return "paused";
      }
      if (this.settled(world, watch, timeline) && (await this.caughtUp(watch, controllers))) return "settled";
      await new Promise((r) => setTimeout(r, STEP_MS));
    }
  }

  /** A progress line for each issue whose state changed since the last look. */
  private reportStateChanges({ observer }: ScenarioWorld, lastStates: Map<number, ReportState>): void {
    for (let n = 1; n <= this.scenario.issues.length; n++) {
      const state = observer.state(n);
      const before = lastStates.get(n);
      if (before !== state) {
        lastStates.set(n, state);
        if (before !== undefined) this.progress("state", n, `${before} → ${state}`);
      }
    }
  }

  /**
   * The hosted controller has reconciled the last change: a quiet spell alone can end the run while its
   * reconcile of a merge (the one that completes the session and posts its report) is still reading, on a
   * busy machine. Nothing changed while it finished: the run has settled.
   */
  private async caughtUp(watch: StoreWatch, controllers: RunningControllers): Promise<boolean> {
    const before = watch.lastEventAt;
    // Ticks may keep the controller busy: wait a while at most, then look again (the time limit still holds).
    let timer: NodeJS.Timeout | undefined;
    const idle = await Promise.race([
      controllers.idle().then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), IDLE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    return idle && watch.lastEventAt === before;
  }

  /** Settled: every issue terminal, no run queued or running (controller jobs too), no rule left that could still act, and quiet. */
  private settled({ observer: obs, actions }: ScenarioWorld, watch: StoreWatch, timeline: Timeline): boolean {
    const { scenario } = this;
    const pending = timeline.pending();
    const allTerminal = scenario.issues.every((_, i) => {
      const n = i + 1;
      const state = obs.state(n);
      // A ready label from someone without write access is not work: such an issue is settled as it is.
      if (state === "ready" && !watch.invariants.readyByWriter(obs.issue(n))) return !pending.targets.has(n);
      return TERMINAL.has(state) && (state === "done" || !pending.targets.has(n));
    });
    const quiet = Date.now() - watch.lastEventAt >= scenario.limits.settleSeconds * 1000;
    return (
      !timeline.startPending &&
      allTerminal &&
      !obs.orgWorkPending(orgRepos(scenario)) &&
      !pending.timed &&
      // A controller job still queued or running (Actions mode) may yet write: the merge's own run ends the
      // session only after the last task is done.
      actions.activeRuns().length === 0 &&
      quiet
    );
  }

  // --- 4. report -----------------------------------------------------------------------------------------

  private async report(started: StartedRun, outcome: ScenarioReport["outcome"]): Promise<ScenarioReport> {
    const { world, seeded } = started;
    const report = buildReport(
      {
        scenario: this.scenario,
        sandbox: world.sandbox,
        actions: world.actions,
        observer: world.observer,
        scriptPath: seeded.scriptPath,
        runIssues: this.runIssues,
        started: this.started,
      },
      outcome,
    );
    await addFinalChecks(report, { ...started, runIssues: this.runIssues, faultChecks: this.faultChecks });
    const processes = started.controllers.fleet?.processes();
    if (processes?.length) report.controllerProcesses = processes;
    this.progress("done", null, `${outcome} after ${(report.durationMs / 1000).toFixed(1)}s`);
    return report;
  }

  /** Lets the caller look at the final state (`inspect`) and keep the pages up (`keep`) before everything stops. */
  private async handOver(
    { sandbox, store, actions, repo }: ScenarioWorld,
    report: ScenarioReport,
  ): Promise<void> {
    sandbox.web.setLive(false);
    await this.options.inspect?.({ sandbox, store, actions, repo: repo.full });
    if (this.options.keep && !this.interrupted) {
      // The pages stay up showing the state the report describes: nothing acts on the sandbox any more.
      await this.cleanups.stopBefore(KEEP_UNTIL_ORDER);
      const admin = this.scenario.users?.find((user) => user.permission === "admin")?.login;
      await this.options.keep(report, {
        apiUrl: sandbox.url,
        repo: repo.full,
        token: sandbox.userToken(admin ?? this.scenario.repo.owner),
      });
    }
  }

  /** The report of a run that failed: what the parts that were up can tell. */
  private errorReport(): ScenarioReport {
    const { sandbox, actions, observer } = this;
    if (!sandbox || !actions || !observer) return emptyReport(this.scenario, this.started);
    return buildReport(
      {
        scenario: this.scenario,
        sandbox,
        actions,
        observer,
        scriptPath: null,
        runIssues: this.runIssues,
        started: this.started,
      },
      "error",
    );
  }

  // --- interrupts ----------------------------------------------------------------------------------------

  /** Wires Ctrl-C (unless told not to) and the abort signal; returns the function that unwires Ctrl-C. */
  private handleInterrupts(): () => void {
    const onSignal = () => {
      if (this.interrupted) {
        this.actions?.killAllSync();
        rmSync(this.tempDir, { recursive: true, force: true });
        process.exit(130);
      }
      this.interrupted = true;
      this.progress("warning", null, "interrupted: stopping the sandbox, the runs and the controller…");
    };
    const handleSignals = this.options.handleSignals ?? true;
    if (handleSignals) {
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    }
    this.options.signal?.addEventListener("abort", () => {
      this.interrupted = true;
    });
    return () => {
      if (!handleSignals) return;
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    };
  }
}
