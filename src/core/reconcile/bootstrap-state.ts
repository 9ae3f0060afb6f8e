/** The state when the tracking issue has none to give: empty, or rebuilt from what GitHub shows. */
import { type DashboardState, emptyState, rebuildState } from "../dashboard/index.js";
import type { DecideInput } from "./context.js";
import { hasLabel } from "./task-labels.js";

/** The state, and the log line saying why it was rebuilt (null when nothing was lost). */
export function bootstrapState(input: DecideInput): { state: DashboardState; log: string | null } {
  const { snapshot, now, config } = input;
  const tracking = snapshot.trackingIssue;
  const L = config.labels;
  const offRamped = snapshot.issues.some((i) =>
    [L.blocked, L.needsHuman, L.timeout, L.failed].some((l) => hasLabel(i.labels, l)),
  );
  // Work in flight without a tracking issue means the tracking issue was lost (deleted, or never written).
  const inFlight =
    snapshot.workerResults.length > 0 ||
    snapshot.runs.some((r) => r.status !== "completed") ||
    snapshot.issues.some((i) => [L.inProgress, L.review].some((l) => hasLabel(i.labels, l)));
  if (!tracking && !inFlight && !offRamped) return { state: emptyState(now), log: null };
  if (!tracking && !inFlight) {
    // A first run in a repository that already has off-ramped tasks: pick up what GitHub shows, quietly.
    return { state: rebuildState(snapshot, now, config), log: null };
  }
  const state = rebuildState(snapshot, now, config);
  const message = tracking
    ? "The state block of this issue was missing or unreadable; Autopilot rebuilt it from labels, pull requests, worker results and runs."
    : "The tracking issue was missing (deleted?); Autopilot opened this one and rebuilt its state from labels, pull requests, worker results and runs.";
  state.incidents.push({
    at: now.toISOString(),
    kind: tracking ? "state_rebuilt" : "tracking_issue_missing",
    message,
  });
  return {
    state,
    log: tracking
      ? "state block missing or corrupt: rebuilt from GitHub"
      : "tracking issue missing: state rebuilt from GitHub",
  };
}
