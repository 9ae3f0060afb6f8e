/**
 * What the worker shows people: the progress comment on the task issue (ending with the machine-readable result
 * marker), the PR body (with its hidden markers), the question/blocker comment, and the job summary rows.
 */
import { humanGateMarker, prMarker } from "../../core/contract.js";
import { renderWorkerResultMarker, type WorkerResult } from "../../core/tasks/worker-result.js";
import { needsHumanNextStep } from "../../core/session/alerts.js";
import { quoteInert } from "../../core/text/sanitize.js";
import type { QualityCommandResult } from "../processes/quality.js";
import { counted } from "../../core/text/plural.js";

/** Text inside a table cell or inline code: no pipes, newlines, HTML or mentions break out of it. */
export function cellText(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const short = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return short
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|")
    .replace(/@/g, "@\u200b")
    .replace(/`/g, "'");
}

/**
 * Text for a code span inside a table cell (`` `npm run lint && npm test` ``): whitespace flattened, cut to `max`,
 * the cell's pipes escaped (GitHub's tables split on them even in code spans) and backticks replaced. No HTML
 * escaping: a code span shows `&amp;` as those five characters, and renders no HTML or mention.
 */
function codeCellText(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const short = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return short.replace(/\|/g, "\\|").replace(/`/g, "'");
}

function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

function formatCost(costUsd: number, tokens: { input: number; output: number }): string {
  const total = tokens.input + tokens.output;
  const tokenText = total >= 10_000 ? `${(total / 1000).toFixed(1)}k` : String(total);
  return `$${costUsd.toFixed(costUsd > 0 && costUsd < 0.01 ? 4 : 2)} · ${tokenText} tokens`;
}

const OUTCOME_TITLE: Record<string, string> = {
  complete: "✅ Done: pull request opened",
  blocked: "⛔ Blocked",
  needs_human: "❓ Needs a human",
  timeout: "⏱️ Timed out",
  stuck: "🔁 Stuck",
  contradiction: "⚠️ Stopped: completion claims kept failing the quality gates",
  failed: "❌ Failed",
  paused: "⏸️ Paused",
  rate_limited: "🚦 Rate limited",
  usage_limited: "🚦 Usage limit reached",
  budget_exceeded: "💸 Budget exceeded",
  auth: "🔑 Agent authentication failed",
  quota: "💳 Agent quota exhausted",
  claimed_elsewhere: "↪️ Handled by another run",
  config_refused: "⚙️ Not started: no configuration it may run under",
};

interface ProgressView {
  result: WorkerResult;
  elapsedMs: number;
  runUrl?: string | null;
  agent?: string;
  warnings?: string[];
  /** The artifact that keeps the agent's transcript (src/worker/job/transcript.ts); null: none is kept. */
  transcript?: string | null;
}

/** The hosts the egress proxy refused, `host:port (n), …`, and where to allow them. */
function refusedHostsText(refused: readonly { host: string; count: number }[], max = 10): string {
  const shown = refused.slice(0, max).map((entry) => `${entry.host} (${entry.count})`);
  const more = refused.length > max ? `, and ${refused.length - max} more` : "";
  return `${shown.join(", ")}${more} — list a host in \`network.allow\` to let the agent reach it`;
}

export function renderProgressComment(view: ProgressView): string {
  const { result } = view;
  const title =
    result.status === "running"
      ? "### 🤖 Autopilot is working on this issue"
      : `### 🤖 Autopilot: ${OUTCOME_TITLE[result.result ?? "failed"] ?? result.result}`;
  const rows: [string, string][] = [
    [
      "Status",
      result.status === "running"
        ? `running — iteration ${Math.min(result.iterations + 1, result.maxIterations)} of ${result.maxIterations}`
        : `${result.result ?? "finished"} after ${counted(result.iterations, "iteration")}`,
    ],
    ["Attempt", `${result.attempt}${view.runUrl ? ` · [workflow run](${view.runUrl})` : ""}`],
    ["Elapsed", formatDuration(view.elapsedMs)],
    ["Last signal", result.lastSignal ? cellText(result.lastSignal) : "none yet"],
    ["Branch", `\`${codeCellText(result.branch)}\``],
    ["Cost", formatCost(result.costUsd, result.tokens)],
  ];
  if (view.agent) rows.push(["Agent", cellText(view.agent)]);
  if (view.transcript && view.runUrl)
    rows.push([
      "Transcript",
      `\`${codeCellText(view.transcript)}\` in the [run's artifacts](${view.runUrl}#artifacts)`,
    ]);
  if (result.prNumber) rows.push(["Pull request", `#${result.prNumber}`]);
  if (result.humanGate.fired) {
    rows.push(["Human gate", `fired: ${result.humanGate.rules.map((r) => cellText(r.rule, 60)).join(", ")}`]);
  }
  if (result.reason && result.status === "finished") rows.push(["Reason", cellText(result.reason, 500)]);
  if (result.resumeAt) rows.push(["Resumes after", result.resumeAt]);
  if (result.refusedHosts?.length)
    rows.push(["Refused hosts", cellText(refusedHostsText(result.refusedHosts), 600)]);
  if (result.networkAccess) rows.push(["Network", cellText(result.networkAccess, 300)]);
  const table = ["| What | This run |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
  const warnings = (view.warnings ?? []).slice(-5).map((w) => `> ⚠️ ${cellText(w, 300)}`);
  return [
    title,
    "",
    table,
    ...(warnings.length ? ["", ...warnings] : []),
    "",
    renderWorkerResultMarker(result),
  ].join("\n");
}

interface PullBodyView {
  issue: number;
  result: WorkerResult;
  quality: QualityCommandResult[];
  qualitySource: "configured" | "detected" | "none";
  agent: string;
  summary?: string;
}

/** How one quality result reads in a table: passed, flaky (passed on a re-run) or failed, and its measure. */
function qualityNote(q: QualityCommandResult): string {
  const notes = [
    ...(q.flaky ? [`flaky: passed on run ${q.runs ?? 2}`] : []),
    ...(q.detail ? [cellText(q.detail, 80)] : []),
  ];
  return notes.length ? ` (${notes.join("; ")})` : "";
}

export function renderQualityCell(quality: QualityCommandResult[]): string {
  if (quality.length === 0) return "none configured or detected (the PR's checks are the gate)";
  return quality
    .map(
      (q) =>
        `${q.passed ? (q.flaky ? "⚠️" : "✅") : "❌"} \`${codeCellText(q.command, 80)}\`${qualityNote(q)}`,
    )
    .join(" · ");
}

export function renderPullBody(view: PullBodyView): string {
  const { result } = view;
  const gate = result.humanGate;
  const gateCell = gate.fired
    ? `⚠️ fired — a person with write access must approve after the last push: ${gate.rules
        .map((r) => `${cellText(r.rule, 60)} (${r.where}: \`${codeCellText(r.match, 60)}\`)`)
        .join("; ")}`
    : "✅ nothing sensitive detected";
  const rows: [string, string][] = [
    ["Iterations", `${result.iterations} (attempt ${result.attempt})`],
    ["Quality gates", renderQualityCell(view.quality)],
    ["Cost", formatCost(result.costUsd, result.tokens)],
    ["Human gate", gateCell],
    ["Agent", cellText(view.agent)],
  ];
  const parts = [
    `Closes #${view.issue}`,
    "",
    "### Autopilot summary",
    "",
    "| What | This pull request |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
  ];
  if (view.summary?.trim()) {
    parts.push("", "<details><summary>The agent's final message</summary>", "", "```text");
    // Inert text: no fence break-out, and no HTML comment that could pass for one of Autopilot's markers.
    const inert = view.summary.replace(/```/g, "'''").replace(/<!--/g, "<! --").replace(/-->/g, "-- >");
    parts.push(inert.slice(0, 4_000), "```", "", "</details>");
  }
  parts.push("", prMarker(view.issue), humanGateMarker(gate));
  return parts.join("\n");
}

/**
 * The comment that asks the agent's question (a blocker gets none from the worker: the controller's alert says
 * it, with the next step). Agent text is quoted, never live markup.
 */
export function renderQuestionComment(text: string, labelName: string, issue: number): string {
  const quoted = text.trim() ? quoteInert(text, 3_000) : "";
  // The one next step, in the words of the alert, the report and the dashboard (alerts.ts): the answer alone
  // puts the task back in the queue (src/core/reconcile/answers.ts), there is no label to move.
  const tail = `Someone with write access: ${needsHumanNextStep(issue)}; the task then goes back to the queue by itself. It is labeled \`${labelName}\` until then.`;
  return [
    "### ❓ The agent has a question",
    "",
    quoted || "> (no text given)",
    "",
    tail,
    "",
    "<!-- autopilot:signal -->",
  ].join("\n");
}

/** Rows of the job summary table. */
export function summaryRows(
  result: WorkerResult,
  elapsedMs: number,
  quality: QualityCommandResult[],
): string[][] {
  return [
    ["Result", result.result ?? result.status],
    ["Reason", result.reason ?? ""],
    ["Iterations", `${result.iterations} of ${result.maxIterations}`],
    ["Commits", String(result.commits)],
    ["Branch", result.branch],
    ["Pull request", result.prNumber ? `#${result.prNumber}` : "—"],
    [
      "Quality gates",
      quality.length
        ? quality
            .map(
              (q) =>
                `${q.passed ? (q.flaky ? "pass (flaky)" : "pass") : "FAIL"}: ${q.command}${qualityNote(q)}`,
            )
            .join("; ")
        : "—",
    ],
    [
      "Human gate",
      result.humanGate.fired ? result.humanGate.rules.map((r) => r.rule).join(", ") : "not fired",
    ],
    ["Tokens", `${result.tokens.input} in / ${result.tokens.output} out`],
    ["Cost", `$${result.costUsd.toFixed(4)}`],
    ["Elapsed", formatDuration(elapsedMs)],
    ...(result.resumeAt ? [["Resume after", result.resumeAt]] : []),
    ...(result.refusedHosts?.length ? [["Refused hosts", refusedHostsText(result.refusedHosts)]] : []),
    ...(result.networkAccess ? [["Network", result.networkAccess]] : []),
  ];
}
