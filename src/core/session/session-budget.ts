/**
 * The session budget counts running work. The controller adds what live workers have reported so far (their
 * `running` result markers) to what finished work used, and publishes what is left in a marker on the tracking
 * issue, next to the session-status marker:
 *
 *   <!-- autopilot:session-budget {"tokensLeft":1200,"usdLeft":0.4,"counted":{"7":{"tokens":300,"usd":0.1}}} -->
 *
 * `counted` is, per issue, the worker's own running totals that the controller already took off. A worker at
 * its iteration boundary takes off what it has used since (its totals now minus `counted`), and stops when
 * nothing is left: so a session stops within one iteration of crossing its budget, even before the controller
 * runs again. The controller also pauses the session when the running totals cross it.
 */
import { z } from "zod";
import type { WorkerResult } from "../tasks/worker-result.js";

interface Usage {
  tokens: number;
  usd: number;
}

const UsageSchema = z.object({ tokens: z.number().nonnegative(), usd: z.number().nonnegative() });

const SessionBudgetMarkerSchema = z.object({
  tokensLeft: z.number().nullable(),
  usdLeft: z.number().nullable(),
  counted: z.record(z.string().regex(/^\d{1,10}$/), UsageSchema).default({}),
});
type SessionBudgetMarker = z.infer<typeof SessionBudgetMarkerSchema>;

const MARKER = /<!-- autopilot:session-budget (\{[^\n]*?\}) -->/;

interface SessionSpend {
  /** Finished work plus what running workers reported beyond it. */
  total: Usage;
  /** Per issue with a running worker: that worker's totals (what the worker compares against). */
  counted: Record<string, Usage>;
}

interface Spent {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
}

/**
 * What the spend is counted from: the dashboard state's history and task records (src/core/dashboard/
 * dashboard-state.ts `DashboardState` has this shape; named here so the session topic does not import the
 * dashboard, which imports it).
 */
interface SpendRecords {
  history: Spent;
  tasks: Record<
    string,
    Spent & { dispatchId?: string | null | undefined; handled?: string | null | undefined }
  >;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * What the session has used: finished work (the history and each task's record) plus, for each task with a
 * running worker of its live dispatch, what that worker reported beyond the task's record. A worker's totals
 * include its task's earlier attempts, which the record already holds: only the difference is new.
 */
export function sessionSpend(state: SpendRecords, results: Iterable<WorkerResult>): SessionSpend {
  let tokens = state.history.tokensIn + state.history.tokensOut;
  let usd = state.history.costUsd;
  for (const record of Object.values(state.tasks)) {
    tokens += record.tokensIn + record.tokensOut;
    usd += record.costUsd;
  }
  const counted: Record<string, Usage> = {};
  for (const result of results) {
    const record = state.tasks[result.issue];
    if (result.status !== "running" || !record || record.dispatchId !== result.dispatchId) continue;
    const reported = { tokens: result.tokens.input + result.tokens.output, usd: result.costUsd };
    tokens += Math.max(0, reported.tokens - (record.tokensIn + record.tokensOut));
    usd += Math.max(0, reported.usd - record.costUsd);
    counted[String(result.issue)] = { tokens: reported.tokens, usd: round6(reported.usd) };
  }
  // A dispatch whose worker has reported nothing yet: its worker starts from the task's earlier attempts'
  // totals (src/worker/job/claim.ts), which the record already counts. Without this entry it would take them off
  // what is left a second time, find the session spent, end `paused` and be dispatched again, round and round.
  for (const [issue, record] of Object.entries(state.tasks)) {
    if (counted[issue] || !record.dispatchId || record.handled === record.dispatchId) continue;
    const tokens = record.tokensIn + record.tokensOut;
    if (tokens > 0 || record.costUsd > 0) counted[issue] = { tokens, usd: round6(record.costUsd) };
  }
  return { total: { tokens, usd: round6(usd) }, counted };
}

/** Why the session is over its budget, or null. */
export function sessionOverBudget(
  budget: { tokens: number | null; usd: number | null },
  used: Usage,
): string | null {
  if (budget.tokens !== null && used.tokens >= budget.tokens)
    return `${used.tokens} tokens used (budgets.session.tokens ${budget.tokens})`;
  if (budget.usd !== null && used.usd >= budget.usd)
    return `$${used.usd.toFixed(2)} spent (budgets.session.usd $${budget.usd})`;
  return null;
}

/** The marker for the tracking issue; null when the session has no budget. */
export function renderSessionBudgetMarker(
  budget: { tokens: number | null; usd: number | null },
  spend: SessionSpend,
): string | null {
  if (budget.tokens === null && budget.usd === null) return null;
  const marker: SessionBudgetMarker = {
    tokensLeft: budget.tokens === null ? null : budget.tokens - spend.total.tokens,
    usdLeft: budget.usd === null ? null : round6(budget.usd - spend.total.usd),
    counted: spend.counted,
  };
  return `<!-- autopilot:session-budget ${JSON.stringify(marker)} -->`;
}

/** The marker in a tracking issue's body; null when absent or unreadable (which never stops a worker). */
export function parseSessionBudgetMarker(body: string | null | undefined): SessionBudgetMarker | null {
  const match = body ? MARKER.exec(body) : null;
  if (!match) return null;
  try {
    const parsed = SessionBudgetMarkerSchema.safeParse(JSON.parse(match[1]!));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * For a worker at its iteration boundary: why the session's budget is spent, counting what this worker used
 * since the controller last counted it, or null when some is left.
 */
export function workerSessionBudgetStop(
  marker: SessionBudgetMarker,
  issue: number,
  mine: Usage,
): string | null {
  const left = workerSessionBudgetLeft(marker, issue, mine);
  if (left.tokens !== null && left.tokens <= 0)
    return `the session's token budget is spent (${left.tokens} tokens left)`;
  if (left.usd !== null && left.usd <= 0)
    return `the session's USD budget is spent ($${left.usd.toFixed(2)} left)`;
  return null;
}

/**
 * What the session's budget has left as a worker sees it: the marker's figures less what this worker used since
 * the controller last counted it (null: the session sets no such budget).
 */
export function workerSessionBudgetLeft(
  marker: SessionBudgetMarker,
  issue: number,
  mine: Usage,
): { tokens: number | null; usd: number | null } {
  const counted = marker.counted[String(issue)] ?? { tokens: 0, usd: 0 };
  return {
    tokens: marker.tokensLeft === null ? null : marker.tokensLeft - Math.max(0, mine.tokens - counted.tokens),
    usd: marker.usdLeft === null ? null : marker.usdLeft - Math.max(0, mine.usd - counted.usd),
  };
}
