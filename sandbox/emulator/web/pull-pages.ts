/**
 * A repository's pull request list and a pull request's page: conversation (comments, reviews, events), the
 * checks on its head commit (check runs and commit statuses) and the diff of its files.
 * https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/proposing-changes-to-your-work-with-pull-requests/about-pull-requests
 * https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/collaborating-on-repositories-with-code-quality-features/about-status-checks
 */
import type { ChangedFile, CheckRun, CommitStatus, Issue, PullFields, Repo, Review } from "../store.js";
import {
  issueHeader,
  issueTimeline,
  listRow,
  notFound,
  renderTimeline,
  sidebar,
  type TimelineItem,
} from "./issue-pages.js";
import { escapeHtml, formatTime, href, renderPage, userName } from "./layout.js";
import type { PageContext, PageResult } from "./page-context.js";
import { renderMarkdown } from "./render-markdown.js";

type Pull = Issue & { pull: PullFields };

export function pullsPage(ctx: PageContext, repo: Repo): PageResult {
  const pulls = ctx.store.listPulls(repo.fullName).sort((a, b) => b.number - a.number);
  return {
    status: 200,
    html: renderPage({
      title: `Pull requests · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "pulls" },
      main: pulls.length
        ? `<ul class="list pulls">${pulls.map((p) => listRow(ctx, repo, p)).join("\n")}</ul>`
        : '<p class="muted">No pull requests.</p>',
    }),
  };
}

/**
 * A link to a URL given by an app (a check's details URL): pages of this view become local paths whatever
 * host they name; other http(s) URLs stay links; anything else (`javascript:`…) is shown as text.
 */
function safeLink(url: string | null, text: string): string {
  if (!url) return escapeHtml(text);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return escapeHtml(text);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return escapeHtml(text);
  const local = /^\/[^/]+\/[^/]+\/(actions\/runs\/\d+|pull\/\d+|issues\/\d+)\/?$/.test(parsed.pathname);
  const target = local ? parsed.pathname : parsed.href;
  return `<a href="${escapeHtml(target)}"${local ? "" : ' rel="noopener noreferrer nofollow"'}>${escapeHtml(text)}</a>`;
}

function checkIcon(status: string, conclusion: string | null): string {
  if (status !== "completed") return '<span class="check check-pending" title="in progress">●</span>';
  if (conclusion === "success") return '<span class="check check-success" title="success">✓</span>';
  if (conclusion === "neutral" || conclusion === "skipped")
    return `<span class="check check-neutral" title="${conclusion}">–</span>`;
  return `<span class="check check-failure" title="${escapeHtml(conclusion ?? "failure")}">✗</span>`;
}

function statusIcon(state: CommitStatus["state"]): string {
  return checkIcon(
    state === "pending" ? "in_progress" : "completed",
    state === "success" ? "success" : "failure",
  );
}

function checksSection(repo: Repo, runs: CheckRun[], statuses: CommitStatus[], sha: string): string {
  // The latest run per name, as the merge box shows them.
  const latest = new Map<string, CheckRun>();
  for (const run of runs) if (!latest.has(run.name)) latest.set(run.name, run);
  const rows = [
    ...[...latest.values()].map(
      (run) =>
        `<li class="check-row" data-check="${escapeHtml(run.name)}">${checkIcon(run.status, run.conclusion)} <strong>${safeLink(run.detailsUrl, run.name)}</strong>
<span class="muted">${escapeHtml(run.status === "completed" ? (run.conclusion ?? "") : run.status)}${run.output.title ? ` — ${escapeHtml(run.output.title)}` : ""}</span>
${run.output.summary ? `<details><summary>Output</summary><div class="markdown-body">${renderMarkdown(run.output.summary, repo)}</div></details>` : ""}</li>`,
    ),
    ...statuses.map(
      (status) =>
        `<li class="check-row" data-check="${escapeHtml(status.context)}">${statusIcon(status.state)} <strong>${safeLink(status.targetUrl, status.context)}</strong>
<span class="muted">${escapeHtml(status.state)}${status.description ? ` — ${escapeHtml(status.description)}` : ""}</span></li>`,
    ),
  ];
  return `<section class="checks" id="checks"><h2>Checks <span class="muted">on <code>${escapeHtml(sha.slice(0, 7))}</code></span></h2>
${rows.length ? `<ul>${rows.join("\n")}</ul>` : '<p class="muted">No checks have run on the head commit.</p>'}</section>`;
}

function reviewItem(repo: Repo, review: Review): TimelineItem | null {
  if (review.state === "PENDING" || !review.submittedAt) return null;
  const verb = {
    APPROVED: "approved these changes",
    CHANGES_REQUESTED: "requested changes",
    COMMENTED: "reviewed",
    DISMISSED: "reviewed (dismissed)",
    PENDING: "",
  }[review.state];
  const inline = review.comments
    .map(
      (c) =>
        `<div class="inline-comment"><code>${escapeHtml(c.path)}${c.line !== null ? `:${c.line}` : ""}</code><div class="markdown-body">${renderMarkdown(c.body, repo)}</div></div>`,
    )
    .join("");
  return {
    at: review.submittedAt,
    html: `<article class="comment review review-${review.state.toLowerCase()}"><div class="comment-head">${userName(review.user)} ${verb} ${formatTime(review.submittedAt)}</div>
${review.body ? `<div class="markdown-body">${renderMarkdown(review.body, repo)}</div>` : ""}${inline}</article>`,
  };
}

function diffSection(files: ChangedFile[] | null): string {
  if (files === null)
    return '<section class="diff" id="files"><h2>Files changed</h2><p class="muted">The diff is not available (the branch is gone).</p></section>';
  const body = files
    .map((file) => {
      const lines = (file.patch ?? "").split("\n").map((line) => {
        const kind = line.startsWith("@@")
          ? "hunk"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : "ctx";
        return `<span class="diff-${kind}">${escapeHtml(line) || " "}</span>`;
      });
      return `<div class="diff-file"><div class="diff-file-head"><strong>${escapeHtml(file.filename)}</strong> <span class="muted">${escapeHtml(file.status)}</span> <span class="adds">+${file.additions}</span> <span class="dels">−${file.deletions}</span></div>
${file.patch ? `<pre class="diff-body">${lines.join("")}</pre>` : '<p class="muted">Binary or empty change.</p>'}</div>`;
    })
    .join("\n");
  return `<section class="diff" id="files"><h2>Files changed <span class="muted">${files.length}</span></h2>${body || '<p class="muted">No changes.</p>'}</section>`;
}

export async function pullPage(ctx: PageContext, repo: Repo, number: number): Promise<PageResult> {
  const issue = ctx.store.getIssue(repo.fullName, number);
  if (!issue) return notFound(ctx, `Pull request #${number}`);
  if (!issue.pull) return { redirect: href(repo.owner, repo.name, "issues", number) };
  const pull = issue as Pull;
  const { head, base } = pull.pull;
  let files: ChangedFile[] | null;
  try {
    files = (await ctx.store.compare(repo.fullName, base.sha, head.sha)).files;
  } catch {
    files = null;
  }
  const timeline = [
    ...issueTimeline(ctx, repo, pull),
    ...pull.pull.reviews
      .map((review) => reviewItem(repo, review))
      .filter((i): i is TimelineItem => i !== null),
  ];
  const runs = ctx.store
    .listWorkflowRuns(repo.fullName)
    .filter((r) => r.headSha === head.sha || r.pullRequests.includes(number));
  const runLinks = runs.length
    ? `<h3>Workflow runs</h3><ul>${runs.map((r) => `<li><a href="${href(repo.owner, repo.name, "actions", "runs", r.id)}">${escapeHtml(r.displayTitle)}</a></li>`).join("")}</ul>`
    : "";
  const merged = pull.pull.merged
    ? ` · ${userName(pull.pull.mergedBy ?? "")} merged into <code>${escapeHtml(base.ref)}</code> ${formatTime(pull.pull.mergedAt)}`
    : "";
  const opening = `<article class="comment opening"><div class="comment-head">${userName(pull.user)} opened ${formatTime(pull.createdAt)}</div>
<div class="markdown-body">${renderMarkdown(pull.body, repo)}</div></article>`;
  return {
    status: 200,
    html: renderPage({
      title: `${pull.title} · Pull Request #${number} · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "pulls" },
      main: `${issueHeader(pull, ` · wants to merge <code>${escapeHtml(head.ref)}</code> into <code>${escapeHtml(base.ref)}</code>${merged}`)}
<div class="with-sidebar"><div class="discussion">${opening}${renderTimeline(timeline)}
${checksSection(repo, ctx.store.listCheckRuns(repo.fullName, head.sha), ctx.store.combinedStatus(repo.fullName, head.sha).statuses, head.sha)}
${diffSection(files)}</div>${sidebar(ctx, repo, pull, runLinks)}</div>`,
    }),
  };
}
