/** Check suites, check runs and commit statuses: what GitHub knows of a commit's CI. */

export type CheckStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required"
  | "stale"
  | null;

export interface CheckOutput {
  title: string | null;
  summary: string | null;
  text: string | null;
}

export interface CheckSuite {
  id: number;
  nodeId: string;
  headSha: string;
  headBranch: string | null;
  /** Slug of the app that owns the suite (`github-actions` for workflow checks). */
  appSlug: string;
  status: CheckStatus;
  conclusion: CheckConclusion;
  createdAt: Date;
  updatedAt: Date;
}

export interface CheckRun {
  id: number;
  nodeId: string;
  name: string;
  headSha: string;
  checkSuiteId: number;
  appSlug: string;
  status: CheckStatus;
  conclusion: CheckConclusion;
  startedAt: Date | null;
  completedAt: Date | null;
  output: CheckOutput;
  detailsUrl: string | null;
  externalId: string | null;
}

export type StatusState = "error" | "failure" | "pending" | "success";

export interface CommitStatus {
  id: number;
  nodeId: string;
  sha: string;
  state: StatusState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: Date;
  updatedAt: Date;
}
