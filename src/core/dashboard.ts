/**
 * The tracking issue: the machine state Autopilot keeps between reconciles (zod, versioned `v1`), the
 * dashboard people read, and the way back from a body to the state.
 *
 * Body layout (ARCHITECTURE.md "Tracking issue"):
 *
 * ```
 * <!-- autopilot:tracking-issue -->
 * <!-- autopilot:session running -->
 * …dashboard for people…
 * <!-- autopilot:state v1
 * {…json…}
 * -->
 * ```
 *
 * The state holds only what cannot be derived from labels, PRs, runs and worker results: per-task attempt
 * and retry counters, the live dispatch, waits, feedback rounds, the last result, usage totals and the human
 * gate rules that fired; the session; the command cursor; history counters; incidents. A task that is done
 * (or skipped) leaves the state: its numbers go into the history counters and, in batches, into a history
 * comment on the tracking issue. Rendering trims every list and, as a last resort, the state itself so the
 * body stays under GitHub's 65,536-character limit at any number of tasks.
 */
import { z } from "zod";
import type { AutopilotConfig } from "./config/index.js";
import {
  formatCount,
  formatTime,
  formatTokens,
  formatUsd,
  escapeInline,
  progressBar,
  quietLogin,
  table,
} from "./markdown.js";
import { commandHelp } from "./commands.js";
import { describeReason, SESSION_REASONS, SESSION_STATUSES, type SessionState } from "./session.js";
import type { WorldSnapshot } from "./world.js";
import type { SessionStatistics } from "./stats.js";
import { formatDuration } from "./stats.js";
import { taskStatusFromLabels, type TaskStatus } from "./task.js";
import { UNISOLATED_AGENT_ACCESS } from "./worker-result.js";

export const TRACKING_ISSUE_TITLE = "Autopilot dashboard";
export const TRACKING_MARKER = "<!-- autopilot:tracking-issue -->";
const STATE_OPEN = "<!-- autopilot:state v1\n";
const STATE_CLOSE = "\n-->";
const SESSION_MARKER = /<!-- autopilot:session ([a-z]+) -->/;

/** GitHub refuses issue bodies over 65,536 characters. */
export const GITHUB_BODY_LIMIT = 65_536;
/** What the rendered body is kept under (UTF-8 bytes, so it holds for characters of any width). */
export const BODY_BUDGET = 64_000;
/** The state block is compacted (history moved out, older records trimmed) above this many characters. */
export const STATE_BUDGET = 24_000;
/** Finished tasks waiting to be written out as one history comment. */
export const HISTORY_BATCH = 20;

// ---------------------------------------------------------------------------------------------------------
// Schema

const isoTime = z.string().max(40);
const count = z.number().int().nonnegative();

export const SessionSchema = z.object({
  status: z.enum(SESSION_STATUSES),
  since: isoTime,
  reason: z.enum(SESSION_REASONS),
  actor: z.string().max(100),
  detail: z.string().max(500).optional(),
  startedAt: isoTime.nullable(),
});

/** One task's record: only what labels, PRs, runs and worker results cannot tell. */
export const TaskRecordSchema = z.object({
  /** Dispatches made so far; the last one's attempt number (1-based; 0 = never dispatched). */
  attempt: count.default(0),
  /** Earlier retries (crashes, retried failures, manual retries): the scoring penalty. */
  retries: count.default(0),
  /** Failed attempts since the last manual retry (weighed against maxRetries). */
  failures: count.default(0),
  /** The live (or last) dispatch. */
  dispatchId: z.string().max(100).optional(),
  dispatchedAt: isoTime.optional(),
  runId: z.number().int().positive().optional(),
  /** dispatchId of the last finished worker result acted on. */
  handled: z.string().max(100).optional(),
  /** Not to be dispatched before this time (rate/usage limit reset, retry backoff). */
  waitUntil: isoTime.optional(),
  /** Times the PR's feedback (checks, reviews, conflicts) sent the task back to a worker. */
  feedbackRounds: count.default(0),
  /** Head SHA the last feedback was about (feedback is sent once per head). */
  feedbackSha: z.string().max(64).optional(),
  /** Last result: a worker outcome, or `crash` / `lost` / `cancelled` / `feedback` / `retry`. */
  result: z.string().max(40).optional(),
  reason: z.string().max(300).optional(),
  /** When the task entered its current off-ramp (needs-human: when the question was asked). */
  since: isoTime.optional(),
  iterations: count.default(0),
  tokensIn: z.number().nonnegative().default(0),
  tokensOut: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  startedAt: isoTime.optional(),
  /** Human-gate rules that fired for this task (never cleared by editing a PR body). */
  gate: z.array(z.string().max(120)).max(20).optional(),
  pr: z.number().int().positive().optional(),
  /** A cancel of the live run was requested at this time. */
  cancelAt: isoTime.optional(),
  /** A merge was requested for this head SHA. */
  merge: z.object({ sha: z.string().max(64), at: isoTime }).optional(),
  /** The status label Autopilot last gave the task, and when (a stale read cannot undo it for a while). */
  label: z.string().max(20).optional(),
  labelAt: isoTime.optional(),
  /** One-time comments already posted (`no-checks-<PR>`, `gate-<PR>`) and cancels asked (`cancel:<run>`). */
  notices: z.array(z.string().max(80)).max(12).optional(),
  /** The task text a writer approved (src/core/task-text.ts): its digest, and since when edits are new. */
  text: z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), since: isoTime }).optional(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** A finished task waiting to go out in a history comment. */
export const HistoryEntrySchema = z.object({
  issue: z.number().int().positive(),
  title: z.string().max(80),
  outcome: z.enum(["done", "skipped", "closed"]),
  at: isoTime,
  iterations: count.default(0),
  tokens: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  attempts: count.default(0),
  pr: z.number().int().positive().optional(),
});
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;

const Extreme = z.object({ issue: z.number().int().positive(), iterations: count }).nullable();

/** Totals of the tasks that have left the state. */
export const HistorySchema = z.object({
  completed: count.default(0),
  skipped: count.default(0),
  closed: count.default(0),
  merges: count.default(0),
  iterations: count.default(0),
  completedIterations: count.default(0),
  fastest: Extreme.default(null),
  slowest: Extreme.default(null),
  tokensIn: z.number().nonnegative().default(0),
  tokensOut: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
  /** History comments written so far. */
  comments: count.default(0),
});
export type History = z.infer<typeof HistorySchema>;

export const IncidentSchema = z.object({
  at: isoTime,
  kind: z.string().max(40),
  message: z.string().max(400),
});
export type Incident = z.infer<typeof IncidentSchema>;

/** Overrides a `workflow_dispatch` of the controller started the session with. */
export const ConfigOverridesSchema = z
  .object({
    maxParallel: z.number().int().min(1).max(20).optional(),
    labels: z.record(z.string().max(20), z.string().max(50)).optional(),
    dryRun: z.boolean().optional(),
  })
  .strict();
export type ConfigOverrides = z.infer<typeof ConfigOverridesSchema>;

export const DashboardStateSchema = z.object({
  version: z.literal(1),
  /** +1 per write of the tracking issue; the writer checks it to detect a concurrent writer. */
  revision: count.default(0),
  session: SessionSchema,
  overrides: ConfigOverridesSchema.nullable().default(null),
  /** Task records by issue number. */
  tasks: z.record(z.string().regex(/^\d+$/), TaskRecordSchema).default({}),
  consecutiveFailures: count.default(0),
  /** The issues of the current run of failures, for the pause message. */
  failedInARow: z.array(z.number().int().positive()).max(50).default([]),
  /** Newest comment processed (ids grow with time). */
  cursor: z.object({ id: z.number().int().nonnegative(), at: isoTime }).nullable().default(null),
  /** Recently processed comment ids (bounded). */
  processed: z.array(z.number().int().nonnegative()).max(500).default([]),
  /** Logins that already got the polite refusal (bounded). */
  refused: z.array(z.string().max(40)).max(100).default([]),
  history: HistorySchema.prefault({}),
  pendingHistory: z.array(HistoryEntrySchema).max(200).default([]),
  incidents: z.array(IncidentSchema).max(20).default([]),
  /** Tasks that just left the state (done, skipped, closed): a stale read may still show them open. */
  recent: z
    .array(
      z.object({
        issue: z.number().int().positive(),
        outcome: z.enum(["done", "skipped", "closed"]),
        at: isoTime,
      }),
    )
    .max(30)
    .default([]),
  /** Pull requests on task branches that are not the task's (a fork, not Autopilot's): each reported once. */
  ignoredPulls: z.array(z.number().int().positive()).max(100).default([]),
  /** The controller's own human-gate reading per PR head SHA (src/core/diff-gate.ts), read once per head. */
  diffGates: z
    .array(
      z.object({
        pr: z.number().int().positive(),
        sha: z.string().max(64),
        rules: z.array(z.string().max(120)).max(20),
      }),
    )
    .max(30)
    .default([]),
  /** The tracking issue a pin was requested for (0: the one being created). */
  pinRequested: z.number().int().nonnegative().nullable().default(null),
  /** Digest of the rendered dashboard (times left out): a write happens only when it changes. */
  digest: z.string().max(16).default(""),
  renderedAt: isoTime.nullable().default(null),
});
export type DashboardState = z.infer<typeof DashboardStateSchema>;

export function emptyState(now: Date): DashboardState {
  return DashboardStateSchema.parse({
    version: 1,
    revision: 0,
    session: {
      status: "idle",
      since: now.toISOString(),
      reason: "initial",
      actor: "autopilot",
      startedAt: null,
    },
  });
}

/** A record with every default filled in. */
export function newTaskRecord(): TaskRecord {
  return TaskRecordSchema.parse({});
}

// ---------------------------------------------------------------------------------------------------------
// Serialising and parsing

/** The hidden state block. `<` and `>` are escaped in the JSON so the comment cannot end early. */
export function renderStateBlock(state: DashboardState): string {
  const json = JSON.stringify(compactJson(state)).replace(/</g, "\\u003c").replace(/>/g, "\\u003e");
  return `${STATE_OPEN}${json}${STATE_CLOSE}`;
}

export interface CheckedBox {
  action: "retry" | "skip";
  issue: number;
}

export interface ParsedDashboard {
  state: DashboardState | null;
  /** The body has no state block, or its JSON or schema is invalid. */
  corrupt: boolean;
  /** Checkboxes a person ticked in the visible part. */
  checkedBoxes: CheckedBox[];
  /** The session status shown in the visible part (survives a damaged state block). */
  visibleStatus: SessionState["status"] | null;
  /** The body carries the tracking-issue marker. */
  hasMarker: boolean;
}

/** Reads a tracking issue body back. Never throws; a person's edits to the visible part do not matter. */
export function parseDashboard(body: string | null | undefined): ParsedDashboard {
  const text = (body ?? "").replace(/\r\n/g, "\n");
  const start = text.lastIndexOf(STATE_OPEN);
  const visible = start >= 0 ? text.slice(0, start) : text;
  let state: DashboardState | null = null;
  if (start >= 0) {
    const end = text.indexOf(STATE_CLOSE, start + STATE_OPEN.length);
    if (end >= 0) {
      try {
        const parsed = DashboardStateSchema.safeParse(JSON.parse(text.slice(start + STATE_OPEN.length, end)));
        if (parsed.success) state = parsed.data;
      } catch {
        state = null;
      }
    }
  }
  const checkedBoxes: CheckedBox[] = [];
  const seen = new Set<string>();
  for (const line of visible.split("\n")) {
    const m = /^\s*[-*+]\s+\[[xX]\]\s*<!--\s*autopilot:(retry|skip)\s+#(\d+)\s*-->/.exec(line);
    if (!m) continue;
    const key = `${m[1]}#${m[2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    checkedBoxes.push({ action: m[1] as "retry" | "skip", issue: Number(m[2]) });
  }
  const status = SESSION_MARKER.exec(visible)?.[1];
  const visibleStatus = (SESSION_STATUSES as readonly string[]).includes(status ?? "")
    ? (status as SessionState["status"])
    : null;
  return {
    state,
    corrupt: state === null,
    checkedBoxes,
    visibleStatus,
    hasMarker: text.includes(TRACKING_MARKER),
  };
}

/** Leaves out fields at their defaults so the JSON stays small (zod puts them back on parse). */
function compactJson(state: DashboardState): unknown {
  const tasks: Record<string, unknown> = {};
  for (const [key, record] of Object.entries(state.tasks)) tasks[key] = dropDefaults(record);
  return dropDefaults({
    ...state,
    tasks,
    history: dropDefaults(state.history),
    pendingHistory: state.pendingHistory.map(dropDefaults),
  });
}

function dropDefaults<T extends object>(value: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    if (k !== "pinRequested" && (v === 0 || v === "" || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = v;
  }
  return out as Partial<T>;
}

// ---------------------------------------------------------------------------------------------------------
// The view: what reconcile derived from the snapshot for people

export interface TaskLine {
  issue: number;
  title: string;
}

export interface SlotLine extends TaskLine {
  attempt: number;
  iteration: number | null;
  maxIterations: number | null;
  startedAt: string | null;
  runId: number | null;
  runUrl: string | null;
  phase: "dispatched" | "queued" | "running" | "cancelling";
}

export interface QueueLine extends TaskLine {
  score: number;
  why: string;
}

export interface ReasonLine extends TaskLine {
  reason: string;
  /** When the task entered this list, when known. */
  since?: string | null;
  pr?: number | null;
}

export interface DashboardView {
  repo: { owner: string; name: string };
  dryRun: boolean;
  maxParallel: number;
  maxIterations: number;
  slots: SlotLine[];
  /** Ranked, best first. */
  queue: QueueLine[];
  /** In the pool but not ready: dependencies, cycles, waits. */
  waiting: ReasonLine[];
  review: ReasonLine[];
  needsHuman: ReasonLine[];
  blocked: ReasonLine[];
  timeouts: ReasonLine[];
  failed: ReasonLine[];
  /** Labeled ready by someone without write access: not in the pool. */
  notInPool: ReasonLine[];
  cycles: number[][];
  graph: { nodes: { issue: number; status: TaskStatus | "waiting" }[]; edges: [number, number][] };
  statistics: SessionStatistics;
  progress: { done: number; total: number };
  /** Markdown from `renderConfigError`, when the config file is bad. */
  configProblems: string | null;
  /** True with `isolation: none`: the dashboard says what the agent can reach. */
  unisolated?: boolean;
  /**
   * The session-budget marker workers read (src/core/session-budget.ts), and notes on budgets that cannot
   * apply (an agent whose cost is unknown cannot be held to a USD budget).
   */
  budget?: { marker: string | null; notes: string[] };
}

// ---------------------------------------------------------------------------------------------------------
// Rendering

interface Limits {
  list: number;
  queue: number;
  graph: number;
  done: number;
  incidents: number;
  configChars: number;
}

const LIMIT_STEPS: Limits[] = [
  { list: 25, queue: 30, graph: 40, done: 20, incidents: 5, configChars: 8000 },
  { list: 12, queue: 15, graph: 20, done: 10, incidents: 3, configChars: 4000 },
  { list: 5, queue: 8, graph: 0, done: 5, incidents: 2, configChars: 2000 },
  { list: 0, queue: 3, graph: 0, done: 0, incidents: 1, configChars: 1000 },
];

/**
 * The whole tracking issue body: dashboard + hidden state. Deterministic for a given state, view and `now`,
 * and always under the body limit (lists shrink first, then the state is trimmed).
 */
export function renderDashboard(state: DashboardState, view: DashboardView, now: Date): string {
  let fitted = state;
  for (let round = 0; round < 5; round++) {
    const block = renderStateBlock(fitted);
    for (const limits of LIMIT_STEPS) {
      const body = `${renderVisible(fitted, view, now, limits)}\n${block}\n`;
      if (utf8Length(body) <= BODY_BUDGET) return body;
    }
    fitted = squeezeState(fitted, round);
  }
  // Unreachable in practice: the squeezed state is a few hundred characters.
  return `${renderVisible(fitted, view, now, LIMIT_STEPS[LIMIT_STEPS.length - 1]!)}\n${renderStateBlock(fitted)}\n`;
}

/**
 * Digest of the dashboard with every time-dependent part (elapsed, runtime) and the write bookkeeping
 * (revision, digest, renderedAt) left out: when it is unchanged, the tracking issue needs no write.
 */
export function dashboardDigest(state: DashboardState, view: DashboardView): string {
  const bare: DashboardState = { ...state, revision: 0, digest: "", renderedAt: null };
  return fnv1a(`${renderVisible(bare, view, null, LIMIT_STEPS[0]!)}\n${stableJson(compactJson(bare))}`);
}

/** JSON with object keys sorted, so equal states give equal text whatever order their keys were set in. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function renderVisible(state: DashboardState, view: DashboardView, now: Date | null, limits: Limits): string {
  const out: string[] = [];
  const s = state.session;
  out.push(TRACKING_MARKER, `<!-- autopilot:session ${s.status} -->`);
  if (view.budget?.marker) out.push(view.budget.marker);
  out.push("");
  out.push(`## ${STATUS_ICON[s.status]} Autopilot is ${STATUS_WORD[s.status]}`, "");
  const who = s.actor && s.actor !== "autopilot" ? ` by ${quietLogin(s.actor)}` : "";
  out.push(
    `**Session:** ${s.status} since ${formatTime(s.since)}${who} — ${escapeInline(describeReason(s.reason))}` +
      (s.detail ? ` (${escapeInline(s.detail, 300)})` : "") +
      (view.dryRun ? " · **dry run**: Autopilot decides and reports but changes nothing on GitHub" : ""),
  );
  if (view.unisolated) out.push("", `**Agent access:** ${escapeInline(UNISOLATED_AGENT_ACCESS)}`);
  const p = view.progress;
  const parts = [
    `${formatCount(p.done)} of ${formatCount(p.total)} tasks done`,
    `${view.slots.length} running`,
    `${formatCount(view.queue.length)} queued`,
    view.review.length ? `${view.review.length} in review` : "",
    view.needsHuman.length ? `${view.needsHuman.length} need a human` : "",
    view.blocked.length ? `${view.blocked.length} blocked` : "",
    view.failed.length ? `${view.failed.length} failed` : "",
  ].filter(Boolean);
  out.push("", `**Progress:** \`${progressBar(p.done, p.total)}\` · ${parts.join(" · ")}`);
  for (const note of view.budget?.notes ?? []) out.push("", `> ⚠️ ${escapeInline(note, 300)}`);

  if (view.configProblems) {
    out.push(
      "",
      cut(view.configProblems, limits.configChars),
      "",
      "_Autopilot keeps using the last valid configuration until the file is fixed._",
    );
  }
  if (state.incidents.length > 0 && limits.incidents > 0) {
    out.push("", "> [!WARNING]");
    for (const incident of state.incidents.slice(-limits.incidents).reverse()) {
      out.push(`> ${formatTime(incident.at)}: ${escapeInline(incident.message, 300)}`);
    }
  }

  // Slots
  out.push("", `### Running (${view.slots.length} of ${view.maxParallel} slots)`, "");
  if (view.slots.length === 0) out.push("_No worker is running._");
  else {
    const rows = view.slots.map((slot) => [
      taskCell(slot),
      String(slot.attempt),
      slot.iteration === null ? "—" : `${slot.iteration}/${slot.maxIterations ?? view.maxIterations}`,
      now && slot.startedAt ? formatDuration(now.getTime() - Date.parse(slot.startedAt)) : "—",
      runCell(slot),
    ]);
    out.push(table(["task", "attempt", "iteration", "elapsed", "run"], rows));
  }

  // Queue
  out.push("", `### Queue (${formatCount(view.queue.length)})`, "");
  if (view.queue.length === 0) out.push("_Nothing is ready._");
  else {
    const shown = view.queue.slice(0, limits.queue);
    out.push(
      table(
        ["#", "task", "score", "why"],
        shown.map((q, i) => [String(i + 1), taskCell(q), String(q.score), escapeInline(q.why, 160)]),
      ),
    );
    more(out, view.queue.length - shown.length);
  }

  section(
    out,
    "Waiting",
    view.waiting,
    limits.list,
    (w) => `- ${taskCell(w)} — ${escapeInline(w.reason, 200)}`,
  );
  section(
    out,
    "In review",
    view.review,
    limits.list,
    (r) => `- ${taskCell(r)}${r.pr ? ` · PR #${r.pr}` : ""} — ${escapeInline(r.reason, 300)}`,
  );
  section(out, "Needs a human", view.needsHuman, limits.list, (r) =>
    [
      `- [ ] <!-- autopilot:retry #${r.issue} --> retry #${r.issue} — ${escapeInline(r.title, 80)}: ${escapeInline(r.reason, 300)} _(${r.since ? `asked ${formatTime(r.since)}; ` : ""}answer on the issue to continue)_`,
      `  - [ ] <!-- autopilot:skip #${r.issue} --> skip #${r.issue}`,
    ].join("\n"),
  );
  for (const [title, list] of [
    ["Blocked", view.blocked],
    ["Timed out", view.timeouts],
    ["Failed", view.failed],
  ] as const) {
    section(out, title, list, limits.list, (r) =>
      [
        `- [ ] <!-- autopilot:retry #${r.issue} --> retry #${r.issue} — ${escapeInline(r.title, 80)}: ${escapeInline(r.reason, 300)}`,
        `  - [ ] <!-- autopilot:skip #${r.issue} --> skip #${r.issue}`,
      ].join("\n"),
    );
  }
  section(
    out,
    "Not in the pool",
    view.notInPool,
    limits.list,
    (r) => `- ${taskCell(r)} — ${escapeInline(r.reason, 200)}`,
  );
  if (view.cycles.length > 0) {
    out.push(
      "",
      `### Dependency cycles (${view.cycles.length})`,
      "",
      "These issues wait on each other; the other tasks go on.",
      "",
    );
    for (const cycle of view.cycles.slice(0, Math.max(1, limits.list))) {
      const shown = cycle.slice(0, 20).map((n) => `#${n}`);
      out.push(`- ${shown.join(" → ")}${cycle.length > 20 ? " → …" : ""} → #${cycle[0]}`);
    }
    more(out, view.cycles.length - Math.max(1, limits.list));
  }

  // Done
  const doneTotal = state.history.completed + state.history.skipped + state.history.closed;
  if (doneTotal > 0) {
    out.push("", `### Finished (${formatCount(doneTotal)})`, "");
    const recent = [...state.pendingHistory].reverse().slice(0, limits.done);
    for (const h of recent) out.push(`- ${historyLine(h)}`);
    const rest = doneTotal - recent.length;
    const where = state.history.comments > 0 ? " (listed in the history comments below)" : "";
    if (rest > 0 && recent.length === 0)
      out.push(`- ${formatCount(rest)} ${rest === 1 ? "task" : "tasks"}${where}`);
    else if (rest > 0) out.push(`- …and ${formatCount(rest)} more${where}`);
  }

  // Statistics
  const st = view.statistics;
  out.push("", "### Statistics", "");
  const stats: [string, string][] = [
    ["runtime", now ? formatDuration(st.runtimeMs) : "—"],
    [
      "tasks",
      `${st.tasks.completed} done · ${st.tasks.failed} failed · ${st.tasks.blocked} blocked · ${st.tasks.timeout} timed out · ${st.tasks.needsHuman} need a human · ${st.tasks.remaining} remaining`,
    ],
    [
      "iterations",
      `${st.iterations.total} total · ${st.iterations.average} average` +
        (st.iterations.fastest
          ? ` · fastest #${st.iterations.fastest.issue} (${st.iterations.fastest.iterations})`
          : "") +
        (st.iterations.slowest
          ? ` · slowest #${st.iterations.slowest.issue} (${st.iterations.slowest.iterations})`
          : ""),
    ],
    ["merges", `${st.merges.successful} merged · ${st.merges.pending} pending`],
    ["usage", `${formatTokens(st.tokens.total)} tokens · ${formatUsd(st.costUsd)}`],
  ];
  out.push(
    table(
      ["", ""],
      stats.map(([k, v]) => [`**${k}**`, v]),
    ),
  );

  // Graph
  if (limits.graph > 0 && view.graph.nodes.length > 0) {
    out.push(
      "",
      "<details><summary>Dependency graph</summary>",
      "",
      renderMermaid(view.graph, limits.graph),
      "",
      "</details>",
    );
  }
  out.push("", "<details><summary>Commands</summary>", "", commandHelp(), "", "</details>");
  return out.join("\n");
}

const STATUS_ICON: Record<SessionState["status"], string> = {
  idle: "⚪",
  running: "🟢",
  pausing: "🟡",
  paused: "⏸️",
  stopping: "🟠",
  completed: "✅",
};
const STATUS_WORD: Record<SessionState["status"], string> = {
  idle: "idle",
  running: "running",
  pausing: "pausing",
  paused: "paused",
  stopping: "stopping",
  completed: "done",
};

function taskCell(t: TaskLine): string {
  return `#${t.issue} ${escapeInline(t.title, 60)}`;
}

function runCell(slot: SlotLine): string {
  const phase = slot.phase === "dispatched" ? "dispatched" : slot.phase;
  if (slot.runId === null) return phase;
  return slot.runUrl && /^https:\/\/[^\s)]+$/.test(slot.runUrl)
    ? `[${phase}](${slot.runUrl})`
    : `${phase} (${slot.runId})`;
}

function section<T>(
  out: string[],
  title: string,
  items: readonly T[],
  limit: number,
  line: (item: T) => string,
): void {
  if (items.length === 0) return;
  out.push("", `### ${title} (${formatCount(items.length)})`, "");
  const shown = items.slice(0, limit);
  for (const item of shown) out.push(line(item));
  more(out, items.length - shown.length);
}

function more(out: string[], rest: number): void {
  if (rest > 0) out.push(`- …and ${formatCount(rest)} more`);
}

function cut(markdown: string, max: number): string {
  if (markdown.length <= max) return markdown;
  const lines = markdown.slice(0, max).split("\n");
  lines.pop();
  return `${lines.join("\n")}\n\n…(cut; see the file's error in the controller's log)`;
}

function historyLine(h: HistoryEntry): string {
  const what =
    h.outcome === "done"
      ? h.pr
        ? `merged PR #${h.pr}`
        : "done"
      : h.outcome === "skipped"
        ? "skipped"
        : "closed";
  return (
    `#${h.issue} ${escapeInline(h.title, 60)} — ${what} ${formatTime(h.at)}` +
    (h.iterations ? ` · ${h.iterations} iterations` : "") +
    (h.tokens ? ` · ${formatTokens(h.tokens)} tokens` : "") +
    (h.costUsd ? ` · ${formatUsd(h.costUsd)}` : "")
  );
}

/** The body of a history comment on the tracking issue for a batch of finished tasks. */
export function renderHistoryComment(entries: readonly HistoryEntry[]): string {
  return ["**Autopilot history**", "", ...entries.map((h) => `- ${historyLine(h)}`)].join("\n");
}

function renderMermaid(graph: DashboardView["graph"], limit: number): string {
  const nodes = graph.nodes.slice(0, limit);
  const shown = new Set(nodes.map((n) => n.issue));
  const lines = ["```mermaid", "graph LR"];
  for (const n of nodes) lines.push(`  i${n.issue}["#${n.issue}"]:::${n.status.replace("-", "")}`);
  for (const [from, to] of graph.edges)
    if (shown.has(from) && shown.has(to)) lines.push(`  i${to} --> i${from}`);
  lines.push(
    "  classDef ready fill:#dbeafe",
    "  classDef inprogress fill:#fef3c7",
    "  classDef review fill:#e9d5ff",
    "  classDef done fill:#dcfce7",
    "  classDef blocked fill:#fee2e2",
    "  classDef needshuman fill:#fee2e2",
    "  classDef timeout fill:#fde68a",
    "  classDef failed fill:#fecaca",
    "  classDef waiting fill:#f3f4f6",
    "  classDef skipped fill:#f3f4f6",
    "```",
  );
  if (graph.nodes.length > nodes.length)
    lines.push("", `_Showing ${nodes.length} of ${formatCount(graph.nodes.length)} tasks._`);
  return lines.join("\n");
}

/** Last-resort trimming when the state alone does not fit (the caller's compaction normally suffices). */
function squeezeState(state: DashboardState, round: number): DashboardState {
  const next: DashboardState = {
    ...state,
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

// ---------------------------------------------------------------------------------------------------------
// Compaction: finished tasks leave the state

export interface Compaction {
  state: DashboardState;
  /** Entries to write out as one history comment now (empty when nothing needs to go). */
  flush: HistoryEntry[];
}

/**
 * Moves the pending history out when a batch is full or the state is too big, and trims the bounded lists.
 * The caller posts `flush` as a comment on the tracking issue (`renderHistoryComment`).
 */
/** Task states whose record the state keeps longest when it is trimmed (see compactState). */
const ON_ITS_WAY = new Set(["review", "ready", "in-progress"]);

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
  const tooBig = () => renderStateBlock(next).length > STATE_BUDGET;
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
    let excess = renderStateBlock(next).length - STATE_BUDGET;
    for (const [key] of [...offRamped, ...settled.filter(([, r]) => onItsWay(r))]) {
      if (excess <= 0) break;
      excess -= JSON.stringify(dropDefaults(tasks[key]!)).length + key.length + 4;
      delete tasks[key];
    }
  }
  return { state: next, flush };
}

// ---------------------------------------------------------------------------------------------------------
// Rebuilding the state from GitHub

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

// ---------------------------------------------------------------------------------------------------------

export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** FNV-1a, 32 bits, as 8 hex digits: a cheap change detector (not security). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
