/** The Actions stand-in's options, events and records of runs (see actions.ts). */
import type { ChildProcess } from "node:child_process";
import type { SandboxGit } from "../git/sandbox-git.js";
import type { SandboxStore, WorkflowRunRequest } from "../store.js";

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
  /**
   * Directory of the action under test, which `uses: ./` and {@link actionRefs} resolve to. Without it `./…`
   * is a path in the job's workspace, as on GitHub.
   */
  actionDir?: string;
  /**
   * Which other `uses:` values run the action in {@link actionDir} (`./` always does; by default nothing else):
   * the harness names its action's published references here, e.g. `<owner>/<action>@<ref>`.
   */
  actionRefs?: (uses: string) => boolean;
  /**
   * On GitHub every job has a runner machine of its own; here jobs share one. With this set, each running job
   * claims an OS user from `claim` (one no other running job on this machine holds) and finds its name in the
   * environment variable `variable`; the user is released when the run ends. Without it, no user is claimed.
   */
  jobUser?: { variable: string; claim: () => { name: string; release: () => void } };
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
   * Variables the runner machine's owner sets for every job it runs, as a self-hosted runner's `.env` file does
   * (https://docs.github.com/en/actions/hosting-your-own-runners/managing-self-hosted-runners/using-a-proxy-server-with-self-hosted-runners#using-a-env-file-to-set-the-proxy-configuration):
   * the harness tells the worker which directories its agent sandbox shares with this machine.
   */
  runnerEnv?: Record<string, string>;
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
  /** The OS user claimed for this run's jobs (named to them in {@link ActionsOptions.jobUser}). */
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
