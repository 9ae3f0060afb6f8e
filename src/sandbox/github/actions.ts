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
 * Runs move queued → in_progress → completed (success, failure, cancelled, timed_out); concurrency groups
 * keep at most one running and one pending run per group, a newer pending run cancelling the older one, and
 * `cancel-in-progress` cancelling the running one. Cancelling sends SIGINT to the step's process group, then
 * SIGTERM and SIGKILL after grace periods; {@link ActionsRunner.killRun} SIGKILLs it at once, as a lost runner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { type ExprContext, type ExprValue, evaluateCondition, interpolateString } from "./expressions.js";
import { fullRef } from "./git-ref-names.js";
import type { SandboxGit } from "./sandbox-git.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { gitEnv, killTree, run as runProcess } from "./proc.js";
import { claimAgentUser } from "./agent-user-slots.js";
import { Shapes } from "./shapes.js";
import type { Repo, SandboxStore, StoreEvent, WorkflowRun, WorkflowRunRequest } from "./store.js";

/** The `gh api` stand-in put on the runs' PATH. */
const GH_SHIM = fileURLToPath(new URL("./gh-shim.mjs", import.meta.url));

export type RunConclusion = "success" | "failure" | "cancelled" | "timed_out" | "skipped";

export interface CiConfig {
  /** Shell command run in a clone of the PR head. */
  command: string;
  /** Check run name (default `ci`). */
  name?: string;
  /** Wall-clock limit (default 5 minutes). */
  timeoutMs?: number;
}

export interface ActionsOptions {
  /** The sandbox's REST root (`GITHUB_API_URL`); GraphQL is `${url}/graphql`. */
  url: string;
  store: SandboxStore;
  git: SandboxGit;
  /** Directory of the action that `uses: ./` and {@link actionRefs} resolve to (default: this repository). */
  actionDir?: string;
  /**
   * Which `uses:` values run the action in {@link actionDir}: `./` always does; by default also any
   * `<owner>/autopilot@<ref>` (and `…/autopilot/<path>@<ref>`).
   */
  actionRefs?: (uses: string) => boolean;
  /** CI command per repository (`owner/name`), run on every new PR head. */
  ci?: Record<string, CiConfig>;
  /** Extra secrets (`secrets.NAME`) besides GITHUB_TOKEN. */
  secrets?: Record<string, string>;
  /** The GitHub App whose credentials actions/create-github-app-token accepts. */
  app?: { id: number; privateKey: string };
  /** Configuration variables (`vars.NAME`). */
  vars?: Record<string, string>;
  /**
   * GitHub does not start workflows for events caused by a run's GITHUB_TOKEN (pushes and PRs by
   * `github-actions[bot]`); neither does the stand-in's CI unless this is true.
   */
  githubTokenTriggersCi?: boolean;
  /** Wall-clock limit of a job when the workflow sets no `timeout-minutes` (default 30 minutes). */
  jobTimeoutMs?: number;
  /** SIGINT → SIGTERM → SIGKILL spacing on cancellation (default 2,500 ms). */
  cancelGraceMs?: number;
  /** The `node` used for node actions (default: this process's). */
  nodePath?: string;
  /** Parent directory for workspaces (default: a fresh temp dir, removed on stop). */
  workDir?: string;
  /** Keep run directories after completion (for debugging). */
  keepWorkspaces?: boolean;
  /** Progress events (run and CI lifecycle, step output lines when `verbose`). */
  onEvent?: (event: ActionsEvent) => void;
  /** Also report every output line of steps through onEvent. */
  verbose?: boolean;
  /** Put a `gh` on the runs' PATH (hosted runners have the GitHub CLI; ours does `gh api`). Default true. */
  ghCli?: boolean;
}

export type ActionsEvent =
  | { type: "run-queued"; run: RunRecord }
  | { type: "run-started"; run: RunRecord }
  | { type: "run-completed"; run: RunRecord }
  | { type: "step"; run: RunRecord; step: string }
  | { type: "log"; run: RunRecord; line: string }
  | { type: "annotation"; run: RunRecord; level: "error" | "warning" | "notice"; message: string }
  | { type: "ci-started"; repo: string; sha: string; pr: number | null }
  | { type: "ci-skipped"; repo: string; sha: string; pr: number | null; reason: string }
  | {
      type: "ci-completed";
      repo: string;
      sha: string;
      pr: number | null;
      conclusion: "success" | "failure";
      tail: string;
    };

export interface StepRecord {
  name: string;
  id: string | null;
  status: "pending" | "in_progress" | "completed" | "skipped";
  conclusion: RunConclusion | null;
  exitCode: number | null;
  outputs: Record<string, string>;
}

/** The stand-in's view of one run (the store holds the GitHub-visible record). */
export interface RunRecord {
  id: number;
  repo: string;
  workflowPath: string;
  workflowName: string;
  displayTitle: string;
  inputs: Record<string, string>;
  status: "queued" | "pending" | "in_progress" | "completed";
  conclusion: RunConclusion | null;
  concurrencyGroup: string | null;
  /** Outputs of every step (later steps win), then the job's declared outputs. */
  outputs: Record<string, string>;
  steps: StepRecord[];
  /** Concatenated step summaries (GITHUB_STEP_SUMMARY). */
  summary: string;
  /** The last lines of output (capped). */
  log: string[];
  annotations: { level: "error" | "warning" | "notice"; message: string }[];
  /** Why it ended the way it did, when not a plain success. */
  reason: string | null;
  token: string | null;
  workspace: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

interface RunHandle {
  /** The worker's agent user for this run's jobs (AUTOPILOT_AGENT_USER). */
  agentUser?: string;
  record: RunRecord;
  request: WorkflowRunRequest;
  cancelInProgress: boolean;
  cancelRequested: boolean;
  killed: boolean;
  timedOut: boolean;
  process: ChildProcess | null;
  dir: string | null;
  done: Promise<RunRecord>;
  resolve: (record: RunRecord) => void;
  started: boolean;
  timers: NodeJS.Timeout[];
}

interface GroupState {
  running: RunHandle | null;
  pending: RunHandle | null;
}

const LOG_LINES = 400;

interface WorkflowFile {
  name?: string;
  "run-name"?: string;
  on?: unknown;
  env?: Record<string, unknown>;
  concurrency?: string | { group?: string; "cancel-in-progress"?: boolean | string };
  jobs?: Record<string, JobFile>;
}

interface JobFile {
  name?: string;
  "runs-on"?: unknown;
  if?: unknown;
  env?: Record<string, unknown>;
  steps?: StepFile[];
  outputs?: Record<string, string>;
  "timeout-minutes"?: number | string;
  concurrency?: WorkflowFile["concurrency"];
  defaults?: { run?: { shell?: string; "working-directory"?: string } };
}

interface StepFile {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  if?: unknown;
  shell?: string;
  "working-directory"?: string;
  "continue-on-error"?: boolean | string;
  "timeout-minutes"?: number | string;
}

interface ActionFile {
  name?: string;
  inputs?: Record<string, { default?: unknown; required?: boolean }>;
  runs?: { using?: string; main?: string; pre?: string; post?: string; "post-if"?: string };
}

/** Parses `GITHUB_OUTPUT`/`GITHUB_ENV` file contents: `k=v` lines and `k<<DELIM` … `DELIM` blocks. */
export function parseKeyValueFile(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    const eq = line.indexOf("=");
    if (heredoc && (eq < 0 || eq > line.indexOf("<<"))) {
      const key = heredoc[1]!.trim();
      const delimiter = heredoc[2]!;
      const value: string[] = [];
      i++;
      while (i < lines.length && lines[i] !== delimiter) value.push(lines[i++]!);
      if (i >= lines.length) throw new Error(`Matching delimiter not found '${delimiter}'`);
      result[key] = value.join("\n");
    } else if (eq > 0) {
      result[line.slice(0, eq).trim()] = line.slice(eq + 1);
    } else {
      throw new Error(`Invalid format '${line}'`);
    }
  }
  return result;
}

function defaultActionRefs(uses: string): boolean {
  return /^[\w.-]+\/autopilot(\/[\w./-]+)?@[\w./-]+$/i.test(uses);
}

function minutes(value: unknown): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n * 60_000 : null;
}

function truthyFlag(value: unknown): boolean {
  return value === true || (typeof value === "string" && value.toLowerCase() === "true");
}

/** The `on:` triggers of a workflow, normalized to an object. */
function triggers(on: unknown): Record<string, unknown> {
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((e) => [String(e), null]));
  if (on && typeof on === "object") return on as Record<string, unknown>;
  return {};
}

export class ActionsRunner {
  private readonly store: SandboxStore;
  private readonly options: ActionsOptions;
  private readonly actionDir: string;
  private readonly workDir: string;
  private readonly ownsWorkDir: boolean;
  private readonly handles = new Map<number, RunHandle>();
  private readonly groups = new Map<string, GroupState>();
  private readonly ciSeen = new Set<string>();
  private readonly ciProcesses = new Set<ChildProcess>();
  private readonly ciRuns = new Set<Promise<void>>();
  private readonly unsubscribe: (() => void)[] = [];
  private ci: Record<string, CiConfig>;
  private stopped = false;

  constructor(options: ActionsOptions) {
    this.options = options;
    this.store = options.store;
    this.actionDir = resolve(options.actionDir ?? PACKAGE_ROOT);
    this.ownsWorkDir = !options.workDir;
    this.workDir = options.workDir ?? mkdtempSync(join(tmpdir(), "autopilot-actions-"));
    mkdirSync(this.workDir, { recursive: true });
    this.ci = { ...(options.ci ?? {}) };
  }

  /** Subscribes to the store: dispatches, cancellations, and the events that sync workflows and start CI. */
  start(): this {
    this.unsubscribe.push(
      this.store.onWorkflowDispatch((request) => this.enqueue(request)),
      this.store.onWorkflowRunCancel(({ run }) => this.cancelRun(run.id)),
      this.store.onEvent((event) => this.onStoreEvent(event)),
    );
    return this;
  }

  /** Sets (or clears) the CI command of a repository. */
  setCi(repo: string, config: CiConfig | null): void {
    if (config) this.ci[repo.toLowerCase()] = config;
    else delete this.ci[repo.toLowerCase()];
  }

  private ciFor(repo: string): CiConfig | undefined {
    return this.ci[repo.toLowerCase()] ?? this.ci[repo];
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
    for (const entry of entries ?? []) {
      if (entry.type !== "file" || !/\.ya?ml$/.test(entry.name)) continue;
      let name: string | undefined;
      try {
        const text = (await this.store.readFile(record.fullName, entry.path, record.defaultBranch))?.toString(
          "utf8",
        );
        const parsed = text ? (parseYaml(text) as WorkflowFile | null) : null;
        if (parsed && typeof parsed.name === "string") name = parsed.name;
      } catch {
        // GitHub registers broken workflow files too (their runs fail at startup)
      }
      this.store.addWorkflow(record.fullName, { path: entry.path, ...(name ? { name } : {}) });
    }
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
    const byGithubToken = event.sender === "github-actions[bot]" && !this.options.githubTokenTriggersCi;
    if (event.name === "pull_request" && ["opened", "synchronize", "reopened"].includes(event.action)) {
      const pull = event.pull;
      if (pull.state === "open" && pull.pull) {
        this.startCi(event.repo, pull.pull.head.sha, pull.pull.head.ref, pull.number, byGithubToken);
      }
    }
    if (event.name === "push" && !event.push.deleted && event.push.ref.startsWith("refs/heads/")) {
      // Pushes to branches with open PRs: the synchronize above covers PRs whose head moved; this covers a
      // PR whose head the store already knew (e.g. a PR opened on a commit pushed earlier).
      const branch = event.push.ref.slice("refs/heads/".length);
      for (const pull of this.store.listPulls(event.repo.fullName)) {
        if (pull.state === "open" && pull.pull.head.ref === branch && !pull.pull.headRepo) {
          this.startCi(event.repo, event.push.after, branch, pull.number, byGithubToken);
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // CI on pull request heads

  private startCi(repo: Repo, sha: string, branch: string, pr: number | null, byGithubToken: boolean): void {
    const config = this.ciFor(repo.fullName);
    if (!config) return;
    const key = `${repo.fullName}@${sha}`;
    if (this.ciSeen.has(key)) return;
    if (byGithubToken) {
      this.options.onEvent?.({
        type: "ci-skipped",
        repo: repo.fullName,
        sha,
        pr,
        reason:
          "the event was caused by a workflow's GITHUB_TOKEN, which starts no workflow runs (push with an App installation token)",
      });
      return;
    }
    this.ciSeen.add(key);
    const name = config.name ?? "ci";
    // The check run exists before anyone can look at the new head (GitHub queues it at once too).
    const check = this.store.createCheckRun(repo.fullName, {
      name,
      headSha: sha,
      appSlug: "github-actions",
      status: "queued",
      actor: "github-actions[bot]",
    });
    const job = this.runCi(repo, sha, branch, pr, config, check.id).finally(() => this.ciRuns.delete(job));
    this.ciRuns.add(job);
  }

  private async runCi(
    repo: Repo,
    sha: string,
    branch: string,
    pr: number | null,
    config: CiConfig,
    checkId: number,
  ): Promise<void> {
    const emit = this.options.onEvent ?? (() => {});
    const dir = mkdtempSync(join(this.workDir, "ci-"));
    try {
      this.store.updateCheckRun(repo.fullName, checkId, { status: "in_progress", startedAt: new Date() });
      emit({ type: "ci-started", repo: repo.fullName, sha, pr });
      const source = this.options.git.remote.repoPath(repo.owner, repo.name);
      const clone = await runProcess("git", ["clone", "--quiet", "--no-checkout", source, dir], {
        env: gitEnv(),
      });
      if (clone.code !== 0) throw new Error(`clone failed: ${clone.stderr}`);
      const checkout = await runProcess("git", ["checkout", "--quiet", "--detach", sha], {
        cwd: dir,
        env: gitEnv(),
      });
      if (checkout.code !== 0) throw new Error(`checkout failed: ${checkout.stderr}`);
      const result = await this.spawnTracked(
        "bash",
        ["--noprofile", "--norc", "-eo", "pipefail", "-c", config.command],
        {
          cwd: dir,
          env: {
            ...this.baseEnv(join(dir, ".home")),
            CI: "true",
            GITHUB_ACTIONS: "true",
            GITHUB_SHA: sha,
            GITHUB_REF: fullRef(branch),
            GITHUB_REPOSITORY: repo.fullName,
          },
          timeoutMs: config.timeoutMs ?? 5 * 60_000,
        },
      );
      if (this.stopped) return;
      const passed = result.code === 0 && !result.timedOut;
      const tail = result.output.split("\n").slice(-60).join("\n").trim();
      const title = passed
        ? `${config.command} passed`
        : result.timedOut
          ? `${config.command} timed out`
          : `${config.command} failed (exit ${result.code ?? result.signal})`;
      this.store.updateCheckRun(repo.fullName, checkId, {
        conclusion: passed ? "success" : result.timedOut ? "timed_out" : "failure",
        output: {
          title,
          summary: `\`${config.command}\` ${passed ? "passed" : "failed"} on ${sha.slice(0, 7)}.\n\n\`\`\`\n${tail.slice(-6000)}\n\`\`\``,
          text: result.output.slice(-60_000),
        },
      });
      emit({
        type: "ci-completed",
        repo: repo.fullName,
        sha,
        pr,
        conclusion: passed ? "success" : "failure",
        tail,
      });
    } catch (error) {
      if (this.stopped) return;
      this.store.updateCheckRun(repo.fullName, checkId, {
        conclusion: "failure",
        output: { title: "CI could not run", summary: (error as Error).message },
      });
      emit({
        type: "ci-completed",
        repo: repo.fullName,
        sha,
        pr,
        conclusion: "failure",
        tail: (error as Error).message,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Spawns a process in its own group, collecting combined output; kills the group on timeout or stop. */
  private spawnTracked(
    command: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string; timedOut: boolean }> {
    return new Promise((resolvePromise) => {
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      this.ciProcesses.add(child);
      let output = "";
      const append = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (output.length > 200_000) output = output.slice(-100_000);
      };
      child.stdout?.on("data", append);
      child.stderr?.on("data", append);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child, "SIGKILL");
      }, options.timeoutMs);
      child.on("error", (error) => {
        output += `\n${error.message}`;
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.ciProcesses.delete(child);
        resolvePromise({ code, signal, output, timedOut });
      });
    });
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
      if (open.length === 0 && this.ciRuns.size === 0) return;
      await Promise.race([...open.map((h) => h.done), ...this.ciRuns]);
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

  private async loadWorkflow(handle: RunHandle): Promise<WorkflowFile> {
    const { repo, workflow, ref } = handle.request;
    const text = await this.store.readFile(repo.fullName, workflow.path, ref);
    if (!text) throw new Error(`${workflow.path} not found at ${ref}`);
    const parsed = parseYaml(text.toString("utf8")) as WorkflowFile | null;
    if (!parsed || typeof parsed !== "object" || !parsed.jobs)
      throw new Error(`${workflow.path} has no jobs`);
    return parsed;
  }

  private baseContext(handle: RunHandle, workflow: WorkflowFile, token: string | null): ExprContext {
    const { repo, run, ref, inputs } = handle.request;
    const declared =
      (
        triggers(workflow.on).workflow_dispatch as {
          inputs?: Record<string, { default?: unknown; type?: string }>;
        } | null
      )?.inputs ?? {};
    const typedInputs: Record<string, ExprValue> = {};
    const stringInputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(declared)) {
      const raw = inputs[name] ?? (spec?.default !== undefined ? String(spec.default) : undefined);
      if (raw === undefined) continue;
      stringInputs[name] = raw;
      typedInputs[name] =
        spec?.type === "boolean" ? raw === "true" : spec?.type === "number" ? Number(raw) : raw;
    }
    for (const [name, value] of Object.entries(inputs)) {
      if (!(name in stringInputs)) {
        stringInputs[name] = value;
        typedInputs[name] = value;
      }
    }
    const refName = ref.replace(/^refs\/(heads|tags)\//, "");
    const github: Record<string, ExprValue> = {
      token: token ?? "",
      event_name: run.event,
      event: { inputs: stringInputs, ref: fullRef(ref) },
      repository: repo.fullName,
      repository_owner: repo.owner,
      repository_id: String(repo.id),
      ref: fullRef(ref),
      ref_name: refName,
      ref_type: ref.startsWith("refs/tags/") ? "tag" : "branch",
      sha: run.headSha,
      run_id: String(run.id),
      run_number: String(run.runNumber),
      run_attempt: String(run.runAttempt),
      actor: run.actor,
      triggering_actor: run.triggeringActor,
      workflow: run.name,
      workflow_ref: `${repo.fullName}/${handle.request.workflow.path}@${fullRef(ref)}`,
      server_url: this.serverUrl(),
      api_url: this.options.url,
      graphql_url: `${this.options.url}/graphql`,
    };
    return {
      contexts: {
        github,
        inputs: typedInputs,
        secrets: { GITHUB_TOKEN: token ?? "", ...(this.options.secrets ?? {}) },
        vars: { ...(this.options.vars ?? {}) },
        env: {},
        steps: {},
        job: {},
        runner: { os: "Linux", arch: "X64", name: "sandbox-runner", temp: "", environment: "github-hosted" },
        matrix: {},
        needs: {},
      },
      status: "success",
    };
  }

  /** `GITHUB_SERVER_URL`: where `<server>/<owner>/<repo>.git` is a working clone URL (the git remote). */
  private serverUrl(): string {
    return `${this.options.url.replace(/\/+$/, "")}/git`;
  }

  /** Reads the workflow, names the run, applies concurrency, and starts it when its group allows. */
  private async prepare(handle: RunHandle): Promise<void> {
    const workflow = await this.loadWorkflow(handle);
    const context = this.baseContext(handle, workflow, null);
    const { repo, run } = handle.request;
    if (workflow["run-name"]) {
      const title = interpolateString(workflow["run-name"], context).trim();
      if (title) {
        handle.record.displayTitle = title;
        this.store.updateWorkflowRun(repo.fullName, run.id, { displayTitle: title });
      }
    }
    const concurrency = workflow.concurrency ?? Object.values(workflow.jobs ?? {})[0]?.concurrency;
    let group: string | null = null;
    if (concurrency) {
      group =
        typeof concurrency === "string"
          ? interpolateString(concurrency, context)
          : interpolateString(concurrency.group ?? "", context);
      handle.cancelInProgress =
        typeof concurrency === "object" &&
        truthyFlag(interpolateString(concurrency["cancel-in-progress"] ?? false, context));
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

  private log(handle: RunHandle, line: string): void {
    const log = handle.record.log;
    log.push(line);
    if (log.length > LOG_LINES) log.splice(0, log.length - LOG_LINES);
    const annotation = /^::(error|warning|notice)(?:\s[^:]*)?::(.*)$/.exec(line);
    if (annotation) {
      const level = annotation[1] as "error" | "warning" | "notice";
      const message = annotation[2]!.replace(/%0A/g, "\n").replace(/%0D/g, "\r").replace(/%25/g, "%");
      handle.record.annotations.push({ level, message });
      this.options.onEvent?.({ type: "annotation", run: handle.record, level, message });
    }
    if (this.options.verbose) this.options.onEvent?.({ type: "log", run: handle.record, line });
  }

  private async launch(handle: RunHandle, workflow: WorkflowFile): Promise<void> {
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
    // One agent user per running job on this machine (see agent-user-slots.ts).
    const agentUser = claimAgentUser();
    handle.agentUser = agentUser.name;
    try {
      for (const [jobId, job] of Object.entries(workflow.jobs ?? {})) {
        const result = await this.runJob(handle, workflow, jobId, job, token, dir);
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
    if (handle.killed) {
      conclusion = "failure";
      reason = "The runner has received a shutdown signal. The operation was canceled.";
    } else if (handle.cancelRequested) {
      conclusion = "cancelled";
      reason = reason ?? "The run was canceled.";
    }
    this.finish(handle, conclusion, reason);
  }

  private async runJob(
    handle: RunHandle,
    workflow: WorkflowFile,
    jobId: string,
    job: JobFile,
    token: string,
    dir: string,
  ): Promise<{ conclusion: RunConclusion; reason: string | null }> {
    const { repo, run } = handle.request;
    const context = this.baseContext(handle, workflow, token);
    const jobName = job.name ? interpolateString(job.name, context) : jobId;
    if (job.if !== undefined && !evaluateCondition(job.if, context))
      return { conclusion: "skipped", reason: null };
    const storeJob = this.store.addWorkflowJob(repo.fullName, run.id, {
      name: jobName,
      status: "in_progress",
    });

    const workspace = join(dir, "work", repo.name, repo.name);
    const runnerTemp = join(dir, "temp");
    const home = join(dir, "home");
    const toolCache = join(dir, "tool-cache");
    for (const d of [workspace, runnerTemp, home, toolCache]) mkdirSync(d, { recursive: true });
    handle.record.workspace = workspace;
    (context.contexts.runner as Record<string, ExprValue>).temp = runnerTemp;
    (context.contexts.github as Record<string, ExprValue>).workspace = workspace;
    (context.contexts.github as Record<string, ExprValue>).job = jobId;

    const eventPath = join(dir, "event.json");
    writeFileSync(eventPath, JSON.stringify(this.eventPayload(handle), null, 2));

    const jobEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(workflow.env ?? {})) jobEnv[k] = interpolateString(v, context);
    context.contexts.env = { ...jobEnv };
    for (const [k, v] of Object.entries(job.env ?? {})) jobEnv[k] = interpolateString(v, context);
    context.contexts.env = { ...jobEnv };

    const base = this.baseEnv(home);
    if (this.options.ghCli ?? true) {
      const bin = join(dir, "bin");
      mkdirSync(bin, { recursive: true });
      const node = this.options.nodePath ?? process.execPath;
      writeFileSync(join(bin, "gh"), `#!/bin/sh\nexec '${node}' '${GH_SHIM}' "$@"\n`, { mode: 0o755 });
      base.PATH = `${bin}:${base.PATH}`;
    }
    const githubEnv: NodeJS.ProcessEnv = {
      ...base,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: workspace,
      GITHUB_REPOSITORY: repo.fullName,
      GITHUB_REPOSITORY_OWNER: repo.owner,
      GITHUB_REPOSITORY_ID: String(repo.id),
      GITHUB_EVENT_NAME: run.event,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_SHA: run.headSha,
      GITHUB_REF: fullRef(handle.request.ref),
      GITHUB_REF_NAME: handle.request.ref.replace(/^refs\/(heads|tags)\//, ""),
      GITHUB_REF_TYPE: handle.request.ref.startsWith("refs/tags/") ? "tag" : "branch",
      GITHUB_RUN_ID: String(run.id),
      GITHUB_RUN_NUMBER: String(run.runNumber),
      GITHUB_RUN_ATTEMPT: String(run.runAttempt),
      GITHUB_ACTOR: run.actor,
      GITHUB_TRIGGERING_ACTOR: run.triggeringActor,
      GITHUB_WORKFLOW: run.name,
      GITHUB_WORKFLOW_REF: `${repo.fullName}/${handle.request.workflow.path}@${fullRef(handle.request.ref)}`,
      GITHUB_JOB: jobId,
      GITHUB_SERVER_URL: this.serverUrl(),
      GITHUB_API_URL: this.options.url,
      GITHUB_GRAPHQL_URL: `${this.options.url}/graphql`,
      GITHUB_RETENTION_DAYS: "90",
      RUNNER_OS: "Linux",
      RUNNER_ARCH: "X64",
      RUNNER_NAME: "sandbox-runner",
      RUNNER_ENVIRONMENT: "github-hosted",
      RUNNER_TEMP: runnerTemp,
      RUNNER_TOOL_CACHE: toolCache,
      ...(handle.agentUser ? { AUTOPILOT_AGENT_USER: handle.agentUser } : {}),
      RUNNER_WORKSPACE: join(dir, "work", repo.name),
    };

    const jobTimeout = minutes(job["timeout-minutes"]) ?? this.options.jobTimeoutMs ?? 30 * 60_000;
    const jobTimer = setTimeout(() => {
      handle.timedOut = true;
      this.log(
        handle,
        `##[error]The job running on runner sandbox-runner has exceeded the maximum execution time of ${Math.round(jobTimeout / 60_000)} minutes.`,
      );
      this.signalRun(handle, false);
    }, jobTimeout);
    handle.timers.push(jobTimer);

    let status: "success" | "failure" | "cancelled" = "success";
    let reason: string | null = null;
    const extraPath: string[] = [];
    const posts: {
      name: string;
      main: string;
      state: Record<string, string>;
      env: NodeJS.ProcessEnv;
      condition: string;
    }[] = [];
    const steps = job.steps ?? [];
    handle.record.steps = steps.map((s, i) => ({
      name: s.name ?? (s.uses ? `Run ${s.uses}` : s.run ? `Run ${s.run.split("\n")[0]}` : `Step ${i + 1}`),
      id: s.id ?? null,
      status: "pending",
      conclusion: null,
      exitCode: null,
      outputs: {},
    }));
    const stepsContext: Record<string, ExprValue> = {};
    context.contexts.steps = stepsContext;

    // The brief of a runner here: the workspace is a clone of the repository at the run's commit. A workflow
    // without actions/checkout still gets one (GitHub's would start empty, but every workflow we run checks out).
    if (!steps.some((s) => typeof s.uses === "string" && /^actions\/checkout@/i.test(s.uses.trim()))) {
      const code = await this.checkout(handle, {}, { ...githubEnv }, workspace, token);
      if (code !== 0) status = "failure";
      if (code !== 0) reason = "could not clone the repository into the workspace";
    }

    for (let index = 0; index < steps.length; index++) {
      const step = steps[index]!;
      const record = handle.record.steps[index]!;
      if (handle.cancelRequested || handle.killed || handle.timedOut) status = "cancelled";
      context.status = status;
      context.contexts.env = { ...jobEnv };
      if (!evaluateCondition(step.if, context)) {
        record.status = "skipped";
        record.conclusion = "skipped";
        if (step.id) stepsContext[step.id] = { outputs: {}, outcome: "skipped", conclusion: "skipped" };
        continue;
      }
      if (handle.killed) break;
      record.status = "in_progress";
      this.options.onEvent?.({ type: "step", run: handle.record, step: record.name });
      this.log(handle, `##[group]${record.name}`);

      const files = {
        output: join(runnerTemp, `_runner_file_commands/set_output_${index}`),
        env: join(runnerTemp, `_runner_file_commands/set_env_${index}`),
        path: join(runnerTemp, `_runner_file_commands/add_path_${index}`),
        state: join(runnerTemp, `_runner_file_commands/save_state_${index}`),
        summary: join(runnerTemp, `_runner_file_commands/step_summary_${index}`),
      };
      mkdirSync(join(runnerTemp, "_runner_file_commands"), { recursive: true });
      for (const f of Object.values(files)) writeFileSync(f, "");

      const stepEnv: Record<string, string> = { ...jobEnv };
      for (const [k, v] of Object.entries(step.env ?? {}))
        stepEnv[k] = interpolateString(v, { ...context, contexts: { ...context.contexts, env: stepEnv } });
      const env: NodeJS.ProcessEnv = {
        ...githubEnv,
        ...stepEnv,
        PATH: [...extraPath, githubEnv.PATH ?? ""].filter(Boolean).join(":"),
        GITHUB_OUTPUT: files.output,
        GITHUB_ENV: files.env,
        GITHUB_PATH: files.path,
        GITHUB_STATE: files.state,
        GITHUB_STEP_SUMMARY: files.summary,
        GITHUB_ACTION: step.id ?? `__run_${index}`,
      };
      const timeout = minutes(step["timeout-minutes"]);
      let exitCode: number | null = 0;
      try {
        if (step.uses) {
          exitCode = await this.runUses(handle, step, env, context, { workspace, token, posts, files });
        } else if (typeof step.run === "string") {
          const script = interpolateString(step.run, {
            ...context,
            contexts: { ...context.contexts, env: stepEnv },
          });
          const scriptPath = join(runnerTemp, `${index}-${Math.random().toString(36).slice(2)}.sh`);
          writeFileSync(scriptPath, script);
          const cwd = step["working-directory"] ?? job.defaults?.run?.["working-directory"];
          const shell = step.shell ?? job.defaults?.run?.shell ?? "bash";
          const [command, args] =
            shell === "sh"
              ? ["sh", ["-e", scriptPath]]
              : shell === "node"
                ? [this.options.nodePath ?? process.execPath, [scriptPath]]
                : ["bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptPath]];
          exitCode = await this.exec(handle, command as string, args as string[], {
            cwd: cwd ? resolve(workspace, cwd) : workspace,
            env,
            timeoutMs: timeout,
          });
        } else {
          throw new Error(`step ${index + 1} has neither uses nor run`);
        }
      } catch (error) {
        this.log(handle, `##[error]${(error as Error).message}`);
        exitCode = 1;
      }

      // File commands, read back as the runner does after each step.
      let outputs: Record<string, string> = {};
      try {
        outputs = parseKeyValueFile(readFileSync(files.output, "utf8"));
        for (const [k, v] of Object.entries(parseKeyValueFile(readFileSync(files.env, "utf8"))))
          jobEnv[k] = v;
        for (const p of readFileSync(files.path, "utf8").split(/\r?\n/).filter(Boolean).reverse())
          extraPath.unshift(p);
        const summary = readFileSync(files.summary, "utf8");
        if (summary.trim()) handle.record.summary += (handle.record.summary ? "\n" : "") + summary;
      } catch (error) {
        this.log(handle, `##[error]${(error as Error).message}`);
        exitCode = exitCode || 1;
      }
      record.outputs = outputs;
      Object.assign(handle.record.outputs, outputs);
      const failed = exitCode !== 0;
      const continueOnError = truthyFlag(step["continue-on-error"]);
      record.exitCode = exitCode;
      record.status = "completed";
      record.conclusion =
        handle.cancelRequested || handle.killed
          ? "cancelled"
          : failed && !continueOnError
            ? "failure"
            : "success";
      if (step.id) {
        stepsContext[step.id] = {
          outputs,
          outcome: failed ? "failure" : "success",
          conclusion: failed && !continueOnError ? "failure" : "success",
        };
      }
      this.log(handle, "##[endgroup]");
      if (handle.killed) break;
      if (handle.cancelRequested || handle.timedOut) {
        status = "cancelled";
        reason = handle.timedOut ? "timed out" : "cancelled";
      } else if (failed && !continueOnError && status === "success") {
        status = "failure";
        reason = `step "${record.name}" failed with exit code ${exitCode}`;
        if (exitCode === null) reason = `step "${record.name}" was killed`;
      }
    }

    // Post steps of node actions, in reverse order (post-if defaults to always()).
    for (const post of posts.reverse()) {
      if (handle.killed) break;
      context.status = status;
      if (!evaluateCondition(post.condition, context)) continue;
      const env: NodeJS.ProcessEnv = { ...post.env };
      for (const [k, v] of Object.entries(post.state)) env[`STATE_${k}`] = v;
      await this.exec(handle, this.options.nodePath ?? process.execPath, [post.main], {
        cwd: workspace,
        env,
        timeoutMs: null,
      });
    }
    clearTimeout(jobTimer);

    if (job.outputs) {
      for (const [k, v] of Object.entries(job.outputs))
        handle.record.outputs[k] = interpolateString(v, context);
    }
    const conclusion: RunConclusion = handle.killed
      ? "failure"
      : handle.timedOut
        ? "timed_out"
        : status === "cancelled"
          ? "cancelled"
          : status;
    this.store.updateWorkflowJob(repo.fullName, run.id, storeJob.id, {
      conclusion,
      steps: handle.record.steps.map((s, i) => ({
        name: s.name,
        number: i + 1,
        status: s.status === "skipped" ? "completed" : s.status === "pending" ? "queued" : s.status,
        conclusion: s.conclusion,
      })),
    });
    return { conclusion, reason: handle.timedOut ? "The job exceeded its maximum execution time." : reason };
  }

  /** Runs a `uses:` step: checkout, the configured action, or a no-op stand-in for setup actions. */
  private async runUses(
    handle: RunHandle,
    step: StepFile,
    env: NodeJS.ProcessEnv,
    context: ExprContext,
    job: {
      workspace: string;
      token: string;
      posts: {
        name: string;
        main: string;
        state: Record<string, string>;
        env: NodeJS.ProcessEnv;
        condition: string;
      }[];
      files: { state: string };
    },
  ): Promise<number | null> {
    const uses = step.uses!.trim();
    const withValues: Record<string, string> = {};
    for (const [k, v] of Object.entries(step.with ?? {})) withValues[k] = interpolateString(v, context);

    if (/^actions\/checkout@/i.test(uses))
      return this.checkout(handle, withValues, env, job.workspace, job.token);
    if (/^actions\/create-github-app-token@/i.test(uses)) return this.createAppToken(handle, withValues, env);
    if (/^actions\/(setup-node|cache|upload-artifact|download-artifact)@/i.test(uses)) {
      this.log(handle, `${uses}: not needed in the sandbox (the runner's node and no artifact storage)`);
      return 0;
    }
    const isAction = uses === "./" || uses === "." || (this.options.actionRefs ?? defaultActionRefs)(uses);
    let actionDir: string | null = null;
    if (isAction) actionDir = this.actionDir;
    else if (uses.startsWith("./")) actionDir = resolve(job.workspace, uses);
    if (!actionDir) {
      this.log(
        handle,
        `##[error]Unable to resolve action \`${uses}\`: the sandbox runs only the configured action, checkout and local actions.`,
      );
      return 1;
    }
    const manifestPath = ["action.yml", "action.yaml"]
      .map((f) => join(actionDir!, f))
      .find((p) => existsSync(p));
    const manifest: ActionFile = manifestPath
      ? ((parseYaml(readFileSync(manifestPath, "utf8")) as ActionFile) ?? {})
      : {};
    const main = manifest.runs?.main ?? "dist/worker/index.js";
    const mainPath = isAbsolute(main) ? main : join(actionDir, main);
    if (!existsSync(mainPath)) {
      this.log(
        handle,
        `##[error]The action's entry point ${mainPath} does not exist (build it with \`npm run bundle\`).`,
      );
      return 1;
    }
    // Inputs: `with:` values, then the action's defaults (which may be expressions, e.g. ${{ github.token }}).
    const inputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(manifest.inputs ?? {})) {
      if (spec?.default !== undefined && spec.default !== null)
        inputs[name] = interpolateString(spec.default, context);
    }
    Object.assign(inputs, withValues);
    const actionEnv: NodeJS.ProcessEnv = {
      ...env,
      GITHUB_ACTION_PATH: actionDir,
      GITHUB_ACTION_REPOSITORY: isAction ? uses : "",
    };
    for (const [name, value] of Object.entries(inputs))
      actionEnv[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
    if (manifest.runs?.using && !/^node\d+$/.test(manifest.runs.using)) {
      this.log(handle, `##[error]Unsupported action runtime '${manifest.runs.using}' (node actions only).`);
      return 1;
    }
    const code = await this.exec(handle, this.options.nodePath ?? process.execPath, [mainPath], {
      cwd: job.workspace,
      env: actionEnv,
      timeoutMs: minutes(step["timeout-minutes"]),
    });
    if (manifest.runs?.post) {
      let state: Record<string, string> = {};
      try {
        state = parseKeyValueFile(readFileSync(job.files.state, "utf8"));
      } catch {
        state = {};
      }
      job.posts.push({
        name: `Post ${step.name ?? uses}`,
        main: join(actionDir, manifest.runs.post),
        state,
        env: actionEnv,
        condition: manifest.runs["post-if"] ?? "always()",
      });
    }
    return code;
  }

  /**
   * actions/create-github-app-token: checks the app id and private key against the sandbox's app and writes an
   * installation token to the step's outputs (`token`, `installation-id`, `app-slug`), masked in the log.
   */
  private createAppToken(
    handle: RunHandle,
    withValues: Record<string, string>,
    env: NodeJS.ProcessEnv,
  ): number {
    const appId = withValues["app-id"] ?? withValues.app_id ?? "";
    const key = withValues["private-key"] ?? withValues.private_key ?? "";
    const expected = this.options.app;
    if (!appId || !key) {
      this.log(handle, "##[error]Input required and not supplied: app-id and private-key");
      return 1;
    }
    if (expected && (appId !== String(expected.id) || key.trim() !== expected.privateKey.trim())) {
      this.log(
        handle,
        "##[error]Failed to create token for the app: the app id or private key is not the sandbox app's",
      );
      return 1;
    }
    const token = this.store.issueInstallationToken({ repositories: [handle.request.repo.fullName] }).token;
    const output = env.GITHUB_OUTPUT;
    if (output) {
      writeFileSync(
        output,
        `token=${token}\ninstallation-id=${this.store.installationId}\napp-slug=${this.store.app.slug}\n`,
        { flag: "a" },
      );
    }
    this.log(handle, `Created an installation access token for ${this.store.app.slug} (***)`);
    return 0;
  }

  /** actions/checkout: clones over HTTP with the token and keeps it as an extra header, as checkout does. */
  private async checkout(
    handle: RunHandle,
    withValues: Record<string, string>,
    env: NodeJS.ProcessEnv,
    workspace: string,
    defaultToken: string,
  ): Promise<number | null> {
    const { repo, run } = handle.request;
    const repository = withValues.repository || repo.fullName;
    const [owner = repo.owner, name = repo.name] = repository.split("/");
    const token = withValues.token || defaultToken;
    const target = withValues.path ? resolve(workspace, withValues.path) : workspace;
    const depth = withValues["fetch-depth"] ?? "1";
    const url = this.options.git.url(owner, name);
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
    const sameRepo = repository.toLowerCase() === repo.fullName.toLowerCase();
    const ref = withValues.ref || (sameRepo ? handle.request.ref : "");
    const branch = ref.replace(/^refs\/heads\//, "");
    const isSha = /^[0-9a-f]{40}$/i.test(ref);
    let refspec: string;
    let checkoutArgs: string[];
    if (sameRepo && !withValues.ref && !ref.startsWith("refs/tags/")) {
      // The run's own commit, on a local branch named like the ref (checkout's default).
      refspec = `+${run.headSha}:refs/remotes/origin/${branch}`;
      checkoutArgs = ["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`];
    } else if (isSha) {
      refspec = ref;
      checkoutArgs = ["checkout", "--quiet", "--force", "--detach", ref];
    } else if (ref.startsWith("refs/tags/")) {
      refspec = `+${ref}:${ref}`;
      checkoutArgs = ["checkout", "--quiet", "--force", "--detach", ref];
    } else if (ref) {
      refspec = `+refs/heads/${branch}:refs/remotes/origin/${branch}`;
      checkoutArgs = ["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`];
    } else {
      const record = this.store.getRepo(repository);
      const def = record?.defaultBranch ?? "main";
      refspec = `+refs/heads/${def}:refs/remotes/origin/${def}`;
      checkoutArgs = ["checkout", "--quiet", "--force", "-B", def, `refs/remotes/origin/${def}`];
    }
    const fetch = ["fetch", "--quiet", "--no-tags", "--prune", "--no-recurse-submodules"];
    if (depth !== "0") fetch.push(`--depth=${depth}`);
    fetch.push("origin", refspec);
    const persist = truthyFlag(withValues["persist-credentials"] ?? "true");
    mkdirSync(target, { recursive: true });
    const commands: string[][] = [
      ["init", "--quiet", target],
      ["-C", target, "remote", "add", "origin", url],
      ["-C", target, "config", "--local", `http.${new URL(url).origin}/.extraheader`, header],
      ["-C", target, ...fetch],
      ["-C", target, ...checkoutArgs],
      ...(persist
        ? []
        : [["-C", target, "config", "--local", "--unset-all", `http.${new URL(url).origin}/.extraheader`]]),
    ];
    for (const args of commands) {
      const result = await runProcess("git", args, { env: { ...env, GIT_TERMINAL_PROMPT: "0" } });
      if (result.code !== 0) {
        const shown = args.map((a) => (a === header ? "AUTHORIZATION: basic ***" : a)).join(" ");
        this.log(handle, `##[error]git ${shown} failed: ${result.stderr.trim()}`);
        return result.code ?? 1;
      }
    }
    this.log(handle, `Checked out ${repository}@${ref || "default branch"} into ${target}`);
    return 0;
  }

  /** Spawns a step process in its own process group and streams its output into the run log. */
  private exec(
    handle: RunHandle,
    command: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number | null },
  ): Promise<number | null> {
    return new Promise((resolvePromise) => {
      if (!existsSync(options.cwd)) mkdirSync(options.cwd, { recursive: true });
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      handle.process = child;
      let timer: NodeJS.Timeout | undefined;
      if (options.timeoutMs) {
        timer = setTimeout(() => {
          this.log(handle, "##[error]The step exceeded its timeout.");
          killGroup(child, "SIGKILL");
        }, options.timeoutMs);
      }
      let partial = { out: "", err: "" };
      const onData = (which: "out" | "err") => (chunk: Buffer) => {
        const text = partial[which] + chunk.toString("utf8");
        const lines = text.split("\n");
        partial = { ...partial, [which]: lines.pop() ?? "" };
        for (const line of lines) this.log(handle, line);
      };
      child.stdout?.on("data", onData("out"));
      child.stderr?.on("data", onData("err"));
      child.on("error", (error) => this.log(handle, `##[error]${error.message}`));
      child.on("close", (code) => {
        if (timer) clearTimeout(timer);
        if (partial.out) this.log(handle, partial.out);
        if (partial.err) this.log(handle, partial.err);
        if (handle.process === child) handle.process = null;
        resolvePromise(code);
      });
      // A cancel that arrived while the step was starting.
      if (handle.killed) killGroup(child, "SIGKILL");
      else if (handle.cancelRequested) this.signalRun(handle, false);
    });
  }

  /** The environment every runner process starts from: no parent secrets, a runner-like HOME. */
  private baseEnv(home: string): NodeJS.ProcessEnv {
    mkdirSync(home, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: home,
      LANG: process.env.LANG ?? "C.UTF-8",
      TMPDIR: process.env.TMPDIR ?? tmpdir(),
      GIT_CONFIG_NOSYSTEM: "1",
    };
    if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
    return env;
  }

  /** The workflow_dispatch event payload (GITHUB_EVENT_PATH), in the shapes the webhooks use. */
  private eventPayload(handle: RunHandle): Record<string, unknown> {
    const { repo, run, ref, workflow } = handle.request;
    const shapes = new Shapes(this.store, this.options.url);
    return {
      inputs: handle.record.inputs,
      ref: fullRef(ref),
      workflow: workflow.path,
      repository: shapes.repository(repo),
      sender: shapes.user(run.actor),
      installation: { id: this.store.installationId },
    };
  }

  /** Signals the running step: SIGINT, then SIGTERM, then SIGKILL (`immediate`: SIGKILL at once). */
  private signalRun(handle: RunHandle, immediate: boolean): void {
    const child = handle.process;
    if (!child) return;
    if (immediate) {
      killGroup(child, "SIGKILL");
      return;
    }
    const grace = this.options.cancelGraceMs ?? 2500;
    killGroup(child, "SIGINT");
    handle.timers.push(
      setTimeout(() => killGroup(child, "SIGTERM"), grace),
      setTimeout(() => killGroup(child, "SIGKILL"), grace * 2),
    );
  }

  /** Cancels a run: a pending one ends at once; a running one gets SIGINT → SIGTERM → SIGKILL. */
  cancelRun(runId: number, reason = "The run was canceled."): boolean {
    const handle = this.handles.get(runId);
    if (!handle || handle.record.status === "completed") return false;
    handle.cancelRequested = true;
    if (!handle.started) {
      if (handle.record.status === "pending") this.finish(handle, "cancelled", reason);
      // a queued run still being prepared notices cancelRequested
      return true;
    }
    handle.record.reason = reason;
    this.signalRun(handle, false);
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
    this.signalRun(handle, true);
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
    for (const handle of this.handles.values()) if (handle.process) killGroup(handle.process, "SIGKILL");
    for (const child of this.ciProcesses) killGroup(child, "SIGKILL");
    if (this.ownsWorkDir) rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Kills every process, cancels every run, removes the work directory. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const off of this.unsubscribe) off();
    const open = [...this.handles.values()].filter((h) => h.record.status !== "completed");
    for (const handle of open) {
      handle.killed = true;
      if (handle.process) killGroup(handle.process, "SIGKILL");
    }
    for (const child of this.ciProcesses) killGroup(child, "SIGKILL");
    await Promise.race([
      Promise.allSettled([...open.map((h) => h.done), ...this.ciRuns]),
      new Promise((r) => setTimeout(r, 3000)),
    ]);
    for (const handle of open) this.finish(handle, "cancelled", "the sandbox stopped");
    if (this.ownsWorkDir) rmSync(this.workDir, { recursive: true, force: true });
  }
}

/** Sends a signal to a child's whole process group (it was spawned detached), falling back to the child. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (signal === "SIGKILL") {
    // A lost runner or a stop: nothing may survive, not even what the step started in groups of its own.
    killTree(child.pid, "SIGKILL");
    return;
  }
  // The leader may have exited while its group lives on; the group is still signalled.
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Starts the Actions stand-in on a sandbox. */
export function startActions(options: ActionsOptions): ActionsRunner {
  return new ActionsRunner(options).start();
}

export type { WorkflowRun };
