/**
 * The tracking issue: the machine state Autopilot keeps between reconciles, the dashboard people read, and
 * the way back from a body to the state (docs/ARCHITECTURE.md "Tracking issue").
 */
export { type Compaction, compactState } from "./compact-state.js";
export { renderHistoryComment } from "./dashboard-markdown.js";
export {
  BODY_BUDGET,
  type ConfigOverrides,
  ConfigOverridesSchema,
  type DashboardState,
  DashboardStateSchema,
  emptyState,
  GITHUB_BODY_LIMIT,
  HISTORY_BATCH,
  type History,
  type HistoryEntry,
  HistoryEntrySchema,
  HistorySchema,
  type Incident,
  IncidentSchema,
  LastGoodConfigSchema,
  newTaskRecord,
  SessionSchema,
  STATE_BUDGET,
  type TaskRecord,
  TaskRecordSchema,
  TRACKING_ISSUE_TITLE,
  TRACKING_MARKER,
} from "./dashboard-state.js";
export type { DashboardView, QueueLine, ReasonLine, SlotLine, TaskLine } from "./dashboard-view.js";
export { rebuildState } from "./rebuild-state.js";
export { dashboardDigest, renderDashboard, utf8Length } from "./render-dashboard.js";
export {
  type CheckedBox,
  type DashboardMarks,
  type ParsedDashboard,
  parseDashboard,
  readDashboardMarks,
  renderStateBlock,
} from "./state-block.js";
