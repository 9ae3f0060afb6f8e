/**
 * The lines a pull-request review comment may be on: GitHub takes a comment's `line` only where the pull
 * request's diff shows that line of the new file — an added or an unchanged context line of a hunk — and refuses
 * the whole review otherwise (https://docs.github.com/en/rest/pulls/reviews#create-a-review-for-a-pull-request:
 * `line` is "the line of the blob in the pull request diff that the comment applies to"). The worker keeps
 * the reviewer's other comments in the review's body instead.
 */

/** Per path of the new side, the line numbers a comment may be on. */
export function commentableLines(diff: string): Map<string, Set<number>> {
  const lines = new Map<string, Set<number>>();
  let current: Set<number> | null = null;
  let next = 0;
  let inHunk = false;
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) {
      current = null;
      inHunk = false;
      continue;
    }
    if (!inHunk && line.startsWith("+++ ")) {
      // A path git quotes (unusual characters) is not matched: comments on it stay in the review's body.
      const target = line.slice(4).replace(/\t.*$/, "");
      current = target.startsWith("b/") ? new Set<number>() : null;
      if (current) lines.set(target.slice(2), current);
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      next = Number(hunk[1]);
      inHunk = current !== null;
      continue;
    }
    if (!inHunk || !current) continue;
    if (line.startsWith("+") || line.startsWith(" ")) current.add(next++);
    else if (line.startsWith("-") || line.startsWith("\\")) continue;
    else inHunk = false;
  }
  return lines;
}
