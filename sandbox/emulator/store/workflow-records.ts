/** Workflows, their runs and the runs' jobs (GitHub Actions). */

export interface Workflow {
  id: number;
  nodeId: string;
  name: string;
  /** `.github/workflows/<file>.yml` */
  path: string;
  state: "active" | "disabled_manually";
  createdAt: Date;
  updatedAt: Date;
}

export type RunStatus = "requested" | "queued" | "pending" | "waiting" | "in_progress" | "completed";
export type RunConclusion =
  | "success"
  | "failure"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "neutral"
  | "action_required"
  | "stale"
  | "startup_failure"
  | null;

export interface WorkflowJob {
  id: number;
  nodeId: string;
  runId: number;
  name: string;
  status: RunStatus;
  conclusion: RunConclusion;
  startedAt: Date | null;
  completedAt: Date | null;
  steps: Array<{ name: string; number: number; status: RunStatus; conclusion: RunConclusion }>;
}

export interface WorkflowRun {
  id: number;
  nodeId: string;
  workflowId: number;
  /** Workflow name. */
  name: string;
  displayTitle: string;
  event: string;
  status: RunStatus;
  conclusion: RunConclusion;
  headBranch: string | null;
  headSha: string;
  runNumber: number;
  runAttempt: number;
  actor: string;
  triggeringActor: string;
  /** workflow_dispatch inputs (strings, as GitHub passes them). */
  inputs: Record<string, string>;
  /** The PR numbers the run is associated with (pull_request events). */
  pullRequests: number[];
  /** Concurrency group resolved by the Actions stand-in, if any. */
  concurrencyGroup: string | null;
  cancelRequested: boolean;
  createdAt: Date;
  updatedAt: Date;
  runStartedAt: Date | null;
  jobs: WorkflowJob[];
  /** What its steps kept with actions/upload-artifact; a re-run's attempts add to the same run. */
  artifacts: WorkflowArtifact[];
}

/**
 * An artifact a run uploaded (https://docs.github.com/en/rest/actions/artifacts): its name is unique within the
 * run, and it expires after its retention period.
 */
export interface WorkflowArtifact {
  id: number;
  nodeId: string;
  name: string;
  runId: number;
  /** The files, by their path inside the artifact. */
  files: Record<string, Buffer>;
  sizeInBytes: number;
  /** `sha256:<hex>` of the files, as upload-artifact reports a digest. */
  digest: string;
  createdAt: Date;
  expiresAt: Date;
}
