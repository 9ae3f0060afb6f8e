/** The part of the tracking issue people read: session, progress, slots, queue, off-ramps, history, graph. */
import { commandHelp } from "../tasks/commands.js";
import {
  escapeInline,
  formatCount,
  formatTime,
  formatTokens,
  formatUsd,
  progressBar,
  quietLogin,
  table,
} from "../text/markdown.js";
import { describeReason, type SessionState } from "../session/session.js";
import { formatDuration } from "../time/duration.js";
import { OPEN_NETWORK_ACCESS, weakerIsolationText } from "../tasks/worker-result.js";
import { type DashboardState, type HistoryEntry, TRACKING_MARKER } from "./dashboard-state.js";
import type { DashboardView, ReasonLine, SlotLine, TaskLine } from "./dashboard-view.js";
import type { SessionBox } from "./state-block.js";
import { counted } from "../text/plural.js";
import { blockedNextStep, needsHumanNextStep } from "../session/alerts.js";

/** How many entries each part of the dashboard shows (the renderer shrinks them until the body fits). */
export interface Limits {
  list: number;
  queue: number;
  graph: number;
  done: number;
  incidents: number;
  configChars: number;
}

/** What every section renders from: the state, the view, the time (null for the digest) and the list sizes. */
interface Page {
  state: DashboardState;
  view: DashboardView;
  now: Date | null;
  limits: Limits;
}

/** One section of the dashboard: its Markdown, or null when it has nothing to show. */
type Section = (page: Page) => string | null;

/** The visible dashboard: every section that has something to show, in order, a blank line apart. */
export function renderVisible(
  state: DashboardState,
  view: DashboardView,
  now: Date | null,
  limits: Limits,
): string {
  const page: Page = { state, view, now, limits };
  return SECTIONS.map((section) => section(page))
    .filter((markdown): markdown is string => markdown !== null)
    .join("\n\n");
}

/** The hidden markers: the tracking issue's, the session status, and the session budget workers read. */
function markers({ state, view }: Page): string {
  const lines = [TRACKING_MARKER, `<!-- autopilot:session ${state.session.status} -->`];
  if (view.budget?.marker) lines.push(view.budget.marker);
  return lines.join("\n");
}

/**
 * The session's controls (000 §4.2's pause, resume and stop): a writer who ticks one acts as with the command
 * (src/core/reconcile/commands/checkboxes.ts); the rewrite unticks it. Only the boxes the status allows.
 */
function sessionControls({ state }: Page): string | null {
  const box = (action: SessionBox, words: string) => `- [ ] <!-- autopilot:session-${action} --> ${words}`;
  const status = state.session.status;
  const pause = box(
    "pause",
    "**pause**: start no task; running workers stop at their next iteration boundary",
  );
  const resume = box("resume", status === "pausing" ? "**resume**: cancel the pause" : "**resume**");
  const stop = box("stop", "**stop**: end the session once running workers have stopped");
  if (status === "running") return [pause, stop].join("\n");
  if (status === "pausing" || status === "paused") return [resume, stop].join("\n");
  return null;
}

function heading({ state }: Page): string {
  const status = state.session.status;
  return `## ${STATUS_ICON[status]} Autopilot is ${STATUS_WORD[status]}`;
}

function session({ state, view }: Page): string {
  const s = state.session;
  const who = s.actor && s.actor !== "autopilot" ? ` by ${quietLogin(s.actor)}` : "";
  return (
    `**Session:** ${s.status} since ${formatTime(s.since)}${who} — ${escapeInline(describeReason(s.reason))}` +
    (s.detail ? ` (${escapeInline(s.detail, 300)})` : "") +
    (view.dryRun ? " · **dry run**: Autopilot decides and reports but changes nothing on GitHub" : "")
  );
}

function agentAccess({ view }: Page): string | null {
  const access = view.weakIsolation ? weakerIsolationText(view.weakIsolation) : undefined;
  return access ? `**Agent access:** ${escapeInline(access)}` : null;
}

function agentNetwork({ view }: Page): string | null {
  return view.openNetwork ? `**Agent network:** ${escapeInline(OPEN_NETWORK_ACCESS)}` : null;
}

function githubLimitWait({ view }: Page): string | null {
  if (!view.githubLimitSince) return null;
  return (
    `> ⏳ Waiting for GitHub's secondary rate limit (content creation) since ${formatTime(view.githubLimitSince.toISOString())}: ` +
    "Autopilot's writes to this repository pause and go out once it lifts, none twice."
  );
}

/** The command nothing starts without (`view.awaiting`): what it waits for, who may give it, and for which task. */
function awaitedCommand({ view }: Page): string | null {
  const a = view.awaiting;
  if (!a) return null;
  if (a.command === "start") {
    const tasks = a.ready === 1 ? "1 ready task waits" : `${formatCount(a.ready)} ready tasks wait`;
    return (
      `> ⏸️ **Waiting for \`/autopilot start\`:** ${tasks}; ${escapeInline(a.why)}. ` +
      "Somebody with write access comments `/autopilot start` on this issue to start the session."
    );
  }
  if (!a.next) {
    const waits = view.waiting.length > 0 ? " (the tasks under Waiting are not ready yet)" : "";
    return (
      `> 👉 **Semi-auto:** no task is ready to run${waits}. Autopilot starts nothing by itself: ` +
      "once one is, somebody with write access starts it with `/autopilot run #N`."
    );
  }
  const next = a.next;
  const slot =
    a.freeSlots > 0 ? "" : ` All ${view.maxParallel} slots are busy: it can start once one is free.`;
  return (
    `> 👉 **Semi-auto — next: ${taskCell(next)}** (score ${next.score}: ${escapeInline(next.why, 160)}). ` +
    `Waiting for \`/autopilot run #${next.issue}\` from somebody with write access` +
    (view.queue.length > 1 ? " (or `/autopilot run #N` for another task of the queue)" : "") +
    `; Autopilot starts nothing by itself.${slot}`
  );
}

/** Every agent was limited (src/core/reconcile/task-alerts.ts): no dispatch before the earliest reset. */
function agentsLimited({ state, now }: Page): string | null {
  const until = state.agentsLimitedUntil;
  if (!until || (now && Date.parse(until) <= now.getTime())) return null;
  return (
    `> ⏸️ **Every agent is limited**: no task is dispatched until ${formatTime(until)} (the earliest reset ` +
    "reported); running workers go on and the queue waits."
  );
}

function progress({ view }: Page): string {
  const p = view.progress;
  const parts = [
    `${formatCount(p.done)} of ${counted(p.total, "task")} done`,
    `${view.slots.length} running`,
    `${formatCount(view.queue.length)} queued`,
    view.review.length ? `${view.review.length} in review` : "",
    view.needsHuman.length ? `${view.needsHuman.length} need a human` : "",
    view.blocked.length ? `${view.blocked.length} blocked` : "",
    view.failed.length ? `${view.failed.length} failed` : "",
  ].filter(Boolean);
  return `**Progress:** \`${progressBar(p.done, p.total)}\` · ${parts.join(" · ")}`;
}

function budgetNotes({ view }: Page): string | null {
  const notes = view.budget?.notes ?? [];
  return notes.length > 0 ? notes.map((note) => `> ⚠️ ${escapeInline(note, 300)}`).join("\n\n") : null;
}

function configProblems({ view, limits }: Page): string | null {
  if (!view.configProblems) return null;
  return `${cut(view.configProblems, limits.configChars)}\n\n${configFallbackLine(view.configFallback)}`;
}

function incidents({ state, limits }: Page): string | null {
  if (state.incidents.length === 0 || limits.incidents <= 0) return null;
  const shown = state.incidents.slice(-limits.incidents).reverse();
  return [
    "> [!WARNING]",
    ...shown.map((incident) => `> ${formatTime(incident.at)}: ${escapeInline(incident.message, 300)}`),
  ].join("\n");
}

function running({ view, now }: Page): string {
  const title = `### Running (${view.slots.length} of ${view.maxParallel} slots)`;
  if (view.slots.length === 0) return `${title}\n\n_No worker is running._`;
  const rows = view.slots.map((slot) => [
    taskCell(slot),
    slot.candidate ? `${slot.attempt} (${escapeInline(slot.candidate, 100)})` : String(slot.attempt),
    slot.iteration === null ? "—" : `${slot.iteration}/${slot.maxIterations ?? view.maxIterations}`,
    now && slot.startedAt ? formatDuration(now.getTime() - Date.parse(slot.startedAt)) : "—",
    agentCell(slot),
    runCell(slot),
  ]);
  return `${title}\n\n${table(["task", "attempt", "iteration", "elapsed", "agent", "run"], rows)}`;
}

/** The agent the worker reports, and why it fell back from the primary (000 §3.2's activeAgent, fallbackReason). */
function agentCell(slot: SlotLine): string {
  if (!slot.agent) return "—";
  const agent = escapeInline(slot.agent, 80);
  return slot.fallback ? `${agent} (fell back: ${escapeInline(slot.fallback, 160)})` : agent;
}

function queue({ view, limits }: Page): string {
  const title = `### Queue (${formatCount(view.queue.length)})`;
  if (view.queue.length === 0) return `${title}\n\n_Nothing is ready._`;
  const shown = view.queue.slice(0, limits.queue);
  const rows = shown.map((q, i) => [String(i + 1), taskCell(q), String(q.score), escapeInline(q.why, 160)]);
  return withMore(
    `${title}\n\n${table(["#", "task", "score", "why"], rows)}`,
    view.queue.length - shown.length,
  );
}

function waiting({ view, limits }: Page): string | null {
  return list(
    "Waiting",
    view.waiting,
    limits.list,
    (w) => `- ${taskCell(w)} — ${escapeInline(w.reason, 200)}`,
  );
}

function inReview({ view, limits }: Page): string | null {
  return list(
    "In review",
    view.review,
    limits.list,
    (r) => `- ${taskCell(r)}${r.pr ? ` · PR #${r.pr}` : ""} — ${escapeInline(r.reason, 300)}`,
  );
}

function needsHuman({ view, limits }: Page): string | null {
  return list("Needs a human", view.needsHuman, limits.list, (r) =>
    [
      `- [ ] <!-- autopilot:retry #${r.issue} --> retry #${r.issue} — ${escapeInline(r.title, 80)}: ${escapeInline(r.reason, 300)} _(${r.since ? `asked ${formatTime(r.since)}; ` : ""}${needsHumanNextStep(r.issue)})_`,
      `  - [ ] <!-- autopilot:skip #${r.issue} --> skip #${r.issue}`,
    ].join("\n"),
  );
}

/**
 * A list of stopped tasks, each with the retry and skip boxes a person ticks; `nextStep` names what comes before
 * the retry in the words the task's alert and the session report use (src/core/session/alerts.ts).
 */
function stopped(
  title: string,
  tasks: (view: DashboardView) => readonly ReasonLine[],
  nextStep?: (issue: number) => string,
): Section {
  return ({ view, limits }) =>
    list(title, tasks(view), limits.list, (r) =>
      [
        `- [ ] <!-- autopilot:retry #${r.issue} --> retry #${r.issue} — ${escapeInline(r.title, 80)}: ${escapeInline(r.reason, 300)}${nextStep ? ` _(${nextStep(r.issue)})_` : ""}`,
        `  - [ ] <!-- autopilot:skip #${r.issue} --> skip #${r.issue}`,
      ].join("\n"),
    );
}

const blocked = stopped("Blocked", (view) => view.blocked, blockedNextStep);
const timedOut = stopped("Timed out", (view) => view.timeouts);
const failed = stopped("Failed", (view) => view.failed);

function notInPool({ view, limits }: Page): string | null {
  return list(
    "Not in the pool",
    view.notInPool,
    limits.list,
    (r) => `- ${taskCell(r)} — ${escapeInline(r.reason, 200)}`,
  );
}

function epics({ view, limits }: Page): string | null {
  return list(
    "Epics",
    view.epics ?? [],
    limits.list,
    (r) => `- ${taskCell(r)} — ${escapeInline(r.reason, 300)}`,
  );
}

function dependencyCycles({ view, limits }: Page): string | null {
  if (view.cycles.length === 0) return null;
  const lines = [
    `### Dependency cycles (${view.cycles.length})`,
    "",
    "These issues wait on each other; the other tasks go on.",
    "",
  ];
  for (const cycle of view.cycles.slice(0, Math.max(1, limits.list))) {
    const shown = cycle.slice(0, 20).map((n) => `#${n}`);
    lines.push(`- ${shown.join(" → ")}${cycle.length > 20 ? " → …" : ""} → #${cycle[0]}`);
  }
  return withMore(lines.join("\n"), view.cycles.length - Math.max(1, limits.list));
}

function finished({ state, limits }: Page): string | null {
  const doneTotal = state.history.completed + state.history.skipped + state.history.closed;
  if (doneTotal === 0) return null;
  const lines = [`### Finished (${formatCount(doneTotal)})`, ""];
  const recent = [...state.pendingHistory].reverse().slice(0, limits.done);
  for (const h of recent) lines.push(`- ${historyLine(h)}`);
  const rest = doneTotal - recent.length;
  const where = state.history.comments > 0 ? " (listed in the history comments below)" : "";
  if (rest > 0 && recent.length === 0) lines.push(`- ${counted(rest, "task")}${where}`);
  else if (rest > 0) lines.push(`- …and ${formatCount(rest)} more${where}`);
  return lines.join("\n");
}

function statistics({ view, now }: Page): string {
  const st = view.statistics;
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
  return `### Statistics\n\n${table(
    ["Figure", "This session"],
    stats.map(([k, v]) => [`**${k}**`, v]),
  )}`;
}

function dependencyGraph({ view, limits }: Page): string | null {
  if (limits.graph <= 0 || view.graph.nodes.length === 0) return null;
  return details("Dependency graph", renderMermaid(view.graph, limits.graph));
}

function commands(): string {
  return details("Commands", commandHelp());
}

/** The dashboard, top to bottom. */
const SECTIONS: readonly Section[] = [
  markers,
  heading,
  session,
  sessionControls,
  agentAccess,
  agentNetwork,
  githubLimitWait,
  agentsLimited,
  awaitedCommand,
  progress,
  budgetNotes,
  configProblems,
  incidents,
  running,
  queue,
  waiting,
  epics,
  inReview,
  needsHuman,
  blocked,
  timedOut,
  failed,
  notInPool,
  dependencyCycles,
  finished,
  statistics,
  dependencyGraph,
  commands,
];

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

/** A titled list of the first `limit` items, with how many more there are; null when it is empty. */
function list<T>(
  title: string,
  items: readonly T[],
  limit: number,
  line: (item: T) => string,
): string | null {
  if (items.length === 0) return null;
  const shown = items.slice(0, limit);
  return withMore(
    [`### ${title} (${formatCount(items.length)})`, "", ...shown.map(line)].join("\n"),
    items.length - shown.length,
  );
}

/** `markdown` with a last line saying how many more there are, when there are. */
function withMore(markdown: string, rest: number): string {
  return rest > 0 ? `${markdown}\n- …and ${formatCount(rest)} more` : markdown;
}

/** A collapsed block. */
function details(summary: string, markdown: string): string {
  return `<details><summary>${summary}</summary>\n\n${markdown}\n\n</details>`;
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
    (h.iterations ? ` · ${counted(h.iterations, "iteration")}` : "") +
    (h.tokens ? ` · ${formatTokens(h.tokens)} tokens` : "") +
    (h.costUsd ? ` · ${formatUsd(h.costUsd)}` : "") +
    (h.reviewUsd ? ` (the reviewer's share ${formatUsd(h.reviewUsd)})` : "")
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
    lines.push("", `_Showing ${nodes.length} of ${counted(graph.nodes.length, "task")}._`);
  return lines.join("\n");
}

/** What Autopilot does while the configuration file is bad. */
function configFallbackLine(fallback: DashboardView["configFallback"]): string {
  if (fallback?.held) {
    return "**Autopilot waits for a fix:** there is no earlier valid configuration to fall back on, so it starts no task and merges nothing until the file is fixed (commands are still answered).";
  }
  const from = fallback?.commit ? ` (from commit \`${fallback.commit.slice(0, 7)}\`)` : "";
  return `_Autopilot keeps using the last valid configuration${from} until the file is fixed; workers run with it too._`;
}
