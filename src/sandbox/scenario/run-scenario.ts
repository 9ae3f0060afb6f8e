/**
 * Runs a scenario end to end on the sandbox: starts the GitHub stand-in (REST, GraphQL, webhooks), the git
 * remote and the Actions stand-in, seeds the repository, people and issues, starts the real controller app
 * with webhooks pointed at it, plays the scenario's timeline as its people, and waits until every issue has
 * settled (or the time limit). Then it stops everything and returns (and optionally writes) a JSON report.
 *
 * Ctrl-C (SIGINT/SIGTERM) stops the sandbox, kills every run and removes every temporary directory; a second
 * Ctrl-C exits at once after killing the runs' process groups.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { z } from "zod";
import { parseConfig, renderConfigError } from "../../core/config.js";
import { TRACKING_MARKER } from "../../core/dashboard.js";
import { parseWorkerResult } from "../../core/worker-result.js";
import { createOctokit } from "../../github/octokit.js";
import { type ActionsEvent, type ActionsRunner, startActions } from "../github/actions.js";
import { PACKAGE_ROOT } from "../github/package-root.js";
import { checkExpectations, ExpectationRecorder } from "./expectations.js";
import {
  type DemoAgentEntry,
  DemoAgentEntrySchema,
  demoAgentCommand,
  readDemoAgentState,
  writeDemoScript,
} from "./demo-agent.js";
import { attachGit, type SandboxGit } from "../github/sandbox-git.js";
import { type Sandbox, startSandbox, WebViewPortError } from "../github/index.js";
import {
  loadScenario,
  REPORT_STATES,
  type ReportState,
  type Scenario,
  type ScenarioAction,
  type ScenarioCondition,
  type ScenarioRule,
  ScenarioError,
  issueExpectations,
  scenarioCi,
} from "./scenario-file.js";
import { forkBranchRef, type Issue, type SandboxStore, type StoreEvent } from "../github/store.js";
import { ControllerFleet, InvariantRecorder, sendBadSignatureWebhook } from "./faultkit.js";
import { type InvariantReport, invariantsHold } from "./invariants.js";
import type { TaskLabelNames } from "../../core/task.js";

export const DEFAULT_SCENARIO = join(PACKAGE_ROOT, "scenarios", "demo.yml");

/** How long one cleanup step (stopping the controller, the sandbox, …) may take before the next goes. */
const CLEANUP_STEP_MS = 5000;

/** What the runner needs of the controller app (src/app/http-server.ts). */
export interface ControllerServer {
  url: string;
  /** The webhook endpoint, when it is not `url` itself. */
  webhookUrl?: string;
  stop(): Promise<void> | void;
  tick(): Promise<unknown> | unknown;
}

export interface ControllerServerOptions {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  baseUrl: string;
  port: number;
  tickMs: number;
}

export type StartControllerServer = (options: ControllerServerOptions) => Promise<ControllerServer>;

export interface ProgressEvent {
  /** Milliseconds since the scenario started. */
  atMs: number;
  kind:
    | "setup"
    | "state"
    | "run"
    | "ci"
    | "pr"
    | "review"
    | "comment"
    | "human"
    | "dashboard"
    | "warning"
    | "done";
  issue: number | null;
  message: string;
}

export interface RunScenarioOptions {
  /** Where to write the JSON report. */
  report?: string;
  onProgress?: (event: ProgressEvent) => void;
  /** The action run by the worker workflow (default: this repository, i.e. dist/worker/index.js). */
  actionDir?: string;
  /** The controller factory (default: `startControllerServer` from src/app/http-server.ts). */
  startController?: StartControllerServer;
  /** Stop early (Ctrl-C is wired by default, see `handleSignals`). */
  signal?: AbortSignal;
  /** Install SIGINT/SIGTERM handlers for the duration of the run (default true). */
  handleSignals?: boolean;
  /** Keep run workspaces for inspection. */
  keepWorkspaces?: boolean;
  /** Report every line of the runs' output as progress. */
  verbose?: boolean;
  /** Port of the sandbox's web pages on 127.0.0.1 (0 or absent: a free one). */
  webPort?: number;
  /** Told the web pages' URL as soon as the sandbox is up. */
  onWebView?: (url: string) => void;
  /**
   * Called with the finished report after `inspect`, before anything stops: resolve it to stop (`--keep`
   * waits for Ctrl-C here, the pages staying up).
   */
  keep?: (report: ScenarioReport) => Promise<void>;
  /** Called after the run ends and before anything stops: look at the final state (tests, debugging). */
  inspect?: (context: {
    sandbox: Sandbox;
    store: SandboxStore;
    actions: ActionsRunner;
    repo: string;
  }) => void | Promise<void>;
}

export interface ReportIssue {
  number: number;
  title: string;
  state: ReportState;
  labels: string[];
  pr: { number: number; merged: boolean } | null;
  /** Agent iterations across every worker job of the task (from the worker results). */
  iterations: number;
  /** Worker runs dispatched for the task. */
  runs: number;
  /** Times the demo agent actually ran for the task. */
  agentRuns: number;
}

export interface ScenarioReport {
  scenario: string;
  outcome: "settled" | "timeout" | "interrupted" | "error";
  issues: ReportIssue[];
  requests: {
    /** Autopilot's own requests (app, installation and worker tokens). */
    total: number;
    byEndpoint: Record<string, number>;
    byTokenKind: Record<string, number>;
    /** Requests the scenario's people made (user tokens), not in `total`. */
    humans: number;
  };
  durationMs: number;
  expectations: {
    ok: boolean;
    mismatches: { number: number; expected: ReportState; actual: ReportState }[];
    /** Every other unmet expectation (src/sandbox/scenario/expectations.ts), one readable line each. */
    unmet?: string[];
  };
  runs: { total: number; byConclusion: Record<string, number> };
  faults: Record<string, number>;
  /** Requests the sandbox rejected as invalid against GitHub's API description or schema. */
  validationFailures: { method: string; path: string; message: string }[];
  /** The tracking issue's body at the end, hidden markers removed. */
  dashboard: string | null;
  error?: string;
  /** End-of-run invariants (src/sandbox/scenario/invariants.ts); any count above zero fails the run. */
  invariants?: InvariantReport;
  /** Checks made by fault actions (a bad-signature webhook must be answered 400); any failure fails the run. */
  faultChecks?: { name: string; ok: boolean; detail: string }[];
}

/** Thrown before anything starts when a part the scenario needs does not exist yet. */
export class MissingPartsError extends Error {
  override readonly name = "MissingPartsError";
  constructor(readonly missing: string[]) {
    super(`The sandbox cannot run the scenario yet; missing:\n${missing.map((m) => `  - ${m}`).join("\n")}`);
  }
}

const CONTROLLER_MODULE = join(PACKAGE_ROOT, "src", "app", "http-server.ts");

/** Lists what is missing to run scenarios: the controller app and the bundled worker action. */
export async function findMissingParts(
  actionDir = PACKAGE_ROOT,
  startController?: StartControllerServer,
): Promise<{ missing: string[]; startController: StartControllerServer | null }> {
  const missing: string[] = [];
  let factory: StartControllerServer | null = startController ?? null;
  if (!factory) {
    if (!existsSync(CONTROLLER_MODULE)) {
      missing.push(
        "the controller app: src/app/http-server.ts exporting startControllerServer({ appId, privateKey, webhookSecret, baseUrl, port, tickMs }) → { url, stop(), tick() }",
      );
    } else {
      try {
        const mod = (await import(pathToFileURL(CONTROLLER_MODULE).href)) as {
          startControllerServer?: unknown;
        };
        if (typeof mod.startControllerServer === "function")
          factory = mod.startControllerServer as StartControllerServer;
        else
          missing.push(
            "the controller app: src/app/http-server.ts does not export a startControllerServer function",
          );
      } catch (error) {
        missing.push(
          `the controller app: src/app/http-server.ts fails to load: ${(error as Error).message.split("\n")[0]}`,
        );
      }
    }
  }
  const manifest = ["action.yml", "action.yaml"].map((f) => join(actionDir, f)).find((p) => existsSync(p));
  if (!manifest) {
    missing.push(`the worker action: ${join(actionDir, "action.yml")} does not exist`);
  } else {
    let main = "dist/worker/index.js";
    try {
      const parsed = parseYaml((await import("node:fs")).readFileSync(manifest, "utf8")) as {
        runs?: { main?: string };
      };
      main = parsed?.runs?.main ?? main;
    } catch {
      // keep the default
    }
    if (!existsSync(join(actionDir, main))) {
      missing.push(
        `the worker bundle: ${join(actionDir, main)} does not exist${existsSync(join(PACKAGE_ROOT, "src", "worker", "run.ts")) ? " (build it with `npm run bundle`)" : " (src/worker/run.ts is not written yet)"}`,
      );
    }
  }
  return { missing, startController: factory };
}

// -----------------------------------------------------------------------------------------------------------
// Seeding

const WORKER_TEMPLATE = join(PACKAGE_ROOT, "templates", "workflows", "autopilot-worker.yml");

/**
 * The worker workflow a scenario repository gets unless it brings its own: the product's template
 * (templates/workflows/autopilot-worker.yml) with the agent-CLI install steps dropped (the demo agent needs
 * none, and the sandbox has no registry) and the job's time limit set; a built-in equivalent without it.
 */
export function workerWorkflowYaml(options: { jobTimeoutMinutes: number }): string {
  if (existsSync(WORKER_TEMPLATE)) {
    const workflow = parseYaml(readFileSync(WORKER_TEMPLATE, "utf8")) as {
      jobs?: Record<string, { steps?: { run?: string }[]; "timeout-minutes"?: number }>;
    };
    for (const job of Object.values(workflow.jobs ?? {})) {
      job["timeout-minutes"] = options.jobTimeoutMinutes;
      job.steps = (job.steps ?? []).filter(
        (step) => !/\bnpm\s+(install|i)\b[^\n]*\s-g\b|\bnpm\s+(install|i)\s+-g\b/.test(step.run ?? ""),
      );
    }
    return `# templates/workflows/autopilot-worker.yml, adapted by the sandbox: no agent CLI install, timeout ${options.jobTimeoutMinutes} min.\n${stringifyYaml(workflow, { lineWidth: 0 })}`;
  }
  return `name: Autopilot worker
run-name: "autopilot #\${{ inputs.issue }} attempt \${{ inputs.attempt }} [\${{ inputs.dispatch-id }}]"
on:
  workflow_dispatch:
    inputs:
      issue:
        description: Task issue number
        required: true
      attempt:
        description: Attempt number
        required: false
        default: "1"
      dispatch-id:
        description: Dispatch id chosen by the controller
        required: false
        default: ""
      tracking-issue:
        description: Tracking issue number
        required: false
        default: ""
      task-digest:
        description: Digest of the approved task text
        required: false
        default: ""
      config:
        description: JSON overrides of .github/autopilot.yml
        required: false
        default: ""
concurrency:
  group: autopilot-issue-\${{ inputs.issue }}
  cancel-in-progress: false
permissions:
  contents: write
  issues: write
  pull-requests: write
jobs:
  work:
    runs-on: ubuntu-latest
    timeout-minutes: ${options.jobTimeoutMinutes}
    steps:
      - id: app-token
        uses: actions/create-github-app-token@v1
        with:
          app-id: \${{ vars.AUTOPILOT_APP_ID }}
          private-key: \${{ secrets.AUTOPILOT_APP_PRIVATE_KEY }}
      - uses: actions/checkout@v4
        with:
          token: \${{ steps.app-token.outputs.token }}
          fetch-depth: 0
      - uses: autopilot-dev/autopilot@v1
        with:
          issue: \${{ inputs.issue }}
          attempt: \${{ inputs.attempt }}
          dispatch-id: \${{ inputs.dispatch-id }}
          tracking-issue: \${{ inputs.tracking-issue }}
          task-digest: \${{ inputs.task-digest }}
          config: \${{ inputs.config }}
          github-token: \${{ steps.app-token.outputs.token }}
          git-user-name: autopilot[bot]
`;
}

/** An issue carrying the tracking marker that a bot (Autopilot) opened; scenario people cannot. */
export function isTrackingIssue(issue: Pick<Issue, "body" | "user">): boolean {
  return (issue.body ?? "").includes(TRACKING_MARKER) && /\[bot\]$/.test(issue.user);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/** Replaces `{demo_agent}` in every string of a config mapping (e.g. a fallback agent's command). */
function substituteDemoAgent(value: unknown, agentCommand: string): unknown {
  if (typeof value === "string") return value.replaceAll("{demo_agent}", agentCommand);
  if (Array.isArray(value)) return value.map((v) => substituteDemoAgent(v, agentCommand));
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substituteDemoAgent(v, agentCommand)]),
    );
  return value;
}

/**
 * `.github/autopilot.yml` for a scenario: its mapping over the demo-agent defaults, or its text. In both,
 * `{demo_agent}` stands for the demo agent's command (`{demo_agent} --agent fallback` names a fallback).
 */
export function scenarioConfigText(scenario: Scenario, agentCommand: string): string {
  const config = scenario.repo.config;
  const text =
    typeof config === "string"
      ? config.replaceAll("{demo_agent}", agentCommand)
      : stringifyYaml(
          deepMerge(
            { agents: { primary: { preset: "custom", command: agentCommand } } },
            substituteDemoAgent(config as Record<string, unknown>, agentCommand) as Record<string, unknown>,
          ),
          { lineWidth: 0 },
        );
  const parsed = parseConfig(text);
  if (!parsed.ok)
    throw new ScenarioError(
      `Invalid scenario: repo.config is not a valid .github/autopilot.yml:\n${renderConfigError(parsed.error)}`,
    );
  return text;
}

function issueBody(issue: Scenario["issues"][number]): string {
  const lines = issue.dependsOn.map((n) => `Depends on #${n}`);
  return [issue.body.trim(), lines.join("\n")].filter(Boolean).join("\n\n");
}

// -----------------------------------------------------------------------------------------------------------
// Observation

/** The task-state label names a report reads (the config's). */
type Labels = TaskLabelNames;

const TERMINAL: ReadonlySet<ReportState> = new Set(["done", "blocked", "needs-human", "timeout", "failed"]);

export function reportState(issue: Issue, labels: Labels): ReportState {
  if (issue.state === "closed") return issue.stateReason === "not_planned" ? "failed" : "done";
  const has = (name: string) => issue.labels.some((l) => l.toLowerCase() === name.toLowerCase());
  if (has(labels.blocked)) return "blocked";
  if (has(labels.needsHuman)) return "needs-human";
  if (has(labels.timeout)) return "timeout";
  if (has(labels.failed)) return "failed";
  if (has(labels.review)) return "review";
  if (has(labels.inProgress)) return "in-progress";
  return "ready";
}

function stripMarkers(body: string): string {
  return body
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

class Observer {
  private readonly iterations = new Map<number, Map<string, number>>();
  constructor(
    private readonly store: SandboxStore,
    private readonly repo: string,
    private readonly labels: Labels,
    private readonly branchPrefix: string,
    private readonly humans: Set<string>,
  ) {}

  issue(number: number): Issue | undefined {
    return this.store.getIssue(this.repo, number);
  }

  state(number: number): ReportState {
    const issue = this.issue(number);
    return issue ? reportState(issue, this.labels) : "ready";
  }

  /** The task's pull request: by Autopilot's marker, its branch, or a closing keyword; the newest wins. */
  pullFor(number: number): (Issue & { pull: NonNullable<Issue["pull"]> }) | null {
    // A fork's PR is never a task's PR, whatever its branch or body says (scenarios open such PRs as attacks).
    const pulls = this.store.listPulls(this.repo).filter((p) => {
      if (p.pull.headRepo) return false;
      const body = p.body ?? "";
      return (
        body.includes(`<!-- autopilot:pr issue=${number} -->`) ||
        p.pull.head.ref === `${this.branchPrefix}issue-${number}` ||
        new RegExp(`\\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\\s+#${number}\\b`, "i").test(body)
      );
    });
    const open = pulls.filter((p) => p.state === "open" || p.pull.merged);
    return (open.at(-1) ?? pulls.at(-1) ?? null) as (Issue & { pull: NonNullable<Issue["pull"]> }) | null;
  }

  /** Which task a pull request belongs to. */
  issueOfPull(pull: Issue): number | null {
    const marker = /<!-- autopilot:pr issue=(\d+) -->/.exec(pull.body ?? "");
    if (marker) return Number(marker[1]);
    const branch = pull.pull ? /issue-(\d+)$/.exec(pull.pull.head.ref) : null;
    if (branch) return Number(branch[1]);
    const closes = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/i.exec(pull.body ?? "");
    return closes ? Number(closes[1]) : null;
  }

  /** The dashboard Autopilot opened (a person's issue carrying the marker is not it). */
  tracking(): Issue | null {
    return this.store.listIssues(this.repo).find((i) => !i.pull && isTrackingIssue(i)) ?? null;
  }

  /** Updates the iteration tally from the worker results in the progress comments. */
  scanWorkerResults(): void {
    for (const comment of this.store.listComments(this.repo)) {
      if (this.humans.has(comment.user.toLowerCase())) continue;
      const result = parseWorkerResult(comment.body);
      if (!result) continue;
      const byDispatch = this.iterations.get(result.issue) ?? new Map<string, number>();
      byDispatch.set(result.dispatchId, Math.max(byDispatch.get(result.dispatchId) ?? 0, result.iterations));
      this.iterations.set(result.issue, byDispatch);
    }
  }

  iterationsOf(number: number): number {
    return [...(this.iterations.get(number)?.values() ?? [])].reduce((a, b) => a + b, 0);
  }

  checksOf(sha: string): "success" | "failure" | "pending" {
    const runs = this.store.listCheckRuns(this.repo, sha);
    const latest = new Map<string, (typeof runs)[number]>();
    for (const run of runs) if (!latest.has(run.name)) latest.set(run.name, run);
    const list = [...latest.values()];
    if (
      list.some(
        (r) => r.status === "completed" && !["success", "neutral", "skipped"].includes(r.conclusion ?? ""),
      )
    )
      return "failure";
    if (list.length === 0 || list.some((r) => r.status !== "completed")) return "pending";
    return "success";
  }
}

// -----------------------------------------------------------------------------------------------------------
// The run

interface ArmedRule {
  rule: ScenarioRule;
  armedAt: number;
  /** When the condition held and the rule waits out its delay: the time it acts. */
  dueAt: number | null;
  /** PR head when armed (for `pushed`), by task issue. */
  heads: Map<number, string | null>;
  fired: boolean;
  lastValue: boolean;
}

/** Whether any rule (or follow-up rule) of a timeline has an action with this key. */
function timelineHas(rules: ScenarioRule[], key: keyof ScenarioAction): boolean {
  return rules.some((r) => r.do.some((a) => a[key] !== undefined) || timelineHas(r.then, key));
}

/** Runs a scenario file (or a parsed scenario) to the end. */
/** Cleanup steps ordered before this (webhooks, runs, controller) stop before `keep`; the git remote and the
 * sandbox (whose pages read both) stay. */
const KEEP_UNTIL_ORDER = 50;

export async function runScenario(
  scenarioOrFile: string | Scenario = DEFAULT_SCENARIO,
  options: RunScenarioOptions = {},
): Promise<ScenarioReport> {
  const scenario = typeof scenarioOrFile === "string" ? loadScenario(scenarioOrFile) : scenarioOrFile;
  killRunPlan(scenario.faults?.killRun); // a bad fault is a scenario error, reported before anything starts
  const actionDir = resolve(options.actionDir ?? PACKAGE_ROOT);
  const parts = await findMissingParts(actionDir, options.startController);
  if (parts.missing.length || !parts.startController) throw new MissingPartsError(parts.missing);
  const startController = parts.startController;

  const started = Date.now();
  let trackingNumber: number | null = null;
  const progress = (kind: ProgressEvent["kind"], issue: number | null, message: string) => {
    // The tracking issue is not a task: its lines read "dashboard: …".
    if (issue !== null && issue === trackingNumber) {
      options.onProgress?.({
        atMs: Date.now() - started,
        kind,
        issue: null,
        message: `dashboard: ${message}`,
      });
      return;
    }
    options.onProgress?.({ atMs: Date.now() - started, kind, issue, message });
  };

  // Everything started is stopped once, whatever happens, in an order that quiets things fastest: webhooks
  // off, runs killed, then the controller, the git remote and the sandbox, then temporary files. Each step
  // gets a few seconds; one that hangs is reported and left behind rather than holding up the rest.
  const cleanups: { name: string; order: number; fn: () => Promise<unknown> | unknown }[] = [];
  const onCleanup = (name: string, order: number, fn: () => Promise<unknown> | unknown) =>
    cleanups.push({ name, order, fn });
  let cleaned: Promise<void> | null = null;
  const stopped = new Set<(typeof cleanups)[number]>();
  // `before`: only the steps ordered before it (what `keep` stops while the sandbox stays up).
  const cleanup = (before = Number.POSITIVE_INFINITY) => {
    const run = async () => {
      for (const step of [...cleanups].sort((a, b) => a.order - b.order)) {
        if (step.order >= before || stopped.has(step)) continue;
        stopped.add(step);
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<"timeout">((r) => {
          timer = setTimeout(() => r("timeout"), CLEANUP_STEP_MS);
        });
        try {
          const outcome = await Promise.race([Promise.resolve().then(step.fn), limit]);
          if (outcome === "timeout")
            progress(
              "warning",
              null,
              `stopping ${step.name} took over ${CLEANUP_STEP_MS / 1000}s; moving on`,
            );
        } catch (error) {
          progress("warning", null, `stopping ${step.name} failed: ${(error as Error).message}`);
        } finally {
          clearTimeout(timer);
        }
      }
    };
    if (before !== Number.POSITIVE_INFINITY) return run();
    cleaned ??= run();
    return cleaned;
  };

  let interrupted = false;
  let actions: ActionsRunner | null = null;
  const tempDir = mkdtempSync(join(tmpdir(), "autopilot-scenario-"));
  // Traversable by the worker's agent user, which reads the demo agent's script under it.
  chmodSync(tempDir, 0o755);
  onCleanup("temporary files", 90, () => rmSync(tempDir, { recursive: true, force: true }));
  const onSignal = () => {
    if (interrupted) {
      actions?.killAllSync();
      rmSync(tempDir, { recursive: true, force: true });
      process.exit(130);
    }
    interrupted = true;
    progress("warning", null, "interrupted: stopping the sandbox, the runs and the controller…");
  };
  const handleSignals = options.handleSignals ?? true;
  if (handleSignals) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  options.signal?.addEventListener("abort", () => {
    interrupted = true;
  });

  const owner = scenario.repo.owner;
  const name = scenario.repo.name;
  const repoFull = `${owner}/${name}`;
  let report: ScenarioReport | null = null;
  let sandbox: Sandbox | null = null;
  let store: SandboxStore | null = null;
  let observer: Observer | null = null;
  const runIssues = new Map<number, number>();

  const humans = new Set(scenario.users.map((u) => u.login.toLowerCase()));
  const faultChecks: { name: string; ok: boolean; detail: string }[] = [];
  humans.add(owner.toLowerCase());

  try {
    // --- sandbox, git, repository -------------------------------------------------------------------------
    progress("setup", null, `scenario "${scenario.name}": starting the sandbox`);
    sandbox = await startSandbox({ webPort: options.webPort ?? 0 });
    options.onWebView?.(sandbox.web.url);
    onCleanup("webhook deliveries", 0, () => sandbox!.setWebhookTarget(null));
    onCleanup("the sandbox", 60, () => sandbox!.stop());
    store = sandbox.store;
    const git: SandboxGit = await attachGit(sandbox, { root: join(tempDir, "git") });
    onCleanup("the git remote", 50, () => git.stop());

    for (const user of scenario.users) {
      store.addUser(user.login, { permission: user.permission, ...(user.name ? { name: user.name } : {}) });
    }
    store.createRepo({ owner, name, defaultBranch: scenario.repo.defaultBranch });
    for (const user of scenario.users) store.setPermission(repoFull, user.login, user.permission);

    // The demo agent's script, outside the repository.
    const agentEntries: Record<number, DemoAgentEntry> = {};
    scenario.issues.forEach((issue, i) => {
      agentEntries[i + 1] = { ...(issue.agent ?? DemoAgentEntrySchema.parse({})), title: issue.title };
    });
    const scriptPath = writeDemoScript(join(tempDir, "agent"), agentEntries);
    const configText = scenarioConfigText(scenario, demoAgentCommand(scriptPath));
    const config = parseConfig(configText);
    if (!config.ok) throw new ScenarioError(renderConfigError(config.error));
    const labels = config.config.labels;
    const workflowFile = config.config.workerWorkflow;
    const files: Record<string, string> = {
      ...scenario.repo.files,
      ".github/autopilot.yml": configText,
    };
    const workflowPath = `.github/workflows/${workflowFile}`;
    files[workflowPath] ??= workerWorkflowYaml({
      jobTimeoutMinutes: Math.max(1, Math.ceil(scenario.limits.jobTimeoutSeconds / 60)),
    });
    const firstUser = scenario.users[0]?.login ?? owner;
    await git.seedRepo(owner, name, files, {
      message: "Initial commit",
      author: { name: firstUser, email: `${firstUser}@users.noreply.github.com` },
      pusher: firstUser,
    });
    progress("setup", null, `repository ${repoFull} seeded with ${Object.keys(files).length} files`);

    // --- issues -------------------------------------------------------------------------------------------
    for (const [i, issue] of scenario.issues.entries()) {
      const created = store.createIssue(repoFull, {
        title: issue.title,
        body: issueBody(issue),
        labels: issue.labels,
        author: issue.author ?? firstUser,
      });
      if (created.number !== i + 1)
        throw new Error(`issue "${issue.title}" got #${created.number}, expected #${i + 1}`);
    }
    for (const [i, issue] of scenario.issues.entries()) {
      const number = i + 1;
      for (const blocker of issue.blockedBy)
        store.addBlockedBy(repoFull, number, blocker, issue.author ?? firstUser);
      if (issue.parent !== undefined)
        store.addSubIssue(repoFull, issue.parent, number, issue.author ?? firstUser);
      for (const comment of issue.comments)
        store.createComment(repoFull, number, comment.body, comment.author);
    }
    progress("setup", null, `${scenario.issues.length} issues opened`);

    observer = new Observer(store, repoFull, labels, config.config.branchPrefix, humans);
    const obs = observer;

    // --- Actions ------------------------------------------------------------------------------------------
    const ci = scenarioCi(scenario);
    actions = startActions({
      url: sandbox.url,
      store,
      git,
      actionDir,
      ci: ci ? { [repoFull]: { command: ci.command, name: ci.name, timeoutMs: ci.timeoutMs } } : {},
      app: { id: sandbox.app.id, privateKey: sandbox.app.privateKey },
      vars: { AUTOPILOT_APP_ID: String(sandbox.app.id) },
      secrets: {
        AUTOPILOT_APP_PRIVATE_KEY: sandbox.app.privateKey,
        AUTOPILOT_PRIVATE_KEY: sandbox.app.privateKey,
      },
      jobTimeoutMs: scenario.limits.jobTimeoutSeconds * 1000,
      workDir: join(tempDir, "actions"),
      keepWorkspaces: options.keepWorkspaces ?? false,
      verbose: options.verbose ?? false,
      onEvent: (event) => reportActionsEvent(event),
    });
    const actionsRunner = actions;
    onCleanup("the Actions runs", 10, () => actionsRunner.stop());
    const runSecrets = [sandbox.app.privateKey];
    sandbox.web.setRunDetails((runId) => {
      const run = actionsRunner.getRun(runId);
      return run && { ...run, secrets: [...runSecrets, ...(run.token ? [run.token] : [])] };
    });
    await actions.syncWorkflows(repoFull);

    // Fault `killRun`: a worker run is lost mid-way (SIGKILL), `afterSeconds` into the run.
    const killPlan = killRunPlan(scenario.faults?.killRun);
    let kills = 0;
    function scheduleKill(runId: number, issue: number | null): void {
      if (!killPlan || kills >= killPlan.times) return;
      if (killPlan.issue !== undefined && killPlan.issue !== issue) return;
      kills += 1;
      const timer = setTimeout(() => {
        if (actionsRunner.killRun(runId))
          progress("human", issue, `fault: worker run ${runId} killed mid-way (lost runner)`);
      }, killPlan.afterSeconds * 1000);
      onCleanup("a pending fault", 0, () => clearTimeout(timer));
    }

    function issueOfRun(inputs: Record<string, string>): number | null {
      const n = Number(inputs.issue);
      return Number.isInteger(n) && n > 0 ? n : null;
    }
    function reportActionsEvent(event: ActionsEvent): void {
      switch (event.type) {
        case "run-started": {
          const issue = issueOfRun(event.run.inputs);
          if (issue) runIssues.set(issue, (runIssues.get(issue) ?? 0) + 1);
          scheduleKill(event.run.id, issue);
          progress(
            "run",
            issue,
            `worker run ${event.run.id} started${event.run.inputs.attempt ? ` (attempt ${event.run.inputs.attempt})` : ""}`,
          );
          break;
        }
        case "run-completed": {
          const issue = issueOfRun(event.run.inputs);
          const result = event.run.outputs.result;
          const why =
            event.run.outputs.reason || (event.run.conclusion !== "success" ? event.run.reason : null);
          progress(
            "run",
            issue,
            `worker run ${event.run.id} ${event.run.conclusion}${result ? `: ${result}` : ""}${why ? ` (${why})` : ""}`,
          );
          break;
        }
        case "annotation":
          if (event.level === "error")
            progress(
              "warning",
              issueOfRun(event.run.inputs),
              `worker error: ${event.message.split("\n")[0]}`,
            );
          break;
        case "log":
          progress("run", issueOfRun(event.run.inputs), `  | ${event.line}`);
          break;
        case "ci-completed": {
          const pull = event.pr ? store!.getIssue(repoFull, event.pr) : undefined;
          const issue = pull ? obs.issueOfPull(pull) : null;
          const line = event.tail
            .split("\n")
            .filter((l) => /not ok|fail|error/i.test(l))
            .at(0);
          progress(
            "ci",
            issue,
            `CI ${event.conclusion === "success" ? "passed" : "failed"} on ${event.sha.slice(0, 7)}${event.conclusion === "failure" && line ? ` — ${line.trim().slice(0, 100)}` : ""}`,
          );
          break;
        }
        case "ci-skipped":
          progress("warning", null, `CI not started for ${event.sha.slice(0, 7)}: ${event.reason}`);
          break;
        default:
          break;
      }
    }

    // --- progress from the store ------------------------------------------------------------------------
    let lastEventAt = Date.now();
    let trackingAnnounced = false;
    const recorder = new InvariantRecorder(store, repoFull, labels.ready);
    const expectRecorder = new ExpectationRecorder(repoFull, scenario);
    const unsubscribe = store.onEvent((event: StoreEvent) => {
      lastEventAt = Date.now();
      expectRecorder.onEvent(event);
      recorder.onEvent(event);
      describeStoreEvent(event);
    });
    onCleanup("progress", 1, () => unsubscribe());
    function describeStoreEvent(event: StoreEvent): void {
      if (event.name === "pull_request" && (event.action === "opened" || event.action === "closed")) {
        const issue = obs.issueOfPull(event.pull);
        if (event.action === "opened")
          progress("pr", issue, `PR #${event.pull.number} opened: ${event.pull.title}`);
        else if (event.pull.pull?.merged) progress("pr", issue, `PR #${event.pull.number} merged`);
        else progress("pr", issue, `PR #${event.pull.number} closed without merging`);
      } else if (event.name === "pull_request_review" && event.action === "submitted") {
        const issue = obs.issueOfPull(event.pull);
        const verb =
          event.review.state === "APPROVED"
            ? "approved"
            : event.review.state === "CHANGES_REQUESTED"
              ? "requested changes on"
              : "reviewed";
        progress("review", issue, `@${event.review.user} ${verb} PR #${event.pull.number}`);
      } else if (event.name === "issue_comment" && event.action === "created") {
        const body = event.comment.body;
        if (humans.has(event.comment.user.toLowerCase()) || parseWorkerResult(body)) return;
        const line =
          stripMarkers(body)
            .split("\n")
            .find((l) => l.trim()) ?? "";
        if (!line) return;
        progress(
          "comment",
          event.issue.pull ? obs.issueOfPull(event.issue) : event.issue.number,
          `@${event.comment.user}: ${line.trim().slice(0, 110)}`,
        );
      } else if (
        event.name === "issues" &&
        event.action === "opened" &&
        isTrackingIssue(event.issue) &&
        !trackingAnnounced
      ) {
        trackingAnnounced = true;
        trackingNumber = event.issue.number;
        progress("dashboard", null, `tracking issue #${event.issue.number} created (${event.issue.title})`);
      }
    }

    // --- the controller -----------------------------------------------------------------------------------
    progress("setup", null, "starting the controller app");
    // Fault runs that kill the controller or run several use controller processes (src/sandbox/scenario/faultkit.ts).
    const wantsFleet =
      timelineHas(scenario.timeline, "killController") ||
      (scenario.controllers !== undefined &&
        (scenario.controllers.process || scenario.controllers.instances > 1));
    let fleet: ControllerFleet | null = null;
    let controllerWebhooks: () => string[];
    const controllerOptions = {
      appId: sandbox.app.id,
      privateKey: sandbox.app.privateKey,
      webhookSecret: sandbox.app.webhookSecret,
      baseUrl: sandbox.url,
      port: 0,
      tickMs: scenario.limits.tickMs,
    };
    if (wantsFleet) {
      const processes = new ControllerFleet(controllerOptions, scenario.controllers?.instances ?? 1, (m) =>
        progress(m.startsWith("fault") ? "human" : "setup", null, m),
      );
      fleet = processes;
      onCleanup("the controller processes", 20, () => processes.stop());
      await processes.start();
      sandbox.setWebhookTarget(processes.webhookUrl);
      controllerWebhooks = () => processes.liveWebhookUrls();
      progress(
        "setup",
        null,
        `${processes.instances.length} controller process(es) running; sandbox at ${sandbox.url}`,
      );
    } else {
      const controller = await startController(controllerOptions);
      onCleanup("the controller", 20, () => controller.stop());
      sandbox.setWebhookTarget(controller.webhookUrl ?? controller.url);
      controllerWebhooks = () => [controller.webhookUrl ?? controller.url];
      progress("setup", null, `controller listening at ${controller.url}; sandbox at ${sandbox.url}`);
    }
    if (scenario.faults) sandbox.faults.set(scenario.faults);

    // --- the timeline -------------------------------------------------------------------------------------
    const armed: ArmedRule[] = [];
    const arm = (rules: ScenarioRule[], at: number) => {
      for (const rule of rules) {
        const heads = new Map<number, string | null>();
        if (rule.when.pr !== undefined)
          heads.set(rule.when.pr, obs.pullFor(rule.when.pr)?.pull.head.sha ?? null);
        armed.push({ rule, armedAt: at, dueAt: null, heads, fired: false, lastValue: false });
      }
    };
    arm(scenario.timeline, Date.now());

    const evaluate = (entry: ArmedRule): boolean => {
      const c: ScenarioCondition = entry.rule.when;
      const now = Date.now();
      if (c.afterSeconds !== undefined && now - entry.armedAt < c.afterSeconds * 1000) return false;
      if (c.issue !== undefined) {
        const issue = obs.issue(c.issue);
        if (!issue) return false;
        const has = (l: string) => issue.labels.some((x) => x.toLowerCase() === l.toLowerCase());
        if (c.labeled !== undefined && !has(c.labeled)) return false;
        if (c.unlabeled !== undefined && has(c.unlabeled)) return false;
        if (c.closed !== undefined && (issue.state === "closed") !== c.closed) return false;
        if (c.state !== undefined && obs.state(c.issue) !== c.state) return false;
        if (c.commented !== undefined) {
          const pattern = new RegExp(c.commented, "i");
          const found = store!
            .listComments(repoFull, c.issue)
            .some(
              (m) =>
                !humans.has(m.user.toLowerCase()) &&
                m.createdAt.getTime() >= entry.armedAt - 1 &&
                pattern.test(m.body),
            );
          if (!found) return false;
        }
      }
      if (c.pr !== undefined) {
        const pull = obs.pullFor(c.pr);
        if (c.opened !== undefined && (pull !== null && pull.state === "open") !== c.opened) return false;
        if (c.merged !== undefined && (pull?.pull.merged ?? false) !== c.merged) return false;
        if (c.checks !== undefined && (!pull || obs.checksOf(pull.pull.head.sha) !== c.checks)) return false;
        if (c.pushed !== undefined) {
          if (!pull) return false;
          const base = entry.heads.get(c.pr) ?? null;
          if (base === null) {
            entry.heads.set(c.pr, pull.pull.head.sha);
            return false;
          }
          if ((pull.pull.head.sha !== base) !== c.pushed) return false;
        }
      }
      if (
        c.running !== undefined &&
        actionsRunner.activeRuns().filter((r) => r.status === "in_progress").length < c.running
      ) {
        return false;
      }
      if (c.dashboard !== undefined) {
        const tracking = obs.tracking();
        if (!tracking || !new RegExp(c.dashboard, "i").test(tracking.body ?? "")) return false;
      }
      return true;
    };

    const octokits = new Map<string, ReturnType<typeof createOctokit>>();
    const asUser = (login: string) => {
      let client = octokits.get(login);
      if (!client) {
        client = createOctokit({
          auth: sandbox!.userToken(login),
          baseUrl: sandbox!.url,
          retry: false,
          throttle: false,
        });
        octokits.set(login, client);
      }
      return client;
    };

    /** Performs one action; false when its target does not exist yet (the rule waits). */
    const perform = async (rule: ScenarioRule, action: ScenarioRule["do"][number]): Promise<boolean> => {
      if (action.killController) {
        const k = action.killController;
        if (!fleet?.armKill(k.instance, k.afterWrites, k.restartAfterSeconds)) return false;
        progress(
          "human",
          null,
          `fault: controller ${k.instance} will be killed after its next ${k.afterWrites} write(s)`,
        );
        return true;
      }
      if (action.badSignatureWebhook) {
        const urls = controllerWebhooks();
        for (const url of urls) {
          const status = await sendBadSignatureWebhook(url, {
            owner,
            repo: name,
            installationId: store!.installationId,
            issue: obs.tracking()?.number ?? 1,
            appId: sandbox!.app.id,
          });
          faultChecks.push({
            name: "bad-signature webhook rejected",
            ok: status === 400,
            detail: `${url} answered ${status} (expected 400)`,
          });
          progress(
            "human",
            null,
            `fault: webhook with a bad signature sent; the controller answered ${status}`,
          );
        }
        return urls.length > 0;
      }
      if ("killRun" in action && action.killRun) {
        const run = actionsRunner
          .activeRuns()
          .find((r) => r.status === "in_progress" && Number(r.inputs.issue) === action.killRun!.issue);
        if (!run) return false;
        actionsRunner.killRun(run.id);
        progress("human", action.killRun.issue, `fault: worker run ${run.id} killed (lost runner)`);
        return true;
      }
      if ("faults" in action && action.faults) {
        sandbox!.faults.set(action.faults);
        progress("human", null, "faults changed");
        return true;
      }
      const a = action as ScenarioAction;
      if (!a.as) return true;
      const client = asUser(a.as);
      const target =
        a.on === "tracking"
          ? (obs.tracking()?.number ?? null)
          : (a.on ?? rule.when.issue ?? rule.when.pr ?? null);
      if (a.forkPr) {
        const forkRef = forkBranchRef(a.as, a.forkPr.branch);
        const base = scenario.repo.defaultBranch;
        const baseSha = await git.remote.resolveRef(owner, name, `refs/heads/${base}`);
        if (!baseSha) return false;
        if (!(await git.remote.resolveRef(owner, name, forkRef)))
          await git.remote.createRef(owner, name, forkRef, baseSha);
        await git.remote.seedRepo(owner, name, a.forkPr.files, {
          branch: forkRef,
          message: a.forkPr.title,
          author: { name: a.as, email: `${a.as}@users.noreply.example` },
        });
        const { data } = await client.rest.pulls.create({
          owner,
          repo: name,
          head: `${a.as}:${a.forkPr.branch}`,
          base,
          title: a.forkPr.title,
          body: a.forkPr.body,
        });
        progress("human", null, `@${a.as} opened PR #${data.number} from a fork, branch ${a.forkPr.branch}`);
        return true;
      }
      if (a.review) {
        const task = a.pr ?? rule.when.pr;
        const pull = task !== undefined ? obs.pullFor(task) : null;
        if (!pull) return false;
        const event =
          a.review === "approve" ? "APPROVE" : a.review === "request-changes" ? "REQUEST_CHANGES" : "COMMENT";
        await client.rest.pulls.createReview({
          owner,
          repo: name,
          pull_number: pull.number,
          event,
          ...(a.body ? { body: a.body } : {}),
        });
        return true;
      }
      if (target === null) return false;
      if (a.comment !== undefined) {
        await client.rest.issues.createComment({ owner, repo: name, issue_number: target, body: a.comment });
        progress("human", target, `@${a.as} commented: ${a.comment.split("\n")[0]!.slice(0, 100)}`);
      } else if (a.label !== undefined) {
        await client.rest.issues.addLabels({ owner, repo: name, issue_number: target, labels: [a.label] });
        progress("human", target, `@${a.as} added the label ${a.label}`);
      } else if (a.unlabel !== undefined) {
        await client.rest.issues.removeLabel({ owner, repo: name, issue_number: target, name: a.unlabel });
        progress("human", target, `@${a.as} removed the label ${a.unlabel}`);
      } else if (a.close) {
        await client.rest.issues.update({ owner, repo: name, issue_number: target, state: "closed" });
        progress("human", target, `@${a.as} closed the issue`);
      } else if (a.reopen) {
        await client.rest.issues.update({ owner, repo: name, issue_number: target, state: "open" });
        progress("human", target, `@${a.as} reopened the issue`);
      } else if (a.editBody !== undefined) {
        await client.rest.issues.update({ owner, repo: name, issue_number: target, body: a.editBody });
        progress(
          "human",
          target,
          `@${a.as} edited the issue's body: ${a.editBody.split("\n")[0]!.slice(0, 100)}`,
        );
      } else if (a.corruptState) {
        const { data } = await client.rest.issues.get({ owner, repo: name, issue_number: target });
        const body = data.body ?? "";
        const garbled = body.replace(
          /(<!-- autopilot:state v\d+\s*)([\s\S]*?)(-->)/,
          (_m, head: string, json: string, tail: string) =>
            `${head}${json.slice(0, Math.floor(json.length / 2))} "edited by hand": [1, 2,\n${tail}`,
        );
        await client.rest.issues.update({ owner, repo: name, issue_number: target, body: garbled });
        progress("human", target, `@${a.as} edited the issue: the state block is now unreadable`);
      } else if (a.delete) {
        store!.deleteIssue(repoFull, target, a.as);
        progress("human", target, `@${a.as} deleted the issue`);
      }
      return true;
    };

    const fire = async (entry: ArmedRule): Promise<void> => {
      // Targets must exist before anything is done, so a rule never half-fires.
      for (const action of entry.rule.do) {
        const missing =
          (action.on === "tracking" && !obs.tracking()) ||
          (action.review !== undefined && !obs.pullFor((action.pr ?? entry.rule.when.pr)!));
        if (missing) {
          entry.fired = false;
          return;
        }
      }
      entry.fired = true;
      for (const action of entry.rule.do) {
        try {
          await perform(entry.rule, action);
        } catch (error) {
          progress("warning", null, `timeline action failed: ${(error as Error).message.split("\n")[0]}`);
        }
      }
      arm(entry.rule.then, Date.now());
    };

    // The session start: a person with write access says so, once the tracking issue exists.
    const starter =
      scenario.start &&
      (scenario.start.as ??
        scenario.users.find((u) => ["admin", "maintain", "write"].includes(u.permission))?.login);
    let startDone = !scenario.start || !starter;
    const startAt = Date.now();

    // --- main loop ----------------------------------------------------------------------------------------
    const deadline = started + scenario.limits.maxDurationSeconds * 1000;
    const lastStates = new Map<number, ReportState>();
    let outcome: ScenarioReport["outcome"] = "timeout";
    for (;;) {
      if (interrupted) {
        outcome = "interrupted";
        break;
      }
      if (Date.now() > deadline) {
        outcome = "timeout";
        progress("warning", null, `time limit of ${scenario.limits.maxDurationSeconds}s reached`);
        break;
      }
      if (!startDone && scenario.start && starter) {
        const tracking = obs.tracking();
        const target = tracking?.number ?? (Date.now() - startAt > 8000 ? 1 : null);
        if (target !== null) {
          startDone = true;
          try {
            await asUser(starter).rest.issues.createComment({
              owner,
              repo: name,
              issue_number: target,
              body: scenario.start.command,
            });
            progress("human", target, `@${starter} commented: ${scenario.start.command}`);
          } catch (error) {
            progress("warning", null, `could not start the session: ${(error as Error).message}`);
          }
        }
      }
      for (const entry of [...armed]) {
        if (entry.dueAt !== null) {
          if (Date.now() >= entry.dueAt) {
            entry.dueAt = null;
            await fire(entry);
          }
          continue;
        }
        if (entry.fired && !entry.rule.repeat) continue;
        const value = evaluate(entry);
        if (value && (!entry.fired || (entry.rule.repeat && !entry.lastValue))) {
          if (entry.rule.delaySeconds > 0) {
            entry.dueAt = Date.now() + entry.rule.delaySeconds * 1000;
            entry.fired = true;
          } else {
            await fire(entry);
          }
        }
        entry.lastValue = value;
      }
      obs.scanWorkerResults();
      for (let n = 1; n <= scenario.issues.length; n++) {
        const state = obs.state(n);
        const before = lastStates.get(n);
        if (before !== state) {
          lastStates.set(n, state);
          if (before !== undefined) progress("state", n, `${before} → ${state}`);
        }
      }
      // Settled: every issue terminal, nothing running, no rule left that could still act, and quiet.
      const pendingTargets = new Set<number>();
      let pendingTimed = false;
      for (const entry of armed) {
        if (entry.fired && entry.dueAt === null) continue;
        // A rule whose condition held and that waits out its delay acts soon, whatever it watched.
        if (entry.dueAt !== null) pendingTimed = true;
        const c = entry.rule.when;
        if (c.issue !== undefined) pendingTargets.add(c.issue);
        if (c.pr !== undefined) pendingTargets.add(c.pr);
        if (
          c.afterSeconds !== undefined &&
          c.issue === undefined &&
          c.pr === undefined &&
          c.running === undefined
        )
          pendingTimed = true;
      }
      const allTerminal = scenario.issues.every((_, i) => {
        const n = i + 1;
        const state = obs.state(n);
        // A ready label from someone without write access is not work: such an issue is settled as it is.
        if (state === "ready" && !recorder.readyByWriter(obs.issue(n))) return !pendingTargets.has(n);
        return TERMINAL.has(state) && (state === "done" || !pendingTargets.has(n));
      });
      const quiet = Date.now() - lastEventAt >= scenario.limits.settleSeconds * 1000;
      if (startDone && allTerminal && !pendingTimed && actionsRunner.activeRuns().length === 0 && quiet) {
        outcome = "settled";
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }

    // --- report -------------------------------------------------------------------------------------------
    report = buildReport(scenario, sandbox, actionsRunner, obs, scriptPath, runIssues, outcome, started);
    const unmet = await checkExpectations({
      scenario,
      store,
      remote: git.remote,
      repo: { owner, name, defaultBranch: scenario.repo.defaultBranch },
      branchPrefix: config.config.branchPrefix,
      humans,
      recorder: expectRecorder,
      scriptPath,
      state: (n) => obs.state(n),
      pullFor: (n) => obs.pullFor(n),
      iterationsOf: (n) => obs.iterationsOf(n),
      runsOf: (n) => runIssues.get(n) ?? 0,
      tracking: () => obs.tracking(),
    });
    report.expectations.unmet = unmet;
    if (unmet.length) report.expectations.ok = false;
    if (faultChecks.length) report.faultChecks = faultChecks;
    report.invariants = await recorder.collect({
      git,
      actions: actionsRunner,
      tasks: scenario.issues.map((entry, i) => ({
        number: i + 1,
        state: obs.state(i + 1),
        dependsOn: [...entry.dependsOn, ...entry.blockedBy],
        issue: obs.issue(i + 1),
      })),
      labels: { ready: labels.ready, exclude: config.config.labels.exclude },
      maxParallel: config.config.maxParallel,
      branchPrefix: config.config.branchPrefix,
      tracking: obs.tracking(),
      pullFor: (n) => obs.pullFor(n),
      checksOf: (sha) => obs.checksOf(sha),
      autoMerge: config.config.merge.auto,
    });
    {
      const inv = report.invariants;
      progress(
        "done",
        null,
        `invariants: ${inv.lostCommits} lost commits, ${inv.doubleDispatches} double dispatches, ${inv.stuckTasks} stuck tasks (checked ${inv.checked.commits} task-branch commits, ${inv.checked.runs} worker runs, ${inv.checked.tasks} tasks)`,
      );
    }
    if (!invariantsHold(report.invariants))
      for (const d of report.invariants.details.filter((x) => x.kind !== "note"))
        progress("warning", d.issue, `invariant: ${d.message}`);
    progress("done", null, `${outcome} after ${(report.durationMs / 1000).toFixed(1)}s`);
    sandbox.web.setLive(false);
    await options.inspect?.({ sandbox, store, actions: actionsRunner, repo: repoFull });
    if (options.keep && !interrupted) {
      // The pages stay up showing the state the report describes: nothing acts on the sandbox any more.
      await cleanup(KEEP_UNTIL_ORDER);
      await options.keep(report);
    }
  } catch (error) {
    if (
      error instanceof ScenarioError ||
      error instanceof MissingPartsError ||
      error instanceof WebViewPortError
    )
      throw error;
    report = {
      ...(sandbox && actions && observer
        ? buildReport(scenario, sandbox, actions, observer, null, runIssues, "error", started)
        : emptyReport(scenario, started)),
      outcome: "error",
      error: (error as Error).stack ?? String(error),
    };
  } finally {
    // The handlers stay until everything is stopped: a second Ctrl-C during cleanup forces the exit.
    await cleanup();
    if (handleSignals) {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }
  if (options.report) {
    mkdirSync(dirname(resolve(options.report)), { recursive: true });
    writeFileSync(options.report, `${JSON.stringify(report, null, 2)}\n`);
  }
  return report;
}

const KillRunSchema = z.strictObject({
  /** Only runs of this task issue (default: any worker run). */
  issue: z.number().int().positive().optional(),
  /** How long after it started a run is killed. */
  afterSeconds: z.number().nonnegative().default(2),
  /** How many runs are killed. */
  times: z.number().int().positive().default(1),
});

/** `faults.killRun` (owned by the Actions stand-in): `true`, or `{ issue?, afterSeconds?, times? }`. */
export function killRunPlan(value: unknown): z.infer<typeof KillRunSchema> | null {
  if (value === undefined || value === null || value === false) return null;
  const parsed = KillRunSchema.safeParse(value === true ? {} : value);
  if (!parsed.success) {
    throw new ScenarioError(
      `Invalid scenario: faults.killRun: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ")} (expected true or { issue, afterSeconds, times })`,
    );
  }
  return parsed.data;
}

function emptyReport(scenario: Scenario, started: number): ScenarioReport {
  return {
    scenario: scenario.name,
    outcome: "error",
    issues: scenario.issues.map((issue, i) => ({
      number: i + 1,
      title: issue.title,
      state: "ready",
      labels: issue.labels,
      pr: null,
      iterations: 0,
      runs: 0,
      agentRuns: 0,
    })),
    requests: { total: 0, byEndpoint: {}, byTokenKind: {}, humans: 0 },
    durationMs: Date.now() - started,
    expectations: { ok: Object.keys(scenario.expect).length === 0, mismatches: [] },
    runs: { total: 0, byConclusion: {} },
    faults: {},
    validationFailures: [],
    dashboard: null,
  };
}

function buildReport(
  scenario: Scenario,
  sandbox: Sandbox,
  actions: ActionsRunner,
  obs: Observer,
  scriptPath: string | null,
  runIssues: Map<number, number>,
  outcome: ScenarioReport["outcome"],
  started: number,
): ScenarioReport {
  obs.scanWorkerResults();
  const issues: ReportIssue[] = scenario.issues.map((entry, i) => {
    const number = i + 1;
    const issue = obs.issue(number);
    const pull = obs.pullFor(number);
    return {
      number,
      title: issue?.title ?? entry.title,
      state: obs.state(number),
      labels: [...(issue?.labels ?? [])],
      pr: pull ? { number: pull.number, merged: pull.pull.merged } : null,
      iterations: obs.iterationsOf(number),
      runs: runIssues.get(number) ?? 0,
      agentRuns: scriptPath ? readDemoAgentState(scriptPath, number).runs : 0,
    };
  });
  const ours = (r: { tokenKind: string }) => r.tokenKind !== "user" && r.tokenKind !== "none";
  const summary = sandbox.requests.summary(ours);
  const humans = sandbox.requests.count((r) => r.tokenKind === "user");
  const mismatches = issueExpectations(scenario.expect)
    .flatMap(([n, e]) => (e.state ? [{ number: n, expected: e.state }] : []))
    .map(({ number, expected }) => ({
      number,
      expected,
      actual: issues[number - 1]?.state ?? ("ready" as ReportState),
    }))
    .filter((m) => m.expected !== m.actual);
  const byConclusion: Record<string, number> = {};
  for (const run of actions.listRuns()) {
    const key = run.conclusion ?? run.status;
    byConclusion[key] = (byConclusion[key] ?? 0) + 1;
  }
  const tracking = obs.tracking();
  return {
    scenario: scenario.name,
    outcome,
    issues,
    requests: {
      total: summary.total,
      byEndpoint: summary.byEndpoint,
      byTokenKind: summary.byTokenKind,
      humans,
    },
    durationMs: Date.now() - started,
    expectations: { ok: mismatches.length === 0, mismatches },
    runs: { total: actions.listRuns().length, byConclusion },
    faults: { ...sandbox.faults.stats },
    validationFailures: sandbox.validationFailures.map((f) => ({
      method: f.method,
      path: f.path,
      message: f.message,
    })),
    dashboard: tracking ? stripMarkers(tracking.body ?? "") : null,
  };
}

/** Whether a report counts as a success: settled and every expectation met. */
export function reportPassed(report: ScenarioReport): boolean {
  return (
    report.outcome === "settled" &&
    report.expectations.ok &&
    (report.invariants === undefined || invariantsHold(report.invariants)) &&
    (report.faultChecks ?? []).every((c) => c.ok)
  );
}

export { REPORT_STATES };
