/** The part of the tracking issue people read: session, progress, slots, queue, off-ramps, history, graph. */
import { commandHelp } from "../commands.js";
import {
  escapeInline,
  formatCount,
  formatTime,
  formatTokens,
  formatUsd,
  progressBar,
  quietLogin,
  table,
} from "../markdown.js";
import { describeReason, type SessionState } from "../session.js";
import { formatDuration } from "../stats.js";
import { weakerIsolationText } from "../worker-result.js";
import { type DashboardState, type HistoryEntry, TRACKING_MARKER } from "./dashboard-state.js";
import type { DashboardView, SlotLine, TaskLine } from "./dashboard-view.js";

/** How many entries each part of the dashboard shows (the renderer shrinks them until the body fits). */
export interface Limits {
  list: number;
  queue: number;
  graph: number;
  done: number;
  incidents: number;
  configChars: number;
}

export function renderVisible(
  state: DashboardState,
  view: DashboardView,
  now: Date | null,
  limits: Limits,
): string {
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
  const access = view.weakIsolation ? weakerIsolationText(view.weakIsolation) : undefined;
  if (access) out.push("", `**Agent access:** ${escapeInline(access)}`);
  if (view.githubLimitSince) {
    out.push(
      "",
      `> ⏳ Waiting for GitHub's secondary rate limit (content creation) since ${formatTime(view.githubLimitSince.toISOString())}: ` +
        "Autopilot's writes to this repository pause and go out once it lifts, none twice.",
    );
  }
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
    out.push("", cut(view.configProblems, limits.configChars), "", configFallbackLine(view.configFallback));
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

/** What Autopilot does while the configuration file is bad. */
function configFallbackLine(fallback: DashboardView["configFallback"]): string {
  if (fallback?.held) {
    return "**Autopilot waits for a fix:** there is no earlier valid configuration to fall back on, so it starts no task and merges nothing until the file is fixed (commands are still answered).";
  }
  const from = fallback?.commit ? ` (from commit \`${fallback.commit.slice(0, 7)}\`)` : "";
  return `_Autopilot keeps using the last valid configuration${from} until the file is fixed; workers run with it too._`;
}
