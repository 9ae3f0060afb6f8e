/** Rebuilding the state from GitHub when the state block is lost. */
import type { AutopilotConfig } from "../config/index.js";
import type { SessionState } from "../session/session.js";
import { taskStatusFromLabels } from "../tasks/task.js";
import type { WorldSnapshot } from "../world.js";
import { type DashboardState, emptyState, newTaskRecord } from "./dashboard-state.js";
import { parseDashboard } from "./state-block.js";

/**
 * Reconstructs the state from labels, PRs, worker results and runs when the state block is missing or
 * corrupt (or the tracking issue was deleted). The session status comes from the visible part when it
 * survived, else `running` when there is work in flight, else `idle`.
 */
export function rebuildState(snapshot: WorldSnapshot, now: Date, config: AutopilotConfig): DashboardState {
  const state = emptyState(now);
  const labels = config.labels;
  const results = new Map(snapshot.workerResults.map((r) => [r.issue, r]));
  let inFlight = false;
  for (const issue of snapshot.issues) {
    if (issue.isPullRequest) continue;
    const status = taskStatusFromLabels(issue, labels);
    const result = results.get(issue.number);
    const liveRuns = snapshot.runs.filter((r) => r.issue === issue.number && r.status !== "completed");
    if (status === null || status === "done" || status === "skipped") continue;
    if (status === "ready" && !result && liveRuns.length === 0) continue;
    if (status === "in-progress" || status === "review") inFlight = true;
    const record = newTaskRecord();
    if (result) {
      record.attempt = result.attempt;
      record.dispatchId = result.dispatchId;
      record.dispatchedAt = result.startedAt;
      // A finished result is acted on again only while the label still says in-progress.
      if (result.status === "finished" && status !== "in-progress") record.handled = result.dispatchId;
      if (result.status === "finished") {
        record.result = result.result;
        if (result.reason) record.reason = result.reason.slice(0, 300);
      }
      if (result.prNumber) record.pr = result.prNumber;
      if (result.humanGate.fired) record.gate = result.humanGate.rules.map((r) => r.rule).slice(0, 20);
      if (status === "needs-human") record.since = result.updatedAt;
    }
    const live = liveRuns.sort((a, b) => b.id - a.id)[0];
    if (live) {
      record.runId = live.id;
      if (live.dispatchId) record.dispatchId = live.dispatchId;
      if (live.attempt) record.attempt = Math.max(record.attempt, live.attempt);
      record.dispatchedAt = live.createdAt;
      inFlight = true;
    }
    state.tasks[String(issue.number)] = record;
  }
  // The visible status marker survives a damaged state block; without it, keep going only with work in flight.
  const shown = snapshot.trackingIssue ? parseDashboard(snapshot.trackingIssue.body).visibleStatus : null;
  const status: SessionState["status"] = shown ?? (inFlight ? "running" : "idle");
  const reason: SessionState["reason"] = {
    running: "user_start",
    pausing: "user_pause",
    paused: "user_pause",
    stopping: "user_stop",
    completed: "all_done",
    // An idle session that had a dashboard was stopped (or never started): it waits for a start.
    idle: shown ? "user_stop" : "initial",
  }[status] as SessionState["reason"];
  state.session = {
    status,
    since: now.toISOString(),
    reason,
    actor: "autopilot",
    detail: "state rebuilt from labels, pull requests and runs",
    startedAt: status === "idle" ? null : now.toISOString(),
  };
  return state;
}
