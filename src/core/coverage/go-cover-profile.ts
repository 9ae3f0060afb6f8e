/**
 * Statement coverage from a Go cover profile (`go test -coverprofile=cover.out`). The format is the one
 * golang.org/x/tools/cover's ParseProfiles reads: a first line `mode: set|count|atomic`, then one block per line,
 * `<file>:<startLine>.<startCol>,<endLine>.<endCol> <numStatements> <count>`. A block listed more than once (the
 * profiles of several packages concatenated, `-coverpkg`) is counted once, covered when any listing ran it —
 * what `go tool cover -func` reports as the total.
 *
 * Hand-written: no npm package reads this format strictly (golang-cover-parse is a loose port of lcov-parse's
 * shape), and the format is one line kind.
 */
import { type CoverageParse, coverageFrom } from "./coverage-summary.js";

const MODE = /^mode: (set|count|atomic)$/;
const BLOCK = /^(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)$/;

export function parseGoCoverProfile(text: string): CoverageParse {
  const rows = text.split(/\r?\n/);
  const first = rows[0]?.trim() ?? "";
  const mode = MODE.exec(first);
  if (!mode) return { problem: `Go cover profile: the first line is not \`mode: set|count|atomic\`` };
  const blocks = new Map<string, { statements: number; ran: boolean }>();
  for (let i = 1; i < rows.length; i++) {
    const row = rows[i]!.trim();
    if (row === "") continue;
    // Profiles of several runs concatenated repeat the mode line; a different mode cannot be merged.
    if (row.startsWith("mode:")) {
      if (row !== first) return { problem: `Go cover profile line ${i + 1}: a second, different mode line` };
      continue;
    }
    const block = BLOCK.exec(row);
    if (!block)
      return { problem: `Go cover profile line ${i + 1}: not a block (\`file:l.c,l.c statements count\`)` };
    const statements = Number(block[6]);
    const count = Number(block[7]);
    if (!Number.isSafeInteger(statements) || !Number.isSafeInteger(count))
      return { problem: `Go cover profile line ${i + 1}: a count too large to be real` };
    const key = `${block[1]}:${block[2]}.${block[3]},${block[4]}.${block[5]}`;
    const before = blocks.get(key);
    if (before && before.statements !== statements)
      return { problem: `Go cover profile line ${i + 1}: block ${key} listed with two statement counts` };
    blocks.set(key, { statements, ran: (before?.ran ?? false) || count > 0 });
  }
  let covered = 0;
  let total = 0;
  for (const block of blocks.values()) {
    total += block.statements;
    if (block.ran) covered += block.statements;
  }
  return coverageFrom("go-cover", "statements", covered, total);
}
