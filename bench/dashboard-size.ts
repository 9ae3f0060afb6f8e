/**
 * Dashboard size: the tracking issue body the controller writes for 100, 1,000 and 5,000 tasks in mixed
 * states (ready in dependency chains, in progress, in review, blocked/needs-human/timeout/failed with reasons,
 * done), against GitHub's 65,536-character limit.
 *
 *   npx tsx bench/dashboard-size.ts
 *
 * The body is the one `decide` puts in its `writeTrackingIssue` effect (real view, real compaction: finished
 * tasks leave the state in history comments, settled records are trimmed above the state budget). Render
 * time is `renderDashboard` alone on the state that decide wrote; parse time is `parseDashboard` on the body.
 * Prints a table; asserts nothing.
 */
import { GITHUB_BODY_LIMIT } from "../src/core/text/github-body-limit.js";
import {
  BODY_CAP,
  parseDashboard,
  renderDashboard,
  STATE_CAP,
  utf8Length,
} from "../src/core/dashboard/index.js";
import { decide } from "../src/core/reconcile/decide.js";
import { formatInt, formatMs, isMain, machineLine, measure, printTable } from "./lib.js";
import { decideInput, MERGED_NOW, syntheticWorld, viewOf } from "./synthetic-world.js";

export const DASHBOARD_SIZES = [100, 1_000, 5_000] as const;

export interface DashboardRow {
  tasks: number;
  open: number;
  bodyChars: number;
  bodyBytes: number;
  stateChars: number;
  stateRecords: number;
  historyComment: boolean;
  renderMs: number;
  /** Length of the body rendered (for the timing) from the bench-built view. */
  renderChars: number;
  parseMs: number;
  roundTrip: boolean;
}

export function measureDashboard(tasks: number, budgetMs = 1_500): DashboardRow {
  // 30% of the tasks are done: most in earlier reconciles, MERGED_NOW since the last one.
  const done = Math.floor(tasks * 0.3) - MERGED_NOW;
  const open = tasks - done - MERGED_NOW;
  const world = syntheticWorld({ open, done, live: 4 });
  // The largest circuit record a state keeps (a controller job in Actions that saw GitHub's breaker open).
  const circuitOpened = { openedAt: world.now.toISOString(), failure: "x".repeat(200) };
  const decision = decide({ ...decideInput(world), circuitOpened });
  const write = decision.effects.find((e) => e.type === "writeTrackingIssue");
  const body = write?.type === "writeTrackingIssue" ? write.body : "";
  const historyComment = decision.effects.some((e) => e.type === "comment" && e.key?.startsWith("history-"));
  const stateStart = body.lastIndexOf("<!-- autopilot:state v1");
  const parsed = parseDashboard(body);

  // Render alone: the state decide wrote, with a view built from the same world by the same core functions.
  const view = viewOf({ ...world, state: decision.state });
  const render = measure(() => renderDashboard(decision.state, view, world.now), { budgetMs, maxRuns: 200 });
  const parse = measure(() => parseDashboard(body), { budgetMs, maxRuns: 200 });
  return {
    tasks,
    open,
    bodyChars: body.length,
    bodyBytes: utf8Length(body),
    stateChars: stateStart >= 0 ? body.length - stateStart : 0,
    stateRecords: Object.keys(parsed.state?.tasks ?? {}).length,
    historyComment,
    renderMs: render.median,
    renderChars: renderDashboard(decision.state, view, world.now).length,
    parseMs: parse.median,
    roundTrip: parsed.state !== null && parsed.state.revision === decision.state.revision,
  };
}

export function dashboardTable(rows: readonly DashboardRow[]): void {
  printTable(
    "Dashboard size (tracking issue body written by decide)",
    [
      [
        "tasks",
        "open",
        "body chars",
        "% of 65,536",
        "UTF-8 bytes",
        "state-block chars",
        "task records kept",
        "render ms",
        "parse ms",
      ],
      ...rows.map((r) => [
        formatInt(r.tasks),
        formatInt(r.open),
        formatInt(r.bodyChars),
        `${((r.bodyChars / GITHUB_BODY_LIMIT) * 100).toFixed(1)}%`,
        formatInt(r.bodyBytes),
        formatInt(r.stateChars),
        formatInt(r.stateRecords),
        formatMs(r.renderMs),
        formatMs(r.parseMs),
      ]),
    ],
    [
      "Open tasks: ~73% ready (dependency chains of four, a few 2-issue cycles), 6 in progress (2 of them just finished), ~3% in review (checks running, or a human-gate approval awaited; 2 just passed, 1 just failed), ~8% blocked, ~5% needs-human, ~3% timeout, ~4% failed (each with its reason), ~1% labeled ready by someone without write access. 30% of all tasks are done (20 merged since the last reconcile). Titles ~140 characters, reasons up to 300.",
      `Body budget ${formatInt(BODY_CAP)} UTF-8 bytes; the state block is compacted above ${formatInt(STATE_CAP)} characters (history moves to comments, settled records are slimmed, then dropped oldest first). A history comment was due in: ${
        rows
          .filter((r) => r.historyComment)
          .map((r) => formatInt(r.tasks))
          .join(", ") || "none"
      }.`,
      `parse = parseDashboard(body) (JSON + zod); state read back with the same revision: ${rows.every((r) => r.roundTrip) ? "yes" : "NO"} for every size. Render/parse: median of repeated runs.`,
      `render = renderDashboard alone on the state decide wrote and a view the bench builds from the same world with the same core functions (graph, readiness, scoring, statistics): its body has ${rows.map((r) => formatInt(r.renderChars)).join(" / ")} characters (decide's: ${rows.map((r) => formatInt(r.bodyChars)).join(" / ")}; renderDashboard shortens lists step by step until the body fits, and the bench's view fits one step earlier).`,
    ],
  );
}

export function runDashboardBench(): DashboardRow[] {
  const rows = DASHBOARD_SIZES.map((n) => measureDashboard(n));
  dashboardTable(rows);
  return rows;
}

if (isMain(import.meta.url)) {
  console.log(machineLine());
  runDashboardBench();
}
