/**
 * The hidden state block at the end of the tracking issue body, and reading a body back: the state, the
 * checkboxes a person ticked and the session status shown in the visible part.
 */
import { SESSION_STATUSES, type SessionState } from "../session/session.js";
import { type DashboardState, DashboardStateSchema, TRACKING_MARKER } from "./dashboard-state.js";

const STATE_OPEN = "<!-- autopilot:state v1\n";
const STATE_CLOSE = "\n-->";
const SESSION_MARKER = /<!-- autopilot:session ([a-z]+) -->/;

/** The hidden state block. `<` and `>` are escaped in the JSON so the comment cannot end early. */
export function renderStateBlock(state: DashboardState): string {
  const json = JSON.stringify(compactJson(state)).replace(/</g, "\\u003c").replace(/>/g, "\\u003e");
  return `${STATE_OPEN}${json}${STATE_CLOSE}`;
}

interface CheckedBox {
  action: "retry" | "skip";
  issue: number;
}

/** The session's own boxes on the dashboard (000 §4.2's pause, resume and stop buttons). */
export const SESSION_BOXES = ["pause", "resume", "stop"] as const;
export type SessionBox = (typeof SESSION_BOXES)[number];

interface ParsedDashboard {
  state: DashboardState | null;
  /** The body has no state block, or its JSON or schema is invalid. */
  corrupt: boolean;
  /** Checkboxes a person ticked in the visible part. */
  checkedBoxes: CheckedBox[];
  /** The session's boxes a person ticked, in the order shown. */
  sessionBoxes: SessionBox[];
  /** The session status shown in the visible part (survives a damaged state block). */
  visibleStatus: SessionState["status"] | null;
  /** The body carries the tracking-issue marker. */
  hasMarker: boolean;
}

/** Reads a tracking issue body back. Never throws; a person's edits to the visible part do not matter. */
export function parseDashboard(body: string | null | undefined): ParsedDashboard {
  const text = (body ?? "").replace(/\r\n/g, "\n");
  const start = text.lastIndexOf(STATE_OPEN);
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
  return { state, corrupt: state === null, ...visibleMarks(text, start) };
}

type DashboardMarks = Omit<ParsedDashboard, "state" | "corrupt">;

/**
 * The body's visible marks only (ticked boxes, session status, marker), without validating the state block:
 * a reconcile needs the state only when a box was ticked, and the schema check of a large state is costly.
 */
export function readDashboardMarks(body: string | null | undefined): DashboardMarks {
  const text = (body ?? "").replace(/\r\n/g, "\n");
  return visibleMarks(text, text.lastIndexOf(STATE_OPEN));
}

function visibleMarks(text: string, stateStart: number): DashboardMarks {
  const visible = stateStart >= 0 ? text.slice(0, stateStart) : text;
  const checkedBoxes: CheckedBox[] = [];
  const sessionBoxes: SessionBox[] = [];
  const seen = new Set<string>();
  for (const line of visible.split("\n")) {
    const box = /^\s*[-*+]\s+\[[xX]\]\s*<!--\s*autopilot:session-(pause|resume|stop)\s*-->/.exec(line)?.[1];
    if (box && !sessionBoxes.includes(box as SessionBox)) sessionBoxes.push(box as SessionBox);
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
  return { checkedBoxes, sessionBoxes, visibleStatus, hasMarker: text.includes(TRACKING_MARKER) };
}

/** Leaves out fields at their defaults so the JSON stays small (zod puts them back on parse). */
export function compactJson(state: DashboardState): unknown {
  const tasks: Record<string, unknown> = {};
  for (const [key, record] of Object.entries(state.tasks)) tasks[key] = dropDefaults(record);
  return dropDefaults({
    ...state,
    tasks,
    history: dropDefaults(state.history),
    pendingHistory: state.pendingHistory.map(dropDefaults),
  });
}

/** An object without its fields at their defaults (undefined, null, 0, "", []). */
export function dropDefaults<T extends object>(value: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    if (k !== "pinRequested" && (v === 0 || v === "" || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = v;
  }
  return out as Partial<T>;
}
