/** The Actions stand-in's options, events and records of runs (see actions.ts). */
import type { ChildProcess } from "node:child_process";
import type { SandboxGit } from "./sandbox-git.js";
import type { SandboxStore, WorkflowRunRequest } from "./store.js";

export type RunConclusion = "success" | "failure" | "cancelled" | "timed_out" | "skipped";

export interface CiConfig {
  /** Shell command run in a clone of the PR head. */
  command: string;
  /** Check run name (default `ci`). */
  name?: string;
  /** Wall-clock limit (default 5 minutes). */
  timeoutMs?: number;
  /** The workflow also lists `merge_group` in `on:`: it runs on merge queue groups too (default: no). */
  mergeGroup?: boolean;
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
  /**
   * Start runs for the events each workflow's `on:` lists (issues, comments, pull requests, checks,
   * `workflow_run`, pushes) and on its `schedule`, as GitHub does (event-runs.ts). Default false: only
   * `workflow_dispatch` and re-runs start runs.
   */
  eventTriggers?: boolean;
  /** With {@link eventTriggers}: how long one minute of a `schedule` cron lasts (unset: no schedule runs). */
  scheduleMinuteMs?: number;
  /** With {@link eventTriggers}: asked once per event that would start a run; true loses it (a fault). */
  loseEvent?: () => boolean;
  /**
   * Directories the worker's agent sandbox shares writable with this machine (AUTOPILOT_AGENT_SHARED_DIRS in the
   * runner's environment): the demo agent keeps its per-issue state beside its script.
   */
  agentSharedDirs?: string[];
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
  /** The event that started it (`workflow_dispatch`, `issues`, `schedule`, …). */
  event: string;
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

/** The runner's state of one run (its record, the request, cancellation flags, the running step). */
export interface RunHandle {
  /** The worker's agent user for this run's jobs (AUTOPILOT_AGENT_USER). */
  agentUser?: string;
  record: RunRecord;
  request: WorkflowRunRequest;
  cancelInProgress: boolean;
  cancelRequested: boolean;
  /** A forced cancel: no step or post step runs after it, not even one on `always()`. */
  forceCancelled: boolean;
  /**
   * The job chose its next step knowing of the cancel (the step's `if:` passed with the run cancelled, as
   * `always()` does): that step runs to its end instead of being signalled as it starts.
   */
  cancelAcknowledged: boolean;
  killed: boolean;
  timedOut: boolean;
  process: ChildProcess | null;
  dir: string | null;
  done: Promise<RunRecord>;
  resolve: (record: RunRecord) => void;
  started: boolean;
  timers: NodeJS.Timeout[];
}
