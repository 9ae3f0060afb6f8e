/**
 * A repository's Actions runs and one run's page: its jobs and steps, annotations, the job summaries written
 * to `GITHUB_STEP_SUMMARY` (rendered as Markdown, as GitHub does) and the log.
 * https://docs.github.com/en/actions/monitoring-and-troubleshooting-workflows/monitoring-workflows/using-workflow-run-logs
 * https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions#adding-a-job-summary
 */
import type { Repo, WorkflowRun } from "../store.js";
import { notFound } from "./issue-pages.js";
import { escapeHtml, formatTime, href, renderPage, userName } from "./layout.js";
import type { PageContext, PageResult, RunDetails } from "./page-context.js";
import { renderMarkdown } from "./render-markdown.js";

function runBadge(run: Pick<WorkflowRun, "status" | "conclusion">): string {
  const text = run.status === "completed" ? (run.conclusion ?? "completed") : run.status;
  const kind =
    run.status !== "completed"
      ? "pending"
      : run.conclusion === "success"
        ? "success"
        : run.conclusion === "skipped" || run.conclusion === "neutral" || run.conclusion === "cancelled"
          ? "neutral"
          : "failure";
  return `<span class="run-state run-${kind}">${escapeHtml(text.replace(/_/g, " "))}</span>`;
}

function stepBadge(step: { status: string; conclusion: string | null }): string {
  if (step.status === "skipped") return runBadge({ status: "completed", conclusion: "skipped" });
  if (step.status !== "completed")
    return runBadge({ status: step.status === "pending" ? "pending" : "in_progress", conclusion: null });
  return runBadge({
    status: "completed",
    conclusion: (step.conclusion ?? "success") as WorkflowRun["conclusion"],
  });
}

export function actionsPage(ctx: PageContext, repo: Repo): PageResult {
  const runs = ctx.store.listWorkflowRuns(repo.fullName);
  const rows = runs.map(
    (
      run,
    ) => `<li class="row">${runBadge(run)} <a class="title" href="${href(repo.owner, repo.name, "actions", "runs", run.id)}">${escapeHtml(run.displayTitle)}</a>
<span class="meta">${escapeHtml(run.name)} #${run.runNumber} · ${escapeHtml(run.event)} by ${escapeHtml(run.actor)} ${formatTime(run.createdAt)}</span></li>`,
  );
  return {
    status: 200,
    html: renderPage({
      title: `Actions · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "actions" },
      main: `<h2>All workflow runs <span class="muted">${runs.length}</span></h2>${rows.length ? `<ul class="list runs">${rows.join("\n")}</ul>` : '<p class="muted">No workflow runs yet.</p>'}`,
    }),
  };
}

/**
 * The values a run's log must not show: everything registered with `::add-mask::` and the run's secrets (the
 * runner masks both, in every later line). Each line of a multi-line secret is masked on its own too.
 * https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions#masking-a-value-in-a-log
 * https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions
 */
function logMasks(details: RunDetails): string[] {
  const values = new Set<string>();
  const add = (value: string) => {
    const trimmed = value.trim();
    if (trimmed.length < 4) return;
    values.add(trimmed);
    for (const line of trimmed.split(/\r?\n/)) if (line.trim().length >= 8) values.add(line.trim());
  };
  for (const secret of details.secrets ?? []) add(secret);
  for (const line of details.log) {
    const mask = /^::add-mask::(.*)$/.exec(line);
    if (mask) add(mask[1] ?? "");
  }
  // Longest first, so a value containing another is masked whole.
  return [...values].sort((a, b) => b.length - a.length);
}

function applyMasks(text: string, masks: readonly string[]): string {
  let out = text;
  for (const mask of masks) out = out.split(mask).join("***");
  return out;
}

/**
 * Log lines as the log viewer shows them: groups and errors marked, `::add-mask::` and `::debug::` commands
 * hidden (debug lines appear only with step debug logging on), masked values as `***`.
 * https://docs.github.com/en/actions/monitoring-and-troubleshooting-workflows/troubleshooting-workflows/enabling-debug-logging
 */
function renderLog(lines: readonly string[], masks: readonly string[]): string {
  return lines
    .map((line) => {
      if (/^::(add-mask|debug)::/.test(line)) return "";
      const marker =
        /^(?:##\[(group|endgroup|error|warning|notice)\]|::(group|endgroup|error|warning|notice)(?: [^:]*)?::)(.*)$/.exec(
          line,
        );
      if (!marker) return `<span>${escapeHtml(applyMasks(line, masks)) || " "}</span>`;
      const kind = marker[1] ?? marker[2];
      if (kind === "endgroup") return "";
      return `<span class="log-${kind}">${escapeHtml(applyMasks(marker[3] ?? "", masks)) || " "}</span>`;
    })
    .join("");
}

export function runPage(ctx: PageContext, repo: Repo, runId: number): PageResult {
  const run = ctx.store.getWorkflowRun(repo.fullName, runId);
  if (!run) return notFound(ctx, `Workflow run ${runId}`);
  const details = ctx.runDetails(runId);
  const masks = details ? logMasks(details) : [];
  const inputs = Object.entries(run.inputs);
  const jobs = run.jobs
    .map(
      (job) => `<div class="job"><h3>${runBadge(job)} ${escapeHtml(job.name)}</h3>
<ol class="steps">${(details?.steps.length ? details.steps : job.steps)
        .map((step) => `<li>${stepBadge(step)} ${escapeHtml(step.name)}</li>`)
        .join("")}</ol></div>`,
    )
    .join("");
  const annotations = details?.annotations.length
    ? `<section class="annotations"><h2>Annotations</h2><ul>${details.annotations
        .map(
          (a) =>
            `<li class="annotation-${a.level}"><strong>${a.level}</strong> ${escapeHtml(applyMasks(a.message, masks))}</li>`,
        )
        .join("")}</ul></section>`
    : "";
  const summary = details?.summary.trim()
    ? `<section class="summary" id="summary"><h2>Summary</h2><div class="markdown-body">${renderMarkdown(applyMasks(details.summary, masks), repo)}</div></section>`
    : "";
  const log = details
    ? `<section class="log" id="logs"><h2>Log</h2>${details.log.length ? `<pre class="log-body">${renderLog(details.log, masks)}</pre>` : '<p class="muted">No output yet.</p>'}</section>`
    : "";
  return {
    status: 200,
    html: renderPage({
      title: `${run.displayTitle} · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "actions" },
      main: `<div class="issue-head"><h1>${escapeHtml(run.displayTitle)} <span class="muted">${escapeHtml(run.name)} #${run.runNumber}</span></h1>
<div class="issue-meta">${runBadge(run)} ${escapeHtml(run.event)} by ${userName(run.triggeringActor)} ${formatTime(run.createdAt)} on <code>${escapeHtml(run.headBranch ?? "")}</code> <code>${escapeHtml(run.headSha.slice(0, 7))}</code>${details?.reason ? ` · ${escapeHtml(details.reason)}` : ""}</div></div>
${inputs.length ? `<table class="inputs"><thead><tr><th>input</th><th>value</th></tr></thead><tbody>${inputs.map(([k, v]) => `<tr><td><code>${escapeHtml(k)}</code></td><td><code>${escapeHtml(v)}</code></td></tr>`).join("")}</tbody></table>` : ""}
${jobs}${annotations}${summary}${log}`,
    }),
  };
}
