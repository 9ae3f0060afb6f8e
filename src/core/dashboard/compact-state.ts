/** Compaction: finished tasks leave the state, and the bounded lists are trimmed so the state stays small. */
import {
  type DashboardState,
  HISTORY_BATCH,
  type HistoryEntry,
  STATE_CAP,
  type TaskRecord,
} from "./dashboard-state.js";
import { dropDefaults, renderStateBlock } from "./state-block.js";

interface Compaction {
  state: DashboardState;
  /** Entries to write out as one history comment now (empty when nothing needs to go). */
  flush: HistoryEntry[];
}

/** Task states whose record the state keeps longest when it is trimmed (see compactState). */
const ON_ITS_WAY = new Set(["review", "ready", "in-progress"]);

/**
 * Moves the pending history out when a batch is full or the state is too big, and trims the bounded lists.
 * The caller posts `flush` as a comment on the tracking issue (`renderHistoryComment`).
 */
export function compactState(
  state: DashboardState,
  options: { force?: boolean; canFlush?: boolean } = {},
): Compaction {
  let next: DashboardState = {
    ...state,
    processed: state.processed.slice(-300),
    refused: state.refused.slice(-100),
    incidents: state.incidents.slice(-10),
    failedInARow: state.failedInARow.slice(-50),
    recent: state.recent.slice(-30),
  };
  let flush: HistoryEntry[] = [];
  // Measured once per version of `next`, each task record's share once per record (rendering a large state
  // several times over was the costly part of a reconcile).
  const sizes = new Map<TaskRecord, number>();
  let measured: { state: DashboardState; length: number } | null = null;
  const tooBig = () => {
    if (measured?.state !== next) measured = { state: next, length: stateBlockLength(next, sizes) };
    return measured.length > STATE_CAP;
  };
  // The last good configuration's text goes before anything else: its commit still names it (the
  // controller reads the file there when it needs it), while every other record exists nowhere else.
  if (tooBig()) next = withoutConfigText(next);
  if (
    options.canFlush !== false &&
    next.pendingHistory.length > 0 &&
    (options.force || next.pendingHistory.length >= HISTORY_BATCH || tooBig())
  ) {
    flush = next.pendingHistory;
    next = { ...next, pendingHistory: [], history: { ...next.history, comments: next.history.comments + 1 } };
  }
  if (tooBig()) {
    next = {
      ...next,
      processed: next.processed.slice(-50),
      refused: next.refused.slice(-20),
      incidents: next.incidents.slice(-3),
    };
  }
  if (tooBig()) {
    // Off-ramped tasks' reasons are on their issues already, and their counters can be recovered from worker
    // results: slim the settled records first, then drop them (oldest dispatch first) until the state fits.
    // A task still on its way (in review, or back in the queue for feedback or a retry) keeps its record:
    // its feedback rounds, retries, backoff, merge attempt and one-time notices exist nowhere else, and
    // losing them means unbounded feedback rounds and retries, or a notice posted twice. Only when those
    // alone are over the budget do they go too (the body's size limit is a hard one).
    const tasks = { ...next.tasks };
    const byAge = ([, a]: [string, TaskRecord], [, b]: [string, TaskRecord]) =>
      (Date.parse(a.dispatchedAt ?? "") || 0) - (Date.parse(b.dispatchedAt ?? "") || 0);
    const settled = Object.entries(tasks)
      .filter(([, r]) => r.dispatchId === undefined || r.handled === r.dispatchId)
      .sort(byAge);
    const onItsWay = (r: TaskRecord) => r.label !== undefined && ON_ITS_WAY.has(r.label);
    const offRamped = settled.filter(([, r]) => !onItsWay(r));
    for (const [key, record] of offRamped) tasks[key] = { ...record, reason: undefined, notices: undefined };
    next = { ...next, tasks };
    let excess = stateBlockLength(next, sizes) - STATE_CAP;
    for (const [key] of [...offRamped, ...settled.filter(([, r]) => onItsWay(r))]) {
      if (excess <= 0) break;
      excess -= JSON.stringify(dropDefaults(tasks[key]!)).length + key.length + 4;
      delete tasks[key];
    }
  }
  return { state: next, flush };
}

/**
 * `renderStateBlock(state).length`, with each task record's part taken from `sizes` when known (records are
 * not changed while a compaction measures them; the slimmed ones are new objects). The block is the JSON with
 * `<` and `>` escaped to six characters each, so each part's length adds up.
 */
export function stateBlockLength(state: DashboardState, sizes: Map<TaskRecord, number> = new Map()): number {
  const escaped = (json: string) => {
    let angles = 0;
    for (let i = json.indexOf("<"); i >= 0; i = json.indexOf("<", i + 1)) angles++;
    for (let i = json.indexOf(">"); i >= 0; i = json.indexOf(">", i + 1)) angles++;
    return json.length + 5 * angles;
  };
  // Everything but the records, with `"tasks":{}` in their place …
  let length = renderStateBlock({ ...state, tasks: {} }).length;
  // … then each `"key":{record}` inside those braces, comma-separated.
  let entries = 0;
  for (const [key, record] of Object.entries(state.tasks)) {
    let size = sizes.get(record);
    if (size === undefined) {
      size = escaped(JSON.stringify(dropDefaults(record)));
      sizes.set(record, size);
    }
    length += escaped(JSON.stringify(key)) + 1 + size;
    entries++;
  }
  return length + Math.max(0, entries - 1);
}

/** The state with the last good configuration's text left out (its digest and commit kept). */
export function withoutConfigText(state: DashboardState): DashboardState {
  const known = state.lastGoodConfig;
  if (known?.text === undefined || !known.commit) return state;
  return { ...state, lastGoodConfig: { digest: known.digest, commit: known.commit } };
}

/**
 * Last-resort trimming when the state alone does not fit (compactState normally suffices); harsher each round.
 * The last good configuration's text is already gone by round 0 (renderDashboard drops it first).
 */
export function squeezeState(state: DashboardState, round: number): DashboardState {
  const next: DashboardState = {
    ...withoutConfigText(state),
    processed: state.processed.slice(-50),
    incidents: state.incidents.slice(-3),
  };
  if (round >= 1) {
    // A dropped gate verdict is only read again (nothing merges without one); a dropped report is said again.
    next.diffGates = state.diffGates.slice(-5);
    next.ignoredPulls = state.ignoredPulls.slice(-20);
    next.pendingHistory = [];
    next.refused = state.refused.slice(-20);
    next.tasks = Object.fromEntries(
      Object.entries(state.tasks).map(([k, r]) => [k, { ...r, reason: undefined, notices: undefined }]),
    );
  }
  if (round >= 2) {
    // Keep only records that matter for what is live now.
    next.tasks = Object.fromEntries(
      Object.entries(next.tasks).filter(([, r]) => r.dispatchId !== undefined && r.handled !== r.dispatchId),
    );
    next.processed = [];
    next.refused = [];
    next.diffGates = [];
  }
  if (round >= 3) {
    // A body over the limit cannot be written at all; keep the newest dispatches only.
    next.tasks = Object.fromEntries(
      Object.entries(next.tasks)
        .sort(
          ([, a], [, b]) => (Date.parse(b.dispatchedAt ?? "") || 0) - (Date.parse(a.dispatchedAt ?? "") || 0),
        )
        .slice(0, 40),
    );
    next.incidents = [];
    next.recent = [];
    next.failedInARow = [];
  }
  return next;
}
