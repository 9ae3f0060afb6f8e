/**
 * The repositories list, a repository's issue list and an issue's page (body, comments and the timeline of
 * label changes, closes and renames: who did what, when), following GitHub's pages.
 * https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/viewing-all-of-your-issues-and-pull-requests
 */
import type { Issue, IssueEvent, Repo } from "../store.js";
import { escapeHtml, formatTime, href, labelChip, renderPage, stateBadge, userName } from "./layout.js";
import type { PageContext, PageResult } from "./page-context.js";
import { renderMarkdown } from "./render-markdown.js";

export function notFound(ctx: PageContext, what: string): PageResult {
  return {
    status: 404,
    html: renderPage({
      title: "Not found",
      live: ctx.live,
      main: `<h1>404</h1><p>${escapeHtml(what)} does not exist in this sandbox. <a href="/">All repositories</a></p>`,
    }),
  };
}

export function reposPage(ctx: PageContext): PageResult {
  const rows = ctx.store.listRepos().map((repo) => {
    const issues = ctx.store.listIssues(repo.fullName);
    const open = issues.filter((i) => !i.pull && i.state === "open").length;
    const pulls = issues.filter((i) => i.pull && i.state === "open").length;
    return `<li class="row"><a class="title" href="${href(repo.owner, repo.name, "issues")}">${escapeHtml(repo.fullName)}</a>
<span class="meta">${open} open issues · ${pulls} open pull requests · <a href="${href(repo.owner, repo.name, "actions")}">Actions</a></span></li>`;
  });
  return {
    status: 200,
    html: renderPage({
      title: "Repositories",
      live: ctx.live,
      main: `<h1>Repositories</h1>${rows.length ? `<ul class="list">${rows.join("\n")}</ul>` : '<p class="muted">No repository yet.</p>'}`,
    }),
  };
}

function issueState(issue: Issue): "open" | "closed" | "merged" | "draft" | "not-planned" {
  if (issue.pull?.merged) return "merged";
  if (issue.state === "open") return issue.pull?.draft ? "draft" : "open";
  return issue.stateReason === "not_planned" ? "not-planned" : "closed";
}

/** One row of an issue or pull request list. */
export function listRow(ctx: PageContext, repo: Repo, issue: Issue): string {
  const kind = issue.pull ? "pull" : "issues";
  const labels = ctx.store.labelsOf(repo.fullName, issue).map(labelChip).join(" ");
  const comments = ctx.store.listComments(repo.fullName, issue.number).length;
  return `<li class="row" data-number="${issue.number}">${stateBadge(issueState(issue))}
<a class="title" href="${href(repo.owner, repo.name, kind, issue.number)}">${escapeHtml(issue.title)}</a> ${labels}
<span class="meta">#${issue.number} opened by ${escapeHtml(issue.user)} ${formatTime(issue.createdAt)}${comments ? ` · ${comments} comments` : ""}</span></li>`;
}

export function issuesPage(ctx: PageContext, repo: Repo, filter: string | null): PageResult {
  const all = ctx.store.listIssues(repo.fullName).filter((i) => !i.pull);
  const state = filter === "open" || filter === "closed" ? filter : "all";
  const shown = all.filter((i) => state === "all" || i.state === state).sort((a, b) => b.number - a.number);
  const open = all.filter((i) => i.state === "open").length;
  const pinned = all.filter((i) => i.pinned);
  const tab = (value: string, text: string) =>
    `<a href="?state=${value}"${state === value ? ' class="selected"' : ""}>${text}</a>`;
  const pinnedHtml = pinned.length
    ? `<section class="pinned"><h2>Pinned issues</h2>${pinned
        .map(
          (i) =>
            `<a class="pin-card" href="${href(repo.owner, repo.name, "issues", i.number)}">${escapeHtml(i.title)} <span class="muted">#${i.number}</span></a>`,
        )
        .join("")}</section>`
    : "";
  return {
    status: 200,
    html: renderPage({
      title: `Issues · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "issues" },
      main: `${pinnedHtml}<div class="filters">${tab("all", `${all.length} All`)}${tab("open", `${open} Open`)}${tab("closed", `${all.length - open} Closed`)}</div>
${shown.length ? `<ul class="list issues">${shown.map((i) => listRow(ctx, repo, i)).join("\n")}</ul>` : '<p class="muted">No issues.</p>'}`,
    }),
  };
}

function eventText(event: IssueEvent): string {
  const label = event.label
    ? labelChip({ name: event.label.name, color: event.label.color, description: null })
    : "";
  switch (event.event) {
    case "labeled":
      return `added the ${label} label`;
    case "unlabeled":
      return `removed the ${label} label`;
    case "closed":
      return event.stateReason === "not_planned" ? "closed this as not planned" : "closed this as completed";
    case "reopened":
      return "reopened this";
    case "merged":
      return `merged commit <code>${escapeHtml((event.commitId ?? "").slice(0, 7))}</code>`;
    case "renamed":
      return `changed the title <del>${escapeHtml(event.rename?.from ?? "")}</del> ${escapeHtml(event.rename?.to ?? "")}`;
    case "review_requested":
      return `requested a review from ${escapeHtml(event.requestedReviewer ?? "")}`;
    case "assigned":
      return `assigned ${escapeHtml(event.assignee ?? "")}`;
    case "unassigned":
      return `unassigned ${escapeHtml(event.assignee ?? "")}`;
    case "head_ref_force_pushed":
      return "force-pushed the branch";
    default:
      return escapeHtml(event.event.replace(/_/g, " "));
  }
}

/** A timeline entry, sortable by time: comments, events and (on pull requests) reviews. */
export interface TimelineItem {
  at: Date;
  html: string;
}

/** Comments and events of an issue or pull request, as timeline items. */
export function issueTimeline(ctx: PageContext, repo: Repo, issue: Issue): TimelineItem[] {
  const items: TimelineItem[] = [];
  for (const comment of ctx.store.listComments(repo.fullName, issue.number)) {
    items.push({
      at: comment.createdAt,
      html: `<article class="comment" id="issuecomment-${comment.id}"><div class="comment-head">${userName(comment.user)} commented ${formatTime(comment.createdAt)}</div>
<div class="markdown-body">${renderMarkdown(comment.body, repo)}</div></article>`,
    });
  }
  for (const event of issue.events) {
    items.push({
      at: event.createdAt,
      html: `<div class="event event-${escapeHtml(event.event)}">${userName(event.actor)} ${eventText(event)} ${formatTime(event.createdAt)}</div>`,
    });
  }
  return items;
}

/** Items in time order (stable: same-time items keep their kind's order). */
export function renderTimeline(items: TimelineItem[]): string {
  return `<div class="timeline">${items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => a.item.at.getTime() - b.item.at.getTime() || a.index - b.index)
    .map(({ item }) => item.html)
    .join("\n")}</div>`;
}

/** The header of an issue or pull request page: title, number, state and who opened it. */
export function issueHeader(issue: Issue, extra: string): string {
  return `<div class="issue-head"><h1><span class="issue-title">${escapeHtml(issue.title)}</span> <span class="muted">#${issue.number}</span></h1>
<div class="issue-meta">${stateBadge(issueState(issue))} ${userName(issue.user)} opened this ${formatTime(issue.createdAt)}${extra}</div></div>`;
}

export function sidebar(ctx: PageContext, repo: Repo, issue: Issue, more = ""): string {
  const labels = ctx.store.labelsOf(repo.fullName, issue);
  const related = (title: string, numbers: number[]) =>
    numbers.length
      ? `<h3>${title}</h3><ul>${numbers.map((n) => `<li><a href="${href(repo.owner, repo.name, "issues", n)}">#${n}</a></li>`).join("")}</ul>`
      : "";
  return `<aside class="sidebar"><h3>Labels</h3><div class="labels">${labels.length ? labels.map(labelChip).join(" ") : '<span class="muted">None yet</span>'}</div>
${issue.assignees.length ? `<h3>Assignees</h3><p>${issue.assignees.map(escapeHtml).join(", ")}</p>` : ""}
${related("Blocked by", issue.blockedBy)}${related("Sub-issues", issue.subIssues)}${issue.parent !== null ? related("Parent", [issue.parent]) : ""}${more}</aside>`;
}

export function issuePage(ctx: PageContext, repo: Repo, number: number): PageResult {
  const issue = ctx.store.getIssue(repo.fullName, number);
  if (!issue) return notFound(ctx, `Issue #${number}`);
  // GitHub sends /issues/N of a pull request to /pull/N.
  if (issue.pull) return { redirect: href(repo.owner, repo.name, "pull", number) };
  const body = `<article class="comment opening"><div class="comment-head">${userName(issue.user)} opened ${formatTime(issue.createdAt)}</div>
<div class="markdown-body">${renderMarkdown(issue.body, repo)}</div></article>`;
  return {
    status: 200,
    html: renderPage({
      title: `${issue.title} · Issue #${issue.number} · ${repo.fullName}`,
      live: ctx.live,
      repo: { owner: repo.owner, name: repo.name, tab: "issues" },
      main: `${issueHeader(issue, "")}<div class="with-sidebar"><div class="discussion">${body}${renderTimeline(issueTimeline(ctx, repo, issue))}</div>${sidebar(ctx, repo, issue)}</div>`,
    }),
  };
}
