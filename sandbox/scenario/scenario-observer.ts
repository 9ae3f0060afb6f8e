/**
 * Reads a scenario's state off the sandbox's store: each task's report state, its pull request, the tracking
 * issue, the iterations the worker results counted and the checks on a commit. Used while the run plays (the
 * timeline's conditions, progress lines) and for the report at the end.
 */
import type { TaskLabelNames } from "../../src/core/tasks/task.js";
import { parseDashboard, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { describeReason } from "../../src/core/session/session.js";
import { parseWorkerResult } from "../../src/core/tasks/worker-result.js";
import type { Issue, SandboxStore } from "../emulator/store.js";
import type { ReportState } from "./scenario-fields.js";
import { issueOfPrMarker, issueOfRevertBranch, prMarker, taskBranchName } from "../../src/core/contract.js";

/** An issue carrying the tracking marker that a bot (Autopilot) opened; scenario people cannot. */
export function isTrackingIssue(issue: Pick<Issue, "body" | "user">): boolean {
  return (issue.body ?? "").includes(TRACKING_MARKER) && /\[bot\]$/.test(issue.user);
}

/** States a task ends in: nothing more happens to it unless someone acts. */
export const TERMINAL: ReadonlySet<ReportState> = new Set([
  "done",
  "blocked",
  "needs-human",
  "timeout",
  "failed",
]);

/** The report state of a task issue, from its open/closed state and the config's task-state labels. */
function reportState(issue: Issue, labels: TaskLabelNames): ReportState {
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

/** A body without its hidden markers (HTML comments), as a person reads it. */
export function stripMarkers(body: string): string {
  return body
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Reads a scenario repository's state off the store. */
export class ScenarioObserver {
  private readonly iterations = new Map<number, Map<string, number>>();
  constructor(
    private readonly store: SandboxStore,
    readonly repo: string,
    private readonly labels: TaskLabelNames,
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

  /**
   * Whether another repository of the organization (`repos`, `owner/name`) still has a task under way: an open
   * issue labeled ready, in progress or in review (by the scenario repository's label names). A run does not
   * settle before the organization's work has.
   */
  orgWorkPending(repos: readonly string[]): boolean {
    const live = [this.labels.ready, this.labels.inProgress, this.labels.review].map((l) => l.toLowerCase());
    return repos.some((full) =>
      this.store
        .listIssues(full)
        .some((i) => !i.pull && i.state === "open" && i.labels.some((l) => live.includes(l.toLowerCase()))),
    );
  }

  /**
   * The task's pull request: by Autopilot's marker, its branch (or the revert branch of `/autopilot rollback`),
   * or a closing keyword; the newest wins.
   */
  pullFor(number: number): (Issue & { pull: NonNullable<Issue["pull"]> }) | null {
    // A fork's PR is never a task's PR, whatever its branch or body says (scenarios open such PRs as attacks).
    const pulls = this.store.listPulls(this.repo).filter((p) => {
      if (p.pull.headRepo) return false;
      const body = p.body ?? "";
      return (
        body.includes(prMarker(number)) ||
        p.pull.head.ref === taskBranchName(this.branchPrefix, number) ||
        issueOfRevertBranch(this.branchPrefix, p.pull.head.ref)?.issue === number ||
        new RegExp(`\\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\\s+#${number}\\b`, "i").test(body)
      );
    });
    const open = pulls.filter((p) => p.state === "open" || p.pull.merged);
    return (open.at(-1) ?? pulls.at(-1) ?? null) as (Issue & { pull: NonNullable<Issue["pull"]> }) | null;
  }

  /** Which task a pull request belongs to. */
  issueOfPull(pull: Issue): number | null {
    const marker = issueOfPrMarker(pull.body ?? "");
    if (marker !== null) return marker;
    const branch = pull.pull ? /issue-(\d+)$/.exec(pull.pull.head.ref) : null;
    if (branch) return Number(branch[1]);
    const closes = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/i.exec(pull.body ?? "");
    return closes ? Number(closes[1]) : null;
  }

  /** The dashboard Autopilot opened (a person's issue carrying the marker is not it). */
  tracking(): Issue | null {
    return this.store.listIssues(this.repo).find((i) => !i.pull && isTrackingIssue(i)) ?? null;
  }

  /** Why the session is paused (its reason and detail, as the dashboard keeps them), or null when it is not. */
  pausedBecause(): string | null {
    const session = parseDashboard(this.tracking()?.body).state?.session;
    if (session?.status !== "paused") return null;
    return `${describeReason(session.reason)}${session.detail ? `: ${session.detail}` : ""}`;
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
