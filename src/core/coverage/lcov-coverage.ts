/**
 * Line coverage from an lcov tracefile (`lcov.info`: Jest, Vitest, c8, nyc, `node --test --test-reporter=lcov`,
 * lcov/geninfo itself). The format is the one geninfo's manual page describes ("TRACEFILE FORMAT" in
 * linux-test-project/lcov, man/geninfo.1): per source file an `SF:` line, `DA:<line>,<count>[,<checksum>]` per
 * instrumented line, optional `LF:`/`LH:` totals, then `end_of_record`.
 *
 * Hand-written rather than taken from npm: the maintained parser there (@friedemannsommer/lcov-parser) reads
 * numbers leniently — `DA:5,abc` becomes a line with 0 hits, `LF:1.5` becomes 1, a record without `SF:` is
 * accepted — and the gate must refuse a report it cannot read exactly rather than compute a number from it. The
 * part the gate needs is these five line kinds.
 *
 * A file that appears in several records (one per test name, as lcov writes them) is counted once: a line is
 * covered when any record ran it. A record with `DA:` lines is counted from them; one with only `LF:`/`LH:` from
 * those.
 */
import { type CoverageParse, coverageFrom } from "./coverage-summary.js";

const DA = /^DA:(\d+),(\d+)(?:,[^\s,]*)?$/;
const COUNT = /^(LF|LH):(\d+)$/;
/** The other line kinds of the format (tests, functions, branches, version): read past, never counted. */
const OTHER = /^(TN|VER|FN|FNDA|FNF|FNH|FNL|FNA|BRDA|BRF|BRH):/;

export function parseLcov(text: string): CoverageParse {
  const lines = new Map<string, Map<number, boolean>>();
  const totalsOnly = new Map<string, { found: number; hit: number }>();
  let file: string | null = null;
  let sawDa = false;
  let found: number | null = null;
  let hit: number | null = null;
  let records = 0;
  const bad = (n: number, why: string): CoverageParse => ({ problem: `lcov line ${n}: ${why}` });

  const rows = text.split(/\r?\n/);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.trim();
    const n = i + 1;
    if (row === "") continue;
    if (row.startsWith("SF:")) {
      if (file !== null) return bad(n, "`SF:` before the previous record's `end_of_record`");
      file = row.slice(3);
      if (file === "") return bad(n, "`SF:` names no file");
      sawDa = false;
      found = null;
      hit = null;
      continue;
    }
    if (row === "end_of_record") {
      if (file === null) return bad(n, "`end_of_record` without an `SF:` line before it");
      if (!sawDa) {
        if (found === null || hit === null)
          return bad(n, `the record of ${file} has neither \`DA:\` nor \`LF:\`/\`LH:\``);
        if (hit > found) return bad(n, `the record of ${file} counts LH ${hit} > LF ${found}`);
        const before = totalsOnly.get(file);
        totalsOnly.set(file, {
          found: Math.max(found, before?.found ?? 0),
          hit: Math.max(hit, before?.hit ?? 0),
        });
      }
      records++;
      file = null;
      continue;
    }
    const da = DA.exec(row);
    if (da) {
      if (file === null) return bad(n, "`DA:` outside a record (no `SF:` before it)");
      const line = Number(da[1]);
      const count = Number(da[2]);
      if (line < 1 || !Number.isSafeInteger(line)) return bad(n, `line number ${da[1]} is not a line`);
      if (!Number.isSafeInteger(count)) return bad(n, `execution count ${da[2]} is too large`);
      const ofFile = lines.get(file) ?? new Map<number, boolean>();
      lines.set(file, ofFile);
      ofFile.set(line, (ofFile.get(line) ?? false) || count > 0);
      sawDa = true;
      continue;
    }
    const total = COUNT.exec(row);
    if (total) {
      if (file === null) return bad(n, `\`${total[1]}:\` outside a record`);
      const value = Number(total[2]);
      if (!Number.isSafeInteger(value)) return bad(n, `${total[1]} ${total[2]} is too large`);
      if (total[1] === "LF") found = value;
      else hit = value;
      continue;
    }
    if (OTHER.test(row)) {
      if (!row.startsWith("TN:") && !row.startsWith("VER:") && file === null)
        return bad(n, `\`${row.slice(0, row.indexOf(":"))}:\` outside a record`);
      continue;
    }
    return bad(n, `not an lcov line: ${JSON.stringify(row.slice(0, 60))}`);
  }
  if (file !== null)
    return { problem: `lcov: the record of ${file} has no \`end_of_record\` (a cut-off file?)` };
  if (records === 0) return { problem: "lcov: the report has no records (no `SF:` … `end_of_record`)" };

  let covered = 0;
  let total = 0;
  for (const ofFile of lines.values()) {
    total += ofFile.size;
    for (const ran of ofFile.values()) if (ran) covered++;
  }
  for (const [name, counts] of totalsOnly) {
    if (lines.has(name)) continue;
    total += counts.found;
    covered += counts.hit;
  }
  return coverageFrom("lcov", "lines", covered, total);
}
