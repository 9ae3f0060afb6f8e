/**
 * Dependencies written in an issue body: `Depends on #N`, `Blocked by #N`, `Depends on owner/repo#N`, issue URLs,
 * lists (`Depends on #1, #2 and #3`) and task lists under a "Depends on" / "Blocked by" / "Dependencies" heading
 * (`- [ ] #4`) or per item (`- [ ] depends on #4`); fenced code, inline code, HTML comments and quoted lines are
 * ignored. Bounded: at most MAX_REFERENCES_PER_ISSUE references of one body are used (graph.ts builds the graph).
 */
import { proseLines } from "../text/markdown.js";

export interface RepoRef {
  owner: string;
  name: string;
}

export interface CrossRepoRef {
  owner: string;
  name: string;
  number: number;
}

export interface ParsedDependencies {
  /** Issue numbers in the same repository, in order of first mention, without duplicates. */
  numbers: number[];
  /** References to other repositories, in order of first mention, without duplicates. */
  crossRepo: CrossRepoRef[];
  /** Distinct references past MAX_REFERENCES_PER_ISSUE, which are not used. */
  omitted: number;
}

/**
 * At most this many distinct references of one issue body are used (in order of first mention). Each
 * reference the snapshot does not know costs a lookup, so one body listing thousands of issues would
 * otherwise cost a hundred queries on every reconcile.
 */
export const MAX_REFERENCES_PER_ISSUE = 50;

/** Across all issues, at most this many referenced issues are looked up per reconcile (see referencesToLookUp). */
export const MAX_REFERENCE_LOOKUPS = 200;

const MENTIONS_DEPENDENCY = /depend|block/i;
const KEYWORD = /\b(?:depends[\s-]+on|blocked[\s-]+by)\b/gi;
const HEADING =
  /^\s{0,3}(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:depends[\s-]+on|blocked[\s-]+by|dependencies|blockers)\s*:?\s*(?:\*\*|__)?\s*:?\s*$/i;
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/;
// owner: letters, digits, hyphens; repository: letters, digits, '.', '-', '_'.
const REF =
  /(?:https?:\/\/github\.com\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)\/(?:issues|pull)\/(\d+)(?![\w/])|(?:([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+))?#(\d+)(?![\w]))/y;
const SEPARATOR = /(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+)/iy;
// After the keyword: `:`, bold markers, and an optional "issue(s)" / "PR" word ("Blocked by issue #12").
const LEAD = /[\s:*_]*(?:(?:issues?|PRs?|pull\s+requests?)\b[\s:]*)?/iy;

/** Parses the dependencies written in an issue body. Never throws. */
export function parseDependencies(body: string | null | undefined, repo: RepoRef): ParsedDependencies {
  const numbers: number[] = [];
  const crossRepo: CrossRepoRef[] = [];
  // Every heading and keyword below contains "depend" or "block": a body with neither names no dependency
  // (most bodies), and is not split into lines at all.
  if (!body || !MENTIONS_DEPENDENCY.test(body)) return { numbers, crossRepo, omitted: 0 };
  const seen = new Set<string>();
  let omitted = 0;
  const add = (ref: CrossRepoRef | number) => {
    if (typeof ref !== "number" && sameRepo(ref, repo)) return add(ref.number);
    const key = typeof ref === "number" ? `#${ref}` : crossRepoKey(ref);
    if (seen.has(key)) return;
    seen.add(key);
    if (numbers.length + crossRepo.length >= MAX_REFERENCES_PER_ISSUE) omitted++;
    else if (typeof ref === "number") numbers.push(ref);
    else crossRepo.push(ref);
  };

  let inSection = false;
  for (const line of visibleLines(body)) {
    if (line.trim() === "") continue; // blank lines do not end a dependency section
    if (HEADING.test(line)) {
      inSection = true;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (inSection && item) {
      // `- [ ] #4`, `- owner/repo#5, #6`: references at the start of the item.
      for (const ref of readRefList(line, item[0].length)) add(ref);
    } else if (!item) {
      inSection = false; // any other paragraph or heading ends the section
    }
    KEYWORD.lastIndex = 0;
    for (let m = KEYWORD.exec(line); m; m = KEYWORD.exec(line)) {
      for (const ref of readRefList(line, m.index + m[0].length)) add(ref);
    }
  }
  return { numbers, crossRepo, omitted };
}

/**
 * "#7 references 4,000 issues; the first 50 are used", for an issue whose body names more than
 * MAX_REFERENCES_PER_ISSUE, else null.
 */
export function referenceCapNote(issue: number, parsed: ParsedDependencies): string | null {
  if (parsed.omitted === 0) return null;
  const total = parsed.numbers.length + parsed.crossRepo.length + parsed.omitted;
  return `#${issue} references ${total.toLocaleString("en-US")} issues; the first ${MAX_REFERENCES_PER_ISSUE} are used`;
}

/**
 * Which referenced issues to look up this reconcile: those not known yet, taken in turns from each issue's
 * list (its first unknown reference, then every issue's second, …) up to `max`, so one issue's long list
 * cannot crowd out another's. Returns the numbers ascending and how many unknown ones were left out.
 */
export function referencesToLookUp(
  lists: readonly (readonly number[])[],
  known: (n: number) => boolean,
  max = MAX_REFERENCE_LOOKUPS,
): { lookUp: number[]; left: number } {
  const pending = lists.map((list) => list.filter((n) => !known(n)));
  const chosen = new Set<number>();
  const all = new Set(pending.flat());
  for (let turn = 0; chosen.size < max && pending.some((list) => turn < list.length); turn++) {
    for (const list of pending) {
      if (chosen.size >= max) break;
      if (turn < list.length) chosen.add(list[turn]!);
    }
  }
  return { lookUp: [...chosen].sort((a, b) => a - b), left: all.size - chosen.size };
}

/** Canonical key of a cross-repository reference: `owner/name#N`, lower case. */
export function crossRepoKey(ref: CrossRepoRef): string {
  return `${ref.owner}/${ref.name}#${ref.number}`.toLowerCase();
}

/** `#7` for the same repository, `owner/name#7` for another one. */
export function formatRef(ref: CrossRepoRef | number): string {
  return typeof ref === "number" ? `#${ref}` : `${ref.owner}/${ref.name}#${ref.number}`;
}

function sameRepo(ref: { owner: string; name: string }, repo: RepoRef): boolean {
  return (
    ref.owner.toLowerCase() === repo.owner.toLowerCase() && ref.name.toLowerCase() === repo.name.toLowerCase()
  );
}

/** Reads `#1, #2 and owner/repo#3` starting at `start` (after optional `:`/`**`); stops at the first non-reference. */
function readRefList(line: string, start: number): (CrossRepoRef | number)[] {
  const out: (CrossRepoRef | number)[] = [];
  LEAD.lastIndex = start;
  LEAD.exec(line);
  let pos = LEAD.lastIndex;
  for (;;) {
    REF.lastIndex = pos;
    const m = REF.exec(line);
    if (!m) break;
    const ref = toRef(m);
    if (ref !== null) out.push(ref);
    pos = REF.lastIndex;
    SEPARATOR.lastIndex = pos;
    if (!SEPARATOR.exec(line)) break;
    pos = SEPARATOR.lastIndex;
  }
  return out;
}

function toRef(m: RegExpExecArray): CrossRepoRef | number | null {
  if (m[3] !== undefined) {
    const n = Number(m[3]);
    return n > 0 ? { owner: m[1]!, name: m[2]!, number: n } : null;
  }
  const n = Number(m[6]);
  if (!(n > 0) || !Number.isSafeInteger(n)) return null;
  if (m[4] !== undefined) return { owner: m[4], name: m[5]!, number: n };
  return n;
}

/**
 * Lines that a reader sees as prose: without fenced code blocks, quoted lines, HTML comments and inline
 * code spans (which become blanks of the same length so nothing else shifts).
 */
function visibleLines(body: string): string[] {
  return proseLines(body).map((line) =>
    line === null
      ? ""
      : line.includes("`")
        ? line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (c) => " ".repeat(c.length))
        : line,
  );
}
