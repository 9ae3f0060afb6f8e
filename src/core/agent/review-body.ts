/**
 * The reviewer's verdict as Autopilot posts it (src/worker/job/review.ts): a pull-request review whose body
 * quotes the reviewer inert (no mention, no hidden marker survives: quoteInert) and ends with the worker's own
 * marker (contract.ts `reviewMarker`), line comments on the diff's lines, and the rest of its comments in the
 * body; and the same verdict as the author's next prompt reads it.
 */
import { reviewMarker } from "../contract.js";
import { quoteInert } from "../text/sanitize.js";
import { commentableLines } from "./diff-lines.js";
import { REVIEW_BOUNDS, type ReviewLineComment, type ReviewVerdict } from "./review-verdict.js";

interface PostedReview {
  body: string;
  /** On a line the diff shows (GitHub refuses the whole review otherwise). */
  comments: { path: string; line: number; body: string }[];
}

function where(comment: ReviewLineComment): string {
  return `\`${comment.path.replace(/[`\r\n]/g, "")}\` line ${comment.line}`;
}

/** The review Autopilot posts for a verdict on `head`, given the branch's diff. */
export function renderReview(input: {
  verdict: ReviewVerdict;
  reviewer: string;
  round: number;
  maxRounds: number;
  head: string;
  diff: string;
}): PostedReview {
  const { verdict } = input;
  const onDiff = commentableLines(input.diff);
  const inline = verdict.comments.filter((c) => onDiff.get(c.path)?.has(c.line));
  const elsewhere = verdict.comments.filter((c) => !inline.includes(c));
  const said = verdict.verdict === "approve" ? "approves this change" : "asks for changes";
  const body = [
    `**Autopilot's reviewer** (${input.reviewer.replace(/[`*_\r\n]/g, "")}) ${said} — review ${input.round} of at most ${input.maxRounds}. It did not write the change; its words are advice, and the merge gates are the controller's.`,
    ...(verdict.summary ? ["", quoteInert(verdict.summary, REVIEW_BOUNDS.summary)] : []),
    ...(elsewhere.length
      ? [
          "",
          "Comments on lines the diff does not show:",
          ...elsewhere.map(
            (c) => `- ${where(c)}:\n${quoteInert(c.body, REVIEW_BOUNDS.body).replace(/^/gm, "  ")}`,
          ),
        ]
      : []),
    "",
    reviewMarker(verdict.verdict, input.head),
  ].join("\n");
  return {
    body,
    comments: inline.map((c) => ({
      path: c.path,
      line: c.line,
      body: quoteInert(c.body, REVIEW_BOUNDS.body),
    })),
  };
}

/** How the author's prompt names the reviewer (and how the worker tells its feedback from people's). */
export const REVIEWER_AUTHOR = "Autopilot's reviewer";

/** The verdict as review feedback for the author's next prompt (prompt.ts fences it as data). */
export function reviewForAuthor(
  verdict: ReviewVerdict,
  reviewer: string,
): { author: string; body: string; path: string | null; line: number | null }[] {
  const author = `${REVIEWER_AUTHOR} (${reviewer})`;
  return [
    ...(verdict.summary ? [{ author, body: verdict.summary, path: null, line: null }] : []),
    ...verdict.comments.map((c) => ({ author, body: c.body, path: c.path, line: c.line })),
  ];
}
