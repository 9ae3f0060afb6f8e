/**
 * The session report's facts, gathered from what this reconcile decided and the state it persists: the open
 * tasks' labels (as this reconcile leaves them), their records (attempts, iterations, tokens and cost of
 * finished attempts, reasons, waits), the dashboard's lists (review, off-ramps, waits, not in the pool, the
 * command it waits for) and the finished tasks still in the pending history. Rendered by
 * src/core/session/session-report.ts.
 */
import type { DashboardView, ReasonLine } from "../../dashboard/index.js";
import {
  REPORT_CAP,
  renderSessionReport,
  type ReportOutcome,
  type ReportTask,
  type ReportWait,
  type SessionReport,
} from "../../session/session-report.js";
import { blockedNextStep, needsHumanNextStep } from "../../session/alerts.js";
import type { Reconciling } from "../context.js";
import { openTasks } from "../open-tasks.js";

/**
 * What a task waiting for a time waits for, by the worker's outcome that set the wait
 * (src/core/reconcile/runs/worker-outcomes.ts): a limit's reset, or the retry backoff of a failed attempt.
 */
const TIME_WAIT_WORDS: Record<string, string> = {
  rate_limited: "the agent's rate limit to reset",
  usage_limited: "the agent's usage limit to reset",
  // A failed attempt's retry: nothing resets then, and only more credits (a person) end an exhausted quota.
  quota: "its retry backoff (the agent's quota or credits had run out: a person may have to add some)",
};

function sessionReport(
  ctx: Reconciling,
  view: DashboardView,
  occasion: SessionReport["occasion"],
  historyBelow: ReadonlySet<number>,
): SessionReport {
  const tasks: ReportTask[] = [];
  const open = new Set<number>();
  const lines = new Map<number, ReasonLine>();
  for (const list of [view.review, view.needsHuman, view.blocked, view.timeouts, view.failed])
    for (const line of list) lines.set(line.issue, line);
  const waits = new Map(view.waiting.map((w) => [w.issue, w]));
  const strangers = new Map(view.notInPool.map((w) => [w.issue, w]));

  for (const { n, issue, status, record } of openTasks(ctx)) {
    open.add(n);
    const stranger = status === "ready" ? strangers.get(n) : undefined;
    const waiting = status === "ready" ? (waits.get(n) ?? stranger) : undefined;
    const outcome: ReportOutcome = waiting ? "waiting" : status;
    const end = outcome === "blocked" || outcome === "failed" || outcome === "timeout" ? record?.since : null;
    tasks.push({
      issue: n,
      title: issue.title,
      outcome,
      attempts: record?.attempt ?? 0,
      iterations: record?.iterations ?? 0,
      elapsedMs: elapsed(record?.startedAt, end ?? ctx.now.toISOString()),
      tokens: (record?.tokensIn ?? 0) + (record?.tokensOut ?? 0),
      costUsd: record?.costUsd ?? 0,
      pr: record?.pr ?? lines.get(n)?.pr ?? null,
      wait: stranger
        ? {
            who: `someone with write access to label it \`${ctx.config.labels.ready}\` (not in the pool)`,
            why: stranger.reason,
          }
        : waitOf(ctx, view, n, outcome, lines.get(n) ?? waiting ?? null),
    });
  }

  // Finished tasks still in the state, newest line per issue (an issue reopened since is listed as open). Those
  // the history in the same comment lists are counted, not listed twice.
  const finished = new Map(ctx.state.pendingHistory.map((h) => [h.issue, h]));
  let inHistoryBelow = 0;
  for (const h of finished.values()) {
    if (open.has(h.issue)) continue;
    if (historyBelow.has(h.issue)) {
      inHistoryBelow += 1;
      continue;
    }
    tasks.push({
      issue: h.issue,
      title: h.title,
      outcome: h.outcome,
      attempts: h.attempts,
      iterations: h.iterations,
      elapsedMs: elapsed(h.startedAt, h.at),
      tokens: h.tokens,
      costUsd: h.costUsd,
      pr: h.pr ?? null,
      wait: null,
    });
  }

  const history = ctx.state.history;
  const retired = history.completed + history.skipped + history.closed;
  return {
    session: {
      status: ctx.state.session.status,
      since: ctx.state.session.since,
      startedAt: ctx.state.session.startedAt,
    },
    statistics: view.statistics,
    tasks,
    inHistoryComments: Math.max(0, retired - ctx.state.pendingHistory.length),
    inHistoryBelow,
    occasion,
    now: ctx.now,
  };
}

/**
 * The report as Markdown, within `budget` UTF-8 bytes. `historyBelow`: the finished tasks a history block in the
 * same comment lists (the completion comment), counted in the report rather than listed again.
 */
export function reportText(
  ctx: Reconciling,
  view: DashboardView,
  occasion: SessionReport["occasion"],
  budget = REPORT_CAP,
  historyBelow: ReadonlySet<number> = new Set(),
): string {
  return renderSessionReport(sessionReport(ctx, view, occasion, historyBelow), budget);
}

function waitOf(
  ctx: Reconciling,
  view: DashboardView,
  n: number,
  outcome: ReportOutcome,
  line: ReasonLine | null,
): ReportWait | null {
  const record = ctx.state.tasks[n];
  const reason = line?.reason ?? record?.reason ?? "no reason given";
  const since = line?.since ?? record?.since ?? null;
  switch (outcome) {
    case "needs-human":
      return { who: `someone with write access to ${needsHumanNextStep(n)}`, why: reason, since };
    case "review":
      return { who: "its pull request's gates", why: reason };
    case "blocked":
      return {
        who: `someone with write access to ${blockedNextStep(n)}`,
        why: reason,
        since,
      };
    case "failed":
    case "timeout":
      return {
        who: `someone with write access: \`/autopilot retry #${n}\` or \`skip #${n}\``,
        why: reason,
        since,
      };
    case "waiting": {
      const until = record?.waitUntil;
      if (until && Date.parse(until) > ctx.nowMs) {
        const words = TIME_WAIT_WORDS[record?.result ?? ""];
        return { who: words ?? "its retry backoff", why: record?.reason ?? "backoff", until };
      }
      return {
        who: line?.code === "dependencies" ? "the tasks it depends on" : "someone with write access",
        why: reason,
      };
    }
    case "ready": {
      // Queued while nothing starts without a person's command (session.autoStart false, or semi-auto).
      const a = view.awaiting;
      if (!a) return null;
      return a.command === "start"
        ? { who: "someone with write access: `/autopilot start`", why: a.why }
        : {
            who: `someone with write access: \`/autopilot run #${n}\``,
            why: "semi-auto: Autopilot starts nothing by itself",
          };
    }
    default:
      return null;
  }
}

function elapsed(from: string | null | undefined, to: string): number | null {
  const start = from ? Date.parse(from) : Number.NaN;
  const end = Date.parse(to);
  if (Number.isNaN(start) || Number.isNaN(end)) return null;
  return Math.max(0, end - start);
}
