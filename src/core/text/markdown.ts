/**
 * Small, pure helpers for writing GitHub-flavoured Markdown that contains untrusted text (issue titles,
 * reasons written by agents, logins): nothing a person or an agent wrote can open an HTML comment (and so
 * reach the hidden state), ping someone, start a table cell, or run into the next line.
 */
import { markdownTable } from "markdown-table";

const INLINE_SPECIAL = /[\\*_{}[\]<>|~]/g;

/**
 * Text for one line of Markdown: newlines collapse to spaces; emphasis, link and table punctuation is
 * backslash-escaped; `<` and `>` become entities (so `<!--` and `-->` cannot appear and no HTML renders);
 * `@mention`s are defused with a zero-width joiner so rendering the dashboard notifies nobody. Backticks stay
 * (a code span renders nothing). Long text is cut at `max` characters.
 */
export function escapeInline(text: string, max = 200): string {
  const oneLine = truncate(
    text
      .replace(/[\r\n\t]+/g, " ")
      .replace(/\s{2,}/g, " ")
      .trim(),
    max,
  );
  return oneLine
    .replace(INLINE_SPECIAL, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : `\\${c}`))
    .replace(/@(?=[A-Za-z0-9])/g, "@\u200d");
}

/** Cuts `text` to at most `max` characters, ending with "…" when it was cut. */
export function truncate(text: string, max: number): string {
  if (max <= 0) return "";
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** A code span (`name`) of one line of text; inside it nothing renders, so only backticks need removing. */
export function code(text: string, max = 100): string {
  const clean = truncate(text.replace(/[`\r\n]+/g, " ").trim(), max);
  return `\`${clean || " "}\``;
}

/** A login as a mention that does not notify: `@octocat` shown as code. */
export function quietLogin(login: string): string {
  return `\`@${login.replace(/[^A-Za-z0-9[\]_.-]/g, "")}\``;
}

/** A table; every cell must already be escaped (escapeInline). Staggered delimiters keep it short. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: string[],
): string {
  return markdownTable([header, ...rows], { alignDelimiters: false, ...(align ? { align } : {}) });
}

/** A text progress bar: `▓▓▓▓▓░░░░░ 50%`. */
export function progressBar(done: number, total: number, width = 20): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.round(ratio * width);
  return `${"▓".repeat(filled)}${"░".repeat(width - filled)} ${Math.floor(ratio * 100)}%`;
}

/** "4,812": thousands separators without depending on the host's locale. */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** "2026-11-22 10:42 UTC" — stable, locale-free, minute precision. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "—";
  return `${new Date(t).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** "$1.23" (two decimals, at least $0.01 shown as "<$0.01" for tiny non-zero costs). */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.01) return "<$0.01";
  return `$${usd.toFixed(2)}`;
}

/** "12.3k", "4.5M" for token counts. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * The lines of a markdown body as a reader sees them: HTML comments blanked, and `null` for every line inside a
 * fenced code block (the fences included) or a block quote. Commands and dependency lines count only in prose,
 * never where someone quotes or shows them.
 */
export function proseLines(body: string): (string | null)[] {
  const text = body.includes("<!--")
    ? body.replace(/<!--[\s\S]*?(?:-->|$)/g, (c) => c.replace(/[^\n]/g, " "))
    : body;
  const out: (string | null)[] = [];
  let fence: { char: string; length: number } | null = null;
  for (const raw of text.split(/\r?\n/)) {
    // Only a line starting with a space, ` or ~ can be a fence (the regular expression is the costly part).
    const first = raw.charCodeAt(0);
    const open = first === 32 || first === 96 || first === 126 ? /^ {0,3}(`{3,}|~{3,})/.exec(raw) : null;
    if (fence) {
      if (open && open[1]![0] === fence.char && open[1]!.length >= fence.length && raw.trim() === open[1]) {
        fence = null;
      }
      out.push(null);
    } else if (open) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      out.push(null);
    } else {
      out.push((first === 32 || first === 62) && /^ {0,3}>/.test(raw) ? null : raw);
    }
  }
  return out;
}
