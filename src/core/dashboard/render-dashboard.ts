/**
 * The whole tracking issue body (dashboard + hidden state), kept under GitHub's body limit at any number of
 * tasks, and the digest that tells whether it needs a write at all.
 *
 * Body layout (docs/ARCHITECTURE.md "Tracking issue"):
 *
 * ```
 * <!-- autopilot:tracking-issue -->
 * <!-- autopilot:session running -->
 * …dashboard for people…
 * <!-- autopilot:state v1
 * {…json…}
 * -->
 * ```
 */
import { squeezeState, withoutConfigText } from "./compact-state.js";
import { renderVisible, type Limits } from "./dashboard-markdown.js";
import { BODY_CAP, type DashboardState } from "./dashboard-state.js";
import type { DashboardView } from "./dashboard-view.js";
import { compactJson, renderStateBlock } from "./state-block.js";
import { changeHash } from "../text/change-hash.js";

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
  // Round -1 drops the last good configuration's text only (its commit still names it); then the squeezing.
  for (let round = -1; round < 5; round++) {
    const block = renderStateBlock(fitted);
    for (const limits of LIMIT_STEPS) {
      const body = `${renderVisible(fitted, view, now, limits)}\n${block}\n`;
      if (utf8Length(body) <= BODY_CAP) return body;
    }
    fitted = round < 0 ? withoutConfigText(fitted) : squeezeState(fitted, round);
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
  return changeHash(`${renderVisible(bare, view, null, LIMIT_STEPS[0]!)}\n${stableJson(compactJson(bare))}`);
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

/** The length of `text` in UTF-8 bytes. */
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
