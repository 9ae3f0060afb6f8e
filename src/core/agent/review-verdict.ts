/**
 * The reviewer's verdict (docs/WORKER.md, "The reviewer"): the reviewing agent ends its final message with one
 * `<review>{…}</review>` block of JSON, which the worker validates here before anything of it reaches GitHub or
 * the author's prompt. The reviewer read a change the author (hostile) wrote, so its words are bounded and
 * checked like any untrusted input; they never decide a merge (src/core/gates/reviewer-gate.ts).
 */
import { z } from "zod";

/** Bounds on what a verdict may carry: a review people read, not a dump. */
export const REVIEW_BOUNDS = {
  summary: 4_000,
  comments: 20,
  path: 400,
  body: 2_000,
  /** The block's JSON, before parsing. */
  json: 64_000,
} as const;

const ReviewCommentSchema = z.strictObject({
  path: z.string().trim().min(1).max(REVIEW_BOUNDS.path),
  line: z.int().min(1).max(10_000_000),
  body: z.string().trim().min(1).max(REVIEW_BOUNDS.body),
});

export const ReviewVerdictSchema = z.strictObject({
  verdict: z.enum(["approve", "request_changes"]),
  summary: z.string().trim().max(REVIEW_BOUNDS.summary).default(""),
  comments: z.array(ReviewCommentSchema).max(REVIEW_BOUNDS.comments).default([]),
});

export type ReviewVerdict = z.output<typeof ReviewVerdictSchema>;
export type ReviewLineComment = ReviewVerdict["comments"][number];

const BLOCK = /<review>([\s\S]*?)<\/review>/g;

/**
 * The verdict of a reviewer's final message (its last `<review>` block), or why there is none, in words a
 * person reads on the task: no block, a block that is not JSON, or one the schema refuses (the first problem).
 */
export function parseReviewVerdict(
  finalMessage: string,
): { ok: true; verdict: ReviewVerdict } | { ok: false; error: string } {
  const blocks = [...finalMessage.matchAll(BLOCK)];
  const last = blocks.at(-1)?.[1];
  if (last === undefined) return { ok: false, error: "the reviewer's final message has no <review> block" };
  if (last.length > REVIEW_BOUNDS.json)
    return { ok: false, error: `the reviewer's <review> block is over ${REVIEW_BOUNDS.json} characters` };
  let json: unknown;
  try {
    json = JSON.parse(last);
  } catch {
    return { ok: false, error: "the reviewer's <review> block is not JSON" };
  }
  const parsed = ReviewVerdictSchema.safeParse(json);
  if (parsed.success) return { ok: true, verdict: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length ? issue.path.join(".") : "the verdict";
  return { ok: false, error: `the reviewer's verdict was refused: ${where}: ${issue.message}` };
}

/** What the reviewer is told to end with (the review prompt quotes it). */
export const REVIEW_VERDICT_FORMAT = [
  "<review>",
  '{"verdict": "approve" | "request_changes", "summary": "…", "comments": [{"path": "src/a.ts", "line": 12, "body": "…"}]}',
  "</review>",
].join("\n");
