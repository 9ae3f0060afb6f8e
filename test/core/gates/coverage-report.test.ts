/**
 * The test gate's coverage parsers on reports real tools wrote (test/fixtures/coverage/README.md says which), and
 * on the broken and forged reports an agent's tree can hold: each is refused with a reason, never a crash and
 * never a number made up from it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  formatPercent,
  judgeCoverage,
  parseCoverageReport,
} from "../../../src/core/coverage/coverage-report.js";
import type { CoverageParse } from "../../../src/core/coverage/coverage-summary.js";

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "coverage", name), "utf8");

function counts(parse: CoverageParse) {
  if ("problem" in parse) throw new Error(`unexpected problem: ${parse.problem}`);
  return { format: parse.format, covered: parse.covered, total: parse.total };
}

function problem(parse: CoverageParse): string {
  if (!("problem" in parse)) throw new Error(`expected a problem, got ${JSON.stringify(parse)}`);
  return parse.problem;
}

describe("coverage reports real tools write", () => {
  it("reads node --test's lcov (both files' lines: 6 of 13 and 4 of 4)", () => {
    expect(counts(parseCoverageReport(fixture("node-test-lcov.info")))).toEqual({
      format: "lcov",
      covered: 10,
      total: 17,
    });
  });

  it("reads c8's lcov, Istanbul JSON summary and Cobertura XML of one run alike (6 of 13 lines)", () => {
    for (const name of ["c8-lcov.info", "c8-coverage-summary.json", "c8-cobertura-coverage.xml"]) {
      const parse = counts(parseCoverageReport(fixture(name)));
      expect({ name, covered: parse.covered, total: parse.total }).toEqual({ name, covered: 6, total: 13 });
    }
    expect(counts(parseCoverageReport(fixture("c8-coverage-summary.json"))).format).toBe("istanbul-summary");
    expect(counts(parseCoverageReport(fixture("c8-cobertura-coverage.xml"))).format).toBe("cobertura");
  });

  it("reads coverage.py's Cobertura XML, comments and all", () => {
    expect(counts(parseCoverageReport(fixture("coveragepy-coverage.xml")))).toEqual({
      format: "cobertura",
      covered: 27,
      total: 31,
    });
  });

  it("reads Go cover profiles by statements, a block listed twice counted once (covered if any run did)", () => {
    expect(counts(parseCoverageReport(fixture("go-cover-set.out")))).toEqual({
      format: "go-cover",
      covered: 5,
      total: 7,
    });
    expect(counts(parseCoverageReport(fixture("go-cover-count.out")))).toEqual({
      format: "go-cover",
      covered: 5,
      total: 6,
    });
  });

  it("counts a file lcov lists under two test names once, and a record with only LF/LH from those", () => {
    const text =
      "TN:unit\nSF:a.js\nDA:1,1\nDA:2,0\nend_of_record\nTN:e2e\nSF:a.js\nDA:1,0\nDA:2,3\nend_of_record\n" +
      "SF:b.js\nLF:10\nLH:4\nend_of_record\n";
    expect(counts(parseCoverageReport(text))).toEqual({ format: "lcov", covered: 6, total: 12 });
  });
});

describe("broken and forged reports are refused with the reason", () => {
  it.each([
    ["an empty file", "", /empty/],
    ["text that is no report", "all tests passed, coverage 100%\n", /not a coverage report/],
    ["lcov with a non-numeric count", "SF:a.js\nDA:5,abc\nend_of_record\n", /lcov line 2: not an lcov line/],
    ["lcov cut off mid-record", "SF:a.js\nDA:1,1\n", /no `end_of_record`/],
    ["lcov with DA outside a record", "TN:\nDA:1,1\nend_of_record\n", /outside a record/],
    ["lcov claiming more hit than found", "SF:a.js\nLF:2\nLH:5\nend_of_record\n", /LH 5 > LF 2/],
    ["lcov with line 0", "SF:a.js\nDA:0,1\nend_of_record\n", /is not a line/],
    ["lcov measuring nothing", "SF:a.js\nLF:0\nLH:0\nend_of_record\n", /measures no lines/],
    ["JSON that is not JSON", "{ total: 1", /not JSON/],
    [
      "a JSON summary without total.lines",
      '{"total":{"statements":{"total":1,"covered":1}}}',
      /total\.lines/,
    ],
    [
      "a JSON summary with more covered than total",
      '{"total":{"lines":{"total":10,"covered":11}}}',
      /more covered lines \(11\) than lines \(10\)/,
    ],
    [
      "a JSON summary with fractional counts",
      '{"total":{"lines":{"total":10.5,"covered":9}}}',
      /not whole non-negative/,
    ],
    [
      "malformed XML",
      '<coverage lines-valid="3" lines-covered="2"><packages></coverage>',
      /malformed at line 1/,
    ],
    [
      "XML whose root is not <coverage>",
      '<report lines-valid="3" lines-covered="2"/>',
      /not a single `<coverage>`/,
    ],
    ["Cobertura without counts", '<coverage line-rate="0.9"/>', /lacks whole-number/],
    [
      "Cobertura whose line-rate contradicts its counts",
      '<coverage lines-valid="100" lines-covered="10" line-rate="0.95"/>',
      /disagrees/,
    ],
    ["a Go profile without its mode line", "example.com/a.go:1.1,2.2 1 1\n", /not a coverage report/],
    ["a Go profile with a bad mode", "mode: sometimes\nexample.com/a.go:1.1,2.2 1 1\n", /first line/],
    ["a Go profile with a bad block", "mode: set\nexample.com/a.go:1.1 1 1\n", /line 2: not a block/],
    [
      "a Go profile mixing modes",
      "mode: set\nexample.com/a.go:1.1,2.2 1 1\nmode: count\n",
      /different mode line/,
    ],
  ])("%s", (_name, text, expected) => {
    expect(problem(parseCoverageReport(text))).toMatch(expected);
  });

  it("does not expand XML entities (a billion-laughs report is read as its literal counts or refused)", () => {
    const laughs =
      '<?xml version="1.0"?>\n<!DOCTYPE coverage [\n<!ENTITY a "aaaaaaaaaa">\n' +
      Array.from(
        { length: 9 },
        (_, i) => `<!ENTITY ${"b".repeat(i + 1)} "${`&${i === 0 ? "a" : "b".repeat(i)};`.repeat(10)}">`,
      ).join("\n") +
      '\n]>\n<coverage lines-valid="&bbbbbbbbb;" lines-covered="1" line-rate="1"/>\n';
    const parse = parseCoverageReport(laughs);
    expect(problem(parse)).toMatch(/Cobertura XML/);
  });

  it("is not fooled by a byte-order mark or leading blank lines", () => {
    expect(counts(parseCoverageReport(`\uFEFF\n\n${fixture("go-cover-set.out")}`)).total).toBe(7);
  });
});

describe("the threshold", () => {
  const report = (covered: number, total: number) =>
    parseCoverageReport(`{"total":{"lines":{"total":${total},"covered":${covered}}}}`);

  it("passes at exactly the threshold and fails just under it, with the measured numbers", () => {
    expect(judgeCoverage(report(80, 100), 80, "coverage/coverage-summary.json").passed).toBe(true);
    const under = judgeCoverage(report(7999, 10000), 80, "coverage/coverage-summary.json");
    expect(under.passed).toBe(false);
    expect(under.text).toContain(
      "79.99% of lines (7999/10000, Istanbul JSON summary coverage/coverage-summary.json)",
    );
    expect(under.text).toContain("below the threshold of 80%");
  });

  it("never shows a failing percentage rounded up to the threshold", () => {
    expect(formatPercent((79_999 / 100_000) * 100)).toBe("79.99%");
    expect(formatPercent(100)).toBe("100%");
  });

  it("fails an unreadable report and names the file and the problem", () => {
    const verdict = judgeCoverage(parseCoverageReport("SF:a.js\n"), 80, "coverage/lcov.info");
    expect(verdict.passed).toBe(false);
    expect(verdict.text).toMatch(/^coverage report coverage\/lcov\.info cannot be used: lcov/);
  });
});
