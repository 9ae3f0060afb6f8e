/**
 * Where a pull-request review's line comments may go, as GitHub checks it when a review is created
 * (https://docs.github.com/en/rest/pulls/reviews#create-a-review-for-a-pull-request: a comment's `line` is "the
 * line of the blob in the pull request diff that the comment applies to"; `side` RIGHT, the default, is the new
 * file). A path the diff does not touch is refused with "Path could not be resolved", a line outside every hunk
 * (or only on the deleted side) with "Pull request review thread line must be part of the diff"; GitHub refuses
 * the whole review, with nothing created.
 */

/** The new-side line numbers a file's patch shows (added and context lines of its hunks). */
function rightLines(patch: string): Set<number> {
  const lines = new Set<number>();
  let next = -1;
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) next = Number(hunk[1]);
    else if (next < 0) continue;
    else if (line.startsWith("+") || line.startsWith(" ")) lines.add(next++);
  }
  return lines;
}

/** GitHub's refusal of the first comment not on the diff, or null when every one is. */
export function reviewLineRefusal(
  files: readonly { filename: string; patch?: string }[],
  comments: readonly { path: string; line?: number; side?: string }[],
): string | null {
  for (const comment of comments) {
    const file = files.find((f) => f.filename === comment.path);
    if (!file) return "Path could not be resolved";
    if (comment.line === undefined) continue;
    const onRight = comment.side === undefined || comment.side === "RIGHT";
    if (!onRight || !rightLines(file.patch ?? "").has(comment.line))
      return "Pull request review thread line must be part of the diff";
  }
  return null;
}
