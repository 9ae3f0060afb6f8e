/**
 * Reads the session status from the tracking issue's body, loosely: the controller owns the schema of the
 * `<!-- autopilot:state v1 … -->` block, and the worker only needs to know whether to stop at this iteration
 * boundary. A body it cannot read never stops the worker.
 */

import { parseDashboard } from "../../core/dashboard/index.js";
import {
  parseSessionBudgetMarker,
  workerSessionBudgetLeft,
  workerSessionBudgetStop,
} from "../../core/session/session-budget.js";

/** Session statuses at which a running worker checkpoints and ends with `paused`. */
const STOP_STATUSES = new Set(["pausing", "paused", "stopping", "idle"]);

const STATE_BLOCK = /<!--\s*autopilot:state\s+v1\b([\s\S]*?)-->/;

export function readSessionStatus(body: string | null | undefined): string | null {
  if (!body) return null;
  const parsed = parseDashboard(body);
  if (parsed.state) return parsed.state.session.status;
  // A state block this version cannot validate (a newer controller, a damaged block): read it loosely.
  const block = STATE_BLOCK.exec(body);
  if (!block) return null;
  const text = block[1]!.trim();
  try {
    const json: unknown = JSON.parse(text);
    if (json && typeof json === "object") {
      const record = json as Record<string, unknown>;
      if (typeof record.status === "string") return record.status;
      const session = record.session;
      if (
        session &&
        typeof session === "object" &&
        typeof (session as Record<string, unknown>).status === "string"
      ) {
        return (session as Record<string, unknown>).status as string;
      }
    }
  } catch {
    /* fall through to the loose reading */
  }
  const loose = /"status"\s*:\s*"([a-z_-]+)"/i.exec(text);
  return loose ? loose[1]!.toLowerCase() : parsed.visibleStatus;
}

/** What this worker's job has used so far, to weigh against the session budget the controller published. */
interface WorkerSpend {
  issue: number;
  tokens: number;
  usd: number;
}

/**
 * True when the worker should checkpoint and end: the session is pausing, paused, stopping or idle — or, given
 * the worker's own spend, the session budget on the tracking issue is spent (`status` then says why).
 */
export function sessionWantsStop(
  body: string | null | undefined,
  mine?: WorkerSpend,
): { stop: boolean; status: string | null } {
  const status = readSessionStatus(body);
  if (status !== null && STOP_STATUSES.has(status)) return { stop: true, status };
  const marker = mine ? parseSessionBudgetMarker(body) : null;
  const over = marker && mine ? workerSessionBudgetStop(marker, mine.issue, mine) : null;
  return over ? { stop: true, status: `over its budget: ${over}` } : { stop: false, status };
}

/**
 * This worker's share of what the session's budget has left (src/core/session/session-budget.ts), divided by the
 * tasks worked on at once, so that workers running side by side cannot together spend past it; null when the
 * tracking issue publishes no session budget.
 */
export function sessionShareLeft(
  body: string | null | undefined,
  mine: WorkerSpend,
  maxParallel: number,
): { tokens: number | null; usd: number | null } | null {
  const marker = parseSessionBudgetMarker(body);
  if (!marker) return null;
  const left = workerSessionBudgetLeft(marker, mine.issue, mine);
  const share = Math.max(1, maxParallel);
  return {
    tokens: left.tokens === null ? null : Math.max(0, Math.floor(left.tokens / share)),
    usd: left.usd === null ? null : Math.max(0, left.usd / share),
  };
}
