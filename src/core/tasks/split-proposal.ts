/**
 * `/autopilot split #N`'s text (src/core/reconcile/commands/split-command.ts): the sub-issues a splitting run's
 * agent proposes, the comment Autopilot posts them in, reading them back from that comment, and the body of each
 * sub-issue created once a writer approves.
 *
 * Everything in a proposal is the agent's, so untrusted: it is validated with zod (bounded counts and sizes,
 * dependencies only on earlier items, so no cycle), cleaned as any agent text Autopilot posts (no hidden
 * markers, no signal tags, no HTML a reader does not see: `sanitizeUntrustedText`), every `@` defused so it
 * mentions nobody, and its own dependency words defused so that the only dependencies a created sub-issue has
 * are the lines Autopilot writes from `dependsOn`. Labels are not the agent's to choose: each sub-issue gets the
 * ready label and nothing else. The comment carries the proposal as data in one fenced block with its SHA-256 in
 * a hidden marker; the approved digest is checked against the block before anything is created.
 */
import { z } from "zod";
import { escapeInline, quietLogin } from "../text/markdown.js";
import { sanitizeUntrustedText } from "../text/sanitize.js";
import { sha256Hex } from "../text/sha256.js";

/** The most sub-issues one proposal may hold. */
export const MAX_SPLIT_ITEMS = 10;
/** The longest title kept (GitHub allows 256). */
const MAX_TITLE = 200;
/** The longest body kept per sub-issue (ten of them stay well under a comment's 65,536 characters). */
const MAX_BODY = 4000;

const ItemSchema = z.object({
  title: z.string().trim().min(1, "a sub-issue needs a title").max(1000),
  body: z.string().max(20_000).default(""),
  /** 1-based numbers of earlier items this one depends on. */
  dependsOn: z.array(z.number().int().min(1)).max(MAX_SPLIT_ITEMS).default([]),
});

const ProposalSchema = z
  .array(ItemSchema)
  .min(1, "the proposal holds no sub-issue")
  .max(MAX_SPLIT_ITEMS, `at most ${MAX_SPLIT_ITEMS} sub-issues`)
  .superRefine((items, check) => {
    items.forEach((item, i) => {
      for (const d of item.dependsOn)
        if (d >= i + 1)
          check.addIssue({
            code: "custom",
            path: [i, "dependsOn"],
            message: `item ${i + 1} may depend only on earlier items (1 to ${i}), not on ${d}`,
          });
    });
  });

/** One proposed sub-issue, cleaned. */
interface SplitItem {
  title: string;
  body: string;
  dependsOn: number[];
}

type SplitReading = { ok: true; items: SplitItem[] } | { ok: false; problem: string };

/**
 * The proposal in a splitting run's final message: a JSON array between `<subissues>` and `</subissues>` (or,
 * failing those, the message's first JSON array), validated and cleaned. A problem says what was wrong, for the
 * job's result and the person who reads it.
 */
export function splitOfFinalMessage(message: string): SplitReading {
  const tagged = /<subissues>([\s\S]*?)<\/subissues>/i.exec(message);
  const text = tagged ? tagged[1]! : firstArray(message);
  if (text === null) return { ok: false, problem: "its final message has no `<subissues>` JSON array" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problem: `its \`<subissues>\` block is not JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"})`,
    };
  }
  const checked = ProposalSchema.safeParse(value);
  if (!checked.success) {
    const first = checked.error.issues[0]!;
    const where = first.path.length > 0 ? ` at ${first.path.join(".")}` : "";
    return { ok: false, problem: `its sub-issues are not valid${where}: ${first.message}` };
  }
  return { ok: true, items: checked.data.map(cleanItem) };
}

/** The text from the first `[` to its last `]`, or null. */
function firstArray(message: string): string | null {
  const start = message.indexOf("[");
  const end = message.lastIndexOf("]");
  return start >= 0 && end > start ? message.slice(start, end + 1) : null;
}

function cleanItem(item: z.infer<typeof ItemSchema>): SplitItem {
  const title = defuse(sanitizeUntrustedText(item.title, MAX_TITLE)).replace(/\s+/g, " ").trim();
  const body = defuse(sanitizeUntrustedText(item.body.trim(), MAX_BODY)).trim();
  return { title: title || "Untitled", body, dependsOn: [...new Set(item.dependsOn)].sort((a, b) => a - b) };
}

/**
 * Mentions and dependency words made inert: a zero-width space after `@`, and inside the words the dependency
 * reader looks for (src/core/tasks/dependency-references.ts), so the agent's text neither notifies anyone nor
 * makes a sub-issue wait on an issue it names. Idempotent.
 */
function defuse(text: string): string {
  return text
    .replace(/@(?!\u200b)/g, "@\u200b")
    .replace(/\b(d)(?!\u200b)(epend)/gi, "$1\u200b$2")
    .replace(/\b(b)(?!\u200b)(lock)/gi, "$1\u200b$2");
}

/** The proposal as the data block holds it: one line of JSON, whose SHA-256 is the proposal's digest. */
function proposalData(items: readonly SplitItem[]): string {
  return JSON.stringify(items.map((i) => ({ title: i.title, body: i.body, dependsOn: i.dependsOn })));
}

export function splitDigest(items: readonly SplitItem[]): string {
  return sha256Hex(proposalData(items));
}

const MARKER = /<!-- autopilot:split digest=([0-9a-f]{64}) -->/;

/** The comment a splitting run posts on the issue it splits: the sub-issues for people, then as data. */
export function splitComment(issue: number, items: readonly SplitItem[]): string {
  const data = proposalData(items);
  const longestRun = Math.max(0, ...Array.from(data.matchAll(/`+/g), (run) => run[0].length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  const list = items.flatMap((item, i) => {
    const deps = item.dependsOn.length ? ` — after ${item.dependsOn.map((d) => `${d}`).join(", ")}` : "";
    const head = `${i + 1}. **${escapeInline(item.title, MAX_TITLE)}**${deps}`;
    const body = item.body
      ? item.body
          .split("\n")
          .map((line) => `   > ${line}`)
          .join("\n")
      : "   > (no description)";
    return [head, body, ""];
  });
  return [
    `<!-- autopilot:split digest=${sha256Hex(data)} -->`,
    `### Autopilot's proposal: #${issue} split into ${items.length} sub-issue${items.length === 1 ? "" : "s"}`,
    "",
    ...list,
    "Nothing is created until a person with write access answers:",
    "",
    `- \`/autopilot approve #${issue}\` — these become sub-issues of #${issue}, each ready, worked in the order their dependencies give;`,
    "- any other comment — a new proposal that takes your words into account.",
    "",
    "<details><summary>The proposal as data</summary>",
    "",
    `${fence}json`,
    data,
    fence,
    "",
    "</details>",
  ].join("\n");
}

/** The proposal in one of Autopilot's split comments, when its data still has `digest` (any digest: null). */
export function splitFromComment(body: string, digest: string | null): SplitItem[] | null {
  const marker = MARKER.exec(body);
  if (!marker || (digest !== null && marker[1] !== digest)) return null;
  const rest = body.slice(marker.index + marker[0].length);
  const block = /^(`{3,})json\n([^\n]*)\n\1$/m.exec(rest);
  if (!block || sha256Hex(block[2]!) !== marker[1]) return null;
  try {
    const checked = ProposalSchema.safeParse(JSON.parse(block[2]!));
    return checked.success ? checked.data.map(cleanItem) : null;
  } catch {
    return null;
  }
}

/** The proposal as a planning prompt quotes it for revision: the numbered list, plain. */
export function splitAsText(items: readonly SplitItem[]): string {
  return items
    .map((item, i) => {
      const deps = item.dependsOn.length ? ` (depends on ${item.dependsOn.join(", ")})` : "";
      return `${i + 1}. ${item.title}${deps}\n${item.body}`;
    })
    .join("\n\n");
}

/** The hidden marker of sub-issue `index` (1-based) of the split of `parent` approved with `digest`. */
function splitItemMarker(parent: number, digest: string, index: number): string {
  return `<!-- autopilot:split-item parent=${parent} digest=${digest.slice(0, 16)} item=${index} -->`;
}

/** Which item of the split of `parent` with `digest` a body Autopilot wrote is, or null. */
export function splitItemOf(body: string | null | undefined, parent: number, digest: string): number | null {
  const m = /<!-- autopilot:split-item parent=(\d+) digest=([0-9a-f]{16}) item=(\d+) -->/.exec(body ?? "");
  if (!m || Number(m[1]) !== parent || m[2] !== digest.slice(0, 16)) return null;
  return Number(m[3]);
}

/**
 * The body of a created sub-issue: the agent's text (cleaned again: it came back from a comment), a
 * `Depends on` line naming the issues the earlier items became, who approved it, and the marker that finds it
 * again (so a retried creation never makes it twice).
 */
export function subIssueBody(options: {
  parent: number;
  digest: string;
  index: number;
  item: SplitItem;
  dependsOn: readonly number[];
  approvedBy: string;
}): string {
  const { parent, digest, index, item, dependsOn, approvedBy } = options;
  const text = defuse(sanitizeUntrustedText(item.body, MAX_BODY)).trim();
  return [
    ...(text ? [text, ""] : []),
    ...(dependsOn.length ? [`Depends on ${dependsOn.map((n) => `#${n}`).join(", ")}`, ""] : []),
    `_Part ${index} of the split of #${parent} that Autopilot proposed and ${quietLogin(approvedBy)} approved._`,
    splitItemMarker(parent, digest, index),
  ].join("\n");
}
