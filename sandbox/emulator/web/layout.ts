/**
 * The page shell shared by every page of the web view: escaping, the header and tabs, label chips, state
 * badges, relative paths. Everything interpolated into HTML goes through {@link escapeHtml} (or
 * `renderMarkdown`, which sanitizes): store text is untrusted.
 */
import type { Label } from "../store.js";

export const ASSET_PREFIX = "/-/assets/";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A path built from segments, each percent-encoded (repository names and refs are user text). */
export function href(...segments: Array<string | number>): string {
  return `/${segments.map((s) => encodeURIComponent(String(s))).join("/")}`;
}

interface PageInput {
  title: string;
  /** Already-safe HTML of the page's main part. */
  main: string;
  /** `owner/name` when the page belongs to a repository (header and tabs). */
  repo?: { owner: string; name: string; tab: "issues" | "pulls" | "actions" | null };
  /** Whether the page keeps itself up to date (while a scenario runs). */
  live: boolean;
}

/** A whole HTML document. Scripts come only from this server (the Content-Security-Policy says so too). */
export function renderPage(input: PageInput): string {
  const repoHeader = input.repo
    ? `<div class="repo-head"><a href="${href(input.repo.owner)}" class="owner">${escapeHtml(input.repo.owner)}</a> / <a href="${href(input.repo.owner, input.repo.name)}"><strong>${escapeHtml(input.repo.name)}</strong></a></div>
<nav class="tabs">${(
        [
          ["issues", "Issues"],
          ["pulls", "Pull requests"],
          ["actions", "Actions"],
        ] as const
      )
        .map(
          ([tab, text]) =>
            `<a href="${href(input.repo!.owner, input.repo!.name, tab)}"${input.repo!.tab === tab ? ' class="selected"' : ""}>${text}</a>`,
        )
        .join("")}</nav>`
    : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)} · Autopilot sandbox</title>
<link rel="stylesheet" href="${ASSET_PREFIX}view.css">
<script src="${ASSET_PREFIX}view.js" defer></script>
</head>
<body data-live="${input.live ? "true" : "false"}">
<header class="top"><a href="/" class="brand">Autopilot sandbox</a><span class="live-badge">${input.live ? "live: the scenario is running" : "the run has ended"}</span></header>
${repoHeader}
<main id="main">
${input.main}
</main>
</body>
</html>
`;
}

/** A label as GitHub draws it: its colour as the background, text dark or light to stay readable. */
export function labelChip(label: Pick<Label, "name" | "color" | "description">): string {
  const color = /^[0-9a-f]{6}$/i.test(label.color) ? label.color.toLowerCase() : "ededed";
  const r = Number.parseInt(color.slice(0, 2), 16);
  const g = Number.parseInt(color.slice(2, 4), 16);
  const b = Number.parseInt(color.slice(4, 6), 16);
  const light = (r * 299 + g * 587 + b * 114) / 1000 > 150;
  const title = label.description ? ` title="${escapeHtml(label.description)}"` : "";
  return `<span class="label" style="background-color:#${color};color:${light ? "#1f2328" : "#ffffff"}"${title}>${escapeHtml(label.name)}</span>`;
}

type StateBadge = "open" | "closed" | "merged" | "draft" | "not-planned";

/** The green/purple/red/grey state pill of issues and pull requests. */
export function stateBadge(state: StateBadge): string {
  const text = { open: "Open", closed: "Closed", merged: "Merged", draft: "Draft", "not-planned": "Closed" }[
    state
  ];
  return `<span class="state state-${state}">${text}</span>`;
}

/** `2026-11-23 16:04:05 UTC`: absolute, so a page read later still says when. */
export function formatTime(date: Date | null | undefined): string {
  if (!date) return "";
  const iso = date.toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 19).replace("T", " ")} UTC</time>`;
}

/** A user's login, as a link-less bold name (there are no profile pages in the sandbox). */
export function userName(login: string): string {
  return `<strong class="user">${escapeHtml(login)}</strong>`;
}
