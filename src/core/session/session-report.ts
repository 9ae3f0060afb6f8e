/**
 * The session report (seed 003's "report generator", seed 004's `/autopilot report`): each task's outcome,
 * attempts, iterations, time, tokens and cost, and what waits for whom — posted as a comment on a writer's
 * `/autopilot report` and when a session completes. Pure: the caller gathers what the controller verified and
 * persisted (src/core/reconcile/commands/report-reply.ts) and passes the time in.
 *
 * Every title and reason is untrusted (issue authors, agents): each goes through `escapeInline`. The comment
 * must fit GitHub's 65,536-character body limit at any number of tasks, so the lists are cut to a byte budget
 * and a closing line says how many tasks were left out, by outcome; the totals always count every task.
 */
import { GITHUB_BODY_LIMIT } from "../text/github-body-limit.js";
import {
  escapeInline,
  formatCount,
  formatTime,
  formatTokens,
  formatUsd,
  quietLogin,
  table,
} from "../text/markdown.js";
import type { SessionStatistics } from "./stats.js";
import { formatDuration } from "../time/duration.js";

/** A task's outcome in the report, in the order the report lists them (what needs people first). */
export const REPORT_OUTCOMES = [
  "needs-human",
  "review",
  "blocked",
  "failed",
  "timeout",
  "in-progress",
  "waiting",
  "ready",
  "done",
  "skipped",
  "closed",
] as const;
export type ReportOutcome = (typeof REPORT_OUTCOMES)[number];

/** What one outcome is called in the report. */
const OUTCOME_WORDS: Record<ReportOutcome, string> = {
  "needs-human": "needs a human",
  review: "in review",
  blocked: "blocked",
  failed: "failed",
  timeout: "timed out",
  "in-progress": "in progress",
  waiting: "waiting",
  ready: "queued",
  done: "done",
  skipped: "skipped",
  closed: "closed",
};

/** What a task waits for, and on whom. */
export interface ReportWait {
  /** Who acts next, in Autopilot's own words (trusted: never a title or reason). */
  who: string;
  /** Why, in words that may come from an agent or a person (escaped when rendered). */
  why: string;
  /** Since when, or until when (`until` for a limit's reset). */
  since?: string | null;
  until?: string | null;
}

export interface ReportTask {
  issue: number;
  /** Untrusted: the issue's title. */
  title: string;
  outcome: ReportOutcome;
  /** Worker dispatches made for the task. */
  attempts: number;
  /** Agent iterations of its finished attempts. */
  iterations: number;
  /** From its first dispatch to its end (or to now, while it goes on); null when it never ran. */
  elapsedMs: number | null;
  tokens: number;
  costUsd: number;
  pr: number | null;
  /** What the task waits for; null when nothing (done, or a worker has it). */
  wait: ReportWait | null;
}

export interface SessionReport {
  session: { status: string; since: string; startedAt: string | null };
  /** The dashboard's statistics: every task of the session, the retired ones included. */
  statistics: SessionStatistics;
  /** The open tasks and the finished ones still in the state, in any order (the report sorts them). */
  tasks: ReportTask[];
  /** Finished tasks whose lines went out earlier in the history comments on the tracking issue. */
  inHistoryComments: number;
  /** Finished tasks the history under the report, in the same comment, lists (so the report does not). */
  inHistoryBelow?: number;
  /** Why the report was written: a person's command, or the session's completion. */
  occasion: { kind: "command"; by: string } | { kind: "completed" };
  now: Date;
}

/**
 * What the report is kept under, in UTF-8 bytes (so it holds for characters of any width), well within GitHub's
 * body limit (`GITHUB_BODY_LIMIT`, comments as issues), leaving room for the quoted command line and the hidden
 * key marker that go around it.
 */
export const REPORT_CAP = GITHUB_BODY_LIMIT - 5_536;
/** At most this share of the budget goes to the "waits for" list, so the table of outcomes is never crowded out. */
const WAITS_SHARE = 0.45;

/** The budget left for a report that shares its comment with `text` (the completion notice and history). */
export function reportRoomBeside(text: string): number {
  return Math.max(MIN_REPORT_ROOM, REPORT_CAP - bytes(text));
}
/** A report always gets this much room: its head and a few lines. */
const MIN_REPORT_ROOM = 4_000;

const TITLE_MAX = 80;
const REASON_MAX = 200;

export function renderSessionReport(report: SessionReport, budget = REPORT_CAP): string {
  const tasks = [...report.tasks].sort(
    (a, b) => REPORT_OUTCOMES.indexOf(a.outcome) - REPORT_OUTCOMES.indexOf(b.outcome) || a.issue - b.issue,
  );
  const head = headLines(report);
  const footerReserve = 1_200;
  let room = budget - bytes(head.join("\n")) - footerReserve;

  const waiting = tasks.filter((t) => t.wait !== null);
  const waitLines: string[] = [];
  const waitRoom = Math.floor(room * WAITS_SHARE);
  let used = 0;
  for (const t of waiting) {
    const line = `- ${taskCell(t)} — ${waitText(t)}`;
    const size = bytes(line) + 1;
    if (used + size > waitRoom) break;
    waitLines.push(line);
    used += size;
  }
  room -= used;

  const header = ["task", "outcome", "attempts", "iterations", "time", "tokens", "cost"];
  const align = ["l", "l", "r", "r", "r", "r", "r"];
  const rows: string[][] = [];
  const emptyTable = bytes(table(header, [], align)) + 1;
  used = emptyTable;
  for (const t of tasks) {
    const row = [
      taskCell(t),
      outcomeCell(t),
      formatCount(t.attempts),
      formatCount(t.iterations),
      t.elapsedMs === null ? "—" : formatDuration(t.elapsedMs),
      formatTokens(t.tokens),
      formatUsd(t.costUsd),
    ];
    // A row of the unaligned table is its cells joined by " | " within "| " and " |".
    const size = bytes(row.join(" | ")) + 5;
    if (used + size > room) break;
    rows.push(row);
    used += size;
  }

  const out = [...head];
  if (waiting.length > 0) {
    out.push("", "### What waits for whom", "", ...waitLines);
    if (waitLines.length < waiting.length)
      out.push(`- _… and ${formatCount(waiting.length - waitLines.length)} more: see the dashboard._`);
  }
  out.push("", "### Tasks", "");
  if (tasks.length === 0) out.push("_No task in this session yet._");
  else out.push(table(header, rows, align));
  const left = tasks.slice(rows.length);
  if (left.length > 0)
    out.push(
      "",
      `_${formatCount(left.length)} more ${left.length === 1 ? "task is" : "tasks are"} not listed to keep this comment within GitHub's size limit (${countsByOutcome(left)}); the totals above count them, and the dashboard lists every open task._`,
    );
  const below = report.inHistoryBelow ?? 0;
  if (below > 0)
    out.push(
      "",
      `_${formatCount(below)} finished ${below === 1 ? "task is" : "tasks are"} listed in the history below; the totals above count ${below === 1 ? "it" : "them"}._`,
    );
  if (report.inHistoryComments > 0)
    out.push(
      "",
      `_${formatCount(report.inHistoryComments)} finished ${report.inHistoryComments === 1 ? "task was" : "tasks were"} listed earlier in the history comments on the tracking issue; the totals above count them._`,
    );
  return out.join("\n");
}

function headLines(report: SessionReport): string[] {
  const { session, statistics: st } = report;
  const why =
    report.occasion.kind === "completed"
      ? "The session completed."
      : `Asked for by ${quietLogin(report.occasion.by)}.`;
  const counts = [
    [st.tasks.completed, "done"],
    [st.tasks.review, "in review"],
    [st.tasks.inProgress, "in progress"],
    [st.tasks.ready, "queued"],
    [st.tasks.needsHuman, "need a human"],
    [st.tasks.blocked, "blocked"],
    [st.tasks.failed, "failed"],
    [st.tasks.timeout, "timed out"],
    [st.tasks.skipped, "skipped"],
  ] as const;
  const parts = counts.filter(([n]) => n > 0).map(([n, word]) => `${formatCount(n)} ${word}`);
  return [
    "## Autopilot session report",
    "",
    `${why} Session **${session.status}** since ${formatTime(session.since)}${session.startedAt ? `, started ${formatTime(session.startedAt)}` : ""}; runtime ${formatDuration(st.runtimeMs)} (as of ${formatTime(report.now.toISOString())}).`,
    "",
    `**Tasks:** ${formatCount(st.tasks.total)}${parts.length > 0 ? ` — ${parts.join(", ")}` : ""}. ` +
      `**Iterations:** ${formatCount(st.iterations.total)}. **Merged:** ${formatCount(st.merges.successful)}. ` +
      `**Tokens:** ${formatTokens(st.tokens.total)}. **Cost:** ${formatUsd(st.costUsd)}.`,
  ];
}

function taskCell(t: ReportTask): string {
  return `#${t.issue} ${escapeInline(t.title, TITLE_MAX)}`;
}

function outcomeCell(t: ReportTask): string {
  return `${OUTCOME_WORDS[t.outcome]}${t.pr ? ` (PR #${t.pr})` : ""}`;
}

function waitText(t: ReportTask): string {
  const w = t.wait!;
  const when = w.until ? ` until ${formatTime(w.until)}` : w.since ? ` since ${formatTime(w.since)}` : "";
  return `${OUTCOME_WORDS[t.outcome]}${t.pr ? ` (PR #${t.pr})` : ""}: waits for ${w.who}${when} — ${escapeInline(w.why, REASON_MAX)}`;
}

function countsByOutcome(tasks: readonly ReportTask[]): string {
  const counts = new Map<ReportOutcome, number>();
  for (const t of tasks) counts.set(t.outcome, (counts.get(t.outcome) ?? 0) + 1);
  return REPORT_OUTCOMES.filter((o) => counts.has(o))
    .map((o) => `${formatCount(counts.get(o)!)} ${OUTCOME_WORDS[o]}`)
    .join(", ");
}

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
