/**
 * The tracking issue: the machine state Autopilot keeps between reconciles, the dashboard people read, and
 * the way back from a body to the state (docs/ARCHITECTURE.md "Tracking issue").
 */
export { compactState } from "./compact-state.js";
export { renderHistoryComment } from "./dashboard-markdown.js";
export {
  BODY_CAP,
  type ConfigOverrides,
  JobOverridesSchema,
  type DashboardState,
  DashboardStateSchema,
  emptyState,
  HISTORY_BATCH,
  type HistoryEntry,
  newTaskRecord,
  STATE_CAP,
  type TaskRecord,
  TRACKING_ISSUE_TITLE,
  TRACKING_MARKER,
} from "./dashboard-state.js";
export type { AwaitedCommand, DashboardView, ReasonLine, SlotLine } from "./dashboard-view.js";
export { rebuildState } from "./rebuild-state.js";
export { dashboardDigest, renderDashboard, utf8Length } from "./render-dashboard.js";
export {
  parseDashboard,
  readDashboardMarks,
  renderStateBlock,
} from "./state-block.js";
