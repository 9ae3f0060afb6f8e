/**
 * Where a pull-request review's line comments may go, as GitHub checks it when a review is created
 * (https://docs.github.com/en/rest/pulls/reviews#create-a-review-for-a-pull-request: a comment's `line` is "the
 * line of the blob in the pull request diff that the comment applies to"; `side` RIGHT, the default, is the new
 * file). A path the diff does not touch is refused with "Path could not be resolved", a line outside every hunk
 * (or only on the deleted side) with "Pull request review thread line must be part of the diff"; GitHub refuses
 * the whole review, with nothing created.
 */

/**
 * The line numbers a file's patch shows on each side: RIGHT, the new file's (added and context lines); LEFT, the
 * old file's (deleted and context lines).
 */
function sideLines(patch: string): { RIGHT: Set<number>; LEFT: Set<number> } {
  const sides = { RIGHT: new Set<number>(), LEFT: new Set<number>() };
  let left = -1;
  let right = -1;
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      left = Number(hunk[1]);
      right = Number(hunk[2]);
    } else if (right < 0) continue;
    else if (line.startsWith("+")) sides.RIGHT.add(right++);
    else if (line.startsWith("-")) sides.LEFT.add(left++);
    else if (line.startsWith(" ")) {
      sides.RIGHT.add(right++);
      sides.LEFT.add(left++);
    }
  }
  return sides;
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
    const side = comment.side === "LEFT" ? "LEFT" : "RIGHT";
    if (!sideLines(file.patch ?? "")[side].has(comment.line))
      return "Pull request review thread line must be part of the diff";
  }
  return null;
}
