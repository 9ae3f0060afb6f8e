/**
 * The definition of ready (`definitionOfReady` in .github/autopilot.yml): whether a ready task's text holds
 * enough to act on — a number of words, and the sections the repository's issue form asks for (GitHub writes
 * each field of an issue form as `### <label>` followed by the answer, or `_No response_` for an optional field
 * left empty: https://docs.github.com/en/communities/using-templates-to-encourage-useful-issues-and-pull-requests/syntax-for-issue-forms).
 * A task that falls short waits, listed with what it lacks, rather than being handed to an agent that would
 * have to guess.
 *
 * Headings are found by a line scan (ATX headings in prose, the only kind an issue form writes), not
 * by the Markdown parser: the scan is linear on any text, while the parser's time grows faster on some hostile
 * inputs (src/core/text/unrendered-markdown.ts cuts long texts into pieces for that reason), and a task's body
 * may be a stranger's. HTML comments go first, as GitHub does not render them (an issue form's hidden prompts
 * and a template's instructions are comments). Pure.
 */
import { proseLines } from "../text/markdown.js";
import { removeUnrenderedMarkdown } from "../text/unrendered-markdown.js";

interface DefinitionOfReady {
  minWords: number;
  sections: readonly string[];
}

/** What an issue form writes for an optional field left empty. */
const NO_RESPONSE = /^_no response_$/i;
const ATX_OPENING = /^ {0,3}#{1,6}(?=[ \t]|$)/;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;

/**
 * The title of an ATX heading line (its closing `#`s gone), or null for any other line. Written out rather than
 * as one regular expression, whose backtracking over a long run of spaces or `#`s would be quadratic.
 */
function headingTitle(line: string): string | null {
  const opening = ATX_OPENING.exec(line);
  if (!opening) return null;
  const rest = line.slice(opening[0].length).trim();
  let end = rest.length;
  while (end > 0 && rest[end - 1] === "#") end--;
  if (end === 0) return "";
  if (end < rest.length && (rest[end - 1] === " " || rest[end - 1] === "\t"))
    return rest.slice(0, end).trim();
  return rest;
}

/**
 * The body's sections: the text before the first heading (under ""), then each heading's text by its title. A
 * heading counts only in prose (proseLines: not in fenced code or a block quote); code still counts as content.
 */
function sections(body: string): { title: string; lines: string[] }[] {
  const out: { title: string; lines: string[] }[] = [{ title: "", lines: [] }];
  const prose = proseLines(body);
  body.split(/\r?\n/).forEach((line, i) => {
    const text = prose[i];
    const title = text == null ? null : headingTitle(text);
    if (title !== null) out.push({ title, lines: [] });
    else out.at(-1)!.lines.push(line);
  });
  return out;
}

/** The words of some lines, an issue form's `_No response_` left out. */
function wordsOf(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) {
    if (NO_RESPONSE.test(line.trim())) continue;
    n += line.match(WORD)?.length ?? 0;
  }
  return n;
}

const normalTitle = (title: string) => title.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * What a task's body lacks under the definition of ready, in words a person can act on; empty when it is
 * ready (or the definition asks for nothing).
 */
export function readinessGaps(body: string | null | undefined, rule: DefinitionOfReady): string[] {
  if (rule.minWords <= 0 && rule.sections.length === 0) return [];
  const text = removeUnrenderedMarkdown(body ?? "");
  const parts = sections(text);
  const gaps: string[] = [];
  const words = parts.reduce((n, part) => n + wordsOf(part.lines), 0);
  if (words < rule.minWords)
    gaps.push(`its body has ${words} word${words === 1 ? "" : "s"}, fewer than ${rule.minWords}`);
  for (const wanted of rule.sections) {
    const found = parts.filter((part) => part.title && normalTitle(part.title) === normalTitle(wanted));
    if (found.length === 0) gaps.push(`no "${wanted}" section`);
    else if (!found.some((part) => wordsOf(part.lines) > 0)) gaps.push(`the "${wanted}" section is empty`);
  }
  return gaps;
}
