/**
 * What the worker's loop (src/worker/job/) is given and gives back: its inputs, the git, agent, quality,
 * GitHub, clock and log dependencies (all passed in, so the loop runs against fakes in tests), and its run.
 */
import type { WorkerResult } from "../core/tasks/worker-result.js";
import type { WorkerGitHub } from "../github/worker-github.js";
import type { SignedCommitWriter } from "../github/worker-signed-commits.js";
import type { AgentRunner } from "./job/agent-iteration.js";
import type { BranchSetup } from "./checkout/private-git.js";
import type { WorkState } from "./checkout/task-checkout.js";
import type { HumanGateHit } from "../core/tasks/worker-result.js";
import type { QualityCommandResult } from "./processes/quality.js";
import type { CoverageSpec } from "./processes/coverage-gate.js";
import type { PushGuard } from "./checkout/push-guard.js";
import type { PublishPlan } from "./checkout/publish-plan.js";
import type { Transcript } from "./job/transcript.js";

/** Scratch space in the checkout that is never committed (.git/info/exclude). */
export const SCRATCH_EXCLUDES = [".autopilot/tmp/", ".aider*", "node_modules/"];

export interface WorkerInputs {
  /** `owner/name`. */
  repo: string;
  issue: number;
  attempt: number;
  dispatchId: string;
  /** Where the session status is read between iterations; null: never paused from outside. */
  trackingIssue: number | null;
  /** The checkout of the repository. */
  workspace: string;
  defaultBranch: string;
  runUrl?: string | null;
  /** Digest of the task text the controller approved (`task-digest`); a differing text is refused. */
  taskDigest?: string | null;
  /**
   * The plan gate (the `config` input's `plan`): `propose` makes this job a planning run; a digest names the
   * approved plan it implements. Null: the gate does not apply.
   */
  plan?: string | null;
  /**
   * Best of N (the `config` input's `candidate`): this job is that candidate of a best-of round. It runs
   * `bestOf.candidates[candidate - 1]` alone, on the candidate's branch, and leaves the task in progress.
   */
  candidate?: number | null;
}

/** The git operations the loop needs (src/worker/checkout/private-git.ts implements them). */
export interface WorkerGit {
  prepare(): Promise<string[]>;
  addExcludes(patterns: string[]): Promise<void>;
  setupBranch(branch: string, defaultBranch: string): Promise<BranchSetup>;
  restoreConfig(): Promise<boolean>;
  recoverBranch(branch: string): Promise<string[]>;
  headSha(): Promise<string>;
  /** HEAD, and whether the agent's last hand-back differs from it outside `.autopilot/` (or was refused). */
  workState(): Promise<WorkState>;
  /** Commits everything; the new commit, or null when nothing changed. */
  commitAll(message: string): Promise<string | null>;
  /** Pushes HEAD (or `head`, its commit when the caller knows it) to the task branch; returns the commit pushed. */
  push(branch: string, head?: string): Promise<string>;
  /** `commits: signed`: the commits up to `head` the remote lacks, each with what it changes. */
  publishPlan(branch: string, head: string): Promise<PublishPlan>;
  /** `commits: signed`: the branch and HEAD moved onto GitHub's copy (`published`) of the commit `local`. */
  adoptPublished(branch: string, published: string, local: string): Promise<void>;
  /** Puts the work tree back to HEAD (after the quality commands left build output behind). */
  resetWorkTree(): Promise<void>;
  /**
   * Forgets the last hand-back and brings the agent's `.git` and files back to HEAD: a run whose work is not
   * kept (the reviewer's, src/worker/job/review.ts), commits it made in its own `.git` included.
   */
  discardWork(): Promise<void>;
  countCommits(from: string, to?: string): Promise<number>;
  mergeDefault(
    defaultBranch: string,
    message: string,
  ): Promise<{ merged: boolean; conflicts: string[]; base: string }>;
  removeFile(file: string, message: string): Promise<string | null>;
  restoreDeletedFile(file: string): Promise<boolean>;
  diffFrom(base: string): Promise<string>;
  changedPaths(base: string): Promise<string[]>;
  /** What the branch's change holds that a person must see (symbolic links, `.gitmodules`), from objects. */
  gateHits(base: string): Promise<HumanGateHit[]>;
}

/** How the test gate runs the quality commands (the project's `setup` commands run without it). */
export interface QualityGateOptions {
  /** Times a failing command is run again before it counts (`quality.reruns`). */
  reruns: number;
  /** The coverage threshold and report (`quality.coverage`), checked once every command passed. */
  coverage: CoverageSpec | null;
}

export interface QualityRunner {
  detect(cwd: string): Promise<string[]>;
  /** `directory`: where the commands run, relative to the work tree's root (a workspace's); absent: the root. */
  run(
    commands: string[],
    timeoutMs: number,
    gate?: QualityGateOptions,
    directory?: string | null,
  ): Promise<QualityCommandResult[]>;
}

export interface WorkerLog {
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  /** Opens a folded group of the log (one per iteration), ending the one open before it. */
  group(title: string): void;
  /** Ends the open group, if any. */
  endGroup(): void;
}

export interface WorkerDeps {
  git: WorkerGit;
  agent: AgentRunner;
  quality: QualityRunner;
  github: WorkerGitHub;
  /** Milliseconds since the epoch. */
  clock: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  log: WorkerLog;
  /** Aborted when the job is cancelled: the running agent is killed, work is checkpointed, the job ends. */
  signal?: AbortSignal;
  /** The agent's work tree when it is not `inputs.workspace` (boundary.ts moves it out of the checkout). */
  workTree?: string;
  /**
   * Run once the attempt is claimed, before the branch is touched (run-job.ts: the commits' author, from the
   * token's own account the claim's query read).
   */
  afterClaim?: () => Promise<void>;
  /**
   * Checked before every push (src/worker/checkout/push-guard.ts): a held secret's value refuses it, credential
   * patterns fire the human gate. run-job.ts always sets it; absent (most tests), pushes are not checked.
   */
  pushGuard?: PushGuard;
  /**
   * `commits: signed`: GitHub makes the task branch's commits as the App (src/github/worker-signed-commits.ts).
   * run-job.ts sets it when the configuration asks for signed commits.
   */
  signedCommits?: SignedCommitWriter;
  /** The agent's transcript, masked (src/worker/job/transcript.ts); run-job.ts sets it, most tests do not. */
  transcript?: Transcript;
  /** The agent's network (src/worker/network/agent-egress.ts): what its proxy refused, and what the result says of it. */
  network?: {
    /** Set when the network is not the enforced firewall (`network: open`, or no network namespace). */
    access: string | null;
    refused(): { host: string; count: number }[];
  };
}

export interface WorkerRun {
  result: WorkerResult;
  /** The quality commands of the last gate that ran. */
  quality: QualityCommandResult[];
  warnings: string[];
  elapsedMs: number;
  progressCommentId: number | null;
  /** Requests made to GitHub during the run. */
  requests: number;
}
