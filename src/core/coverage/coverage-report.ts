/**
 * The test gate's coverage check (`quality.coverage` in .github/autopilot.yml): which report files it reads, how
 * their format is recognised, and whether the coverage they show meets the threshold. Pure: the worker reads the
 * file (src/worker/processes/coverage-gate.ts) and hands the text here.
 */
import { parseCobertura } from "./cobertura-coverage.js";
import {
  type CoverageParse,
  type CoverageSummary,
  FORMAT_NAMES,
  isCoverageProblem,
} from "./coverage-summary.js";
import { parseGoCoverProfile } from "./go-cover-profile.js";
import { parseIstanbulSummary } from "./istanbul-summary-coverage.js";
import { parseLcov } from "./lcov-coverage.js";

/**
 * Where `report: auto` looks, in this order: the default output of each common tool. lcov first (Jest, Vitest,
 * c8, nyc, `node --test` with the lcov reporter), then Istanbul's JSON summary and Cobertura reporters,
 * coverage.py's `coverage xml`, Go's conventional profile names.
 */
export const AUTO_COVERAGE_REPORTS = [
  "coverage/lcov.info",
  "lcov.info",
  "coverage/coverage-summary.json",
  "coverage/cobertura-coverage.xml",
  "coverage.xml",
  "coverage.out",
  "cover.out",
] as const;

/** Largest report the worker reads (a coverage report of a big monorepo is a few MB). */
export const MAX_COVERAGE_REPORT_BYTES = 32 * 1024 * 1024;

/** Reads any of the four formats, recognised by content (not by name: a report may be renamed). */
export function parseCoverageReport(text: string): CoverageParse {
  const body = text.replace(/^\uFEFF/, "");
  const start = body.trimStart();
  if (start === "") return { problem: "the report is empty" };
  if (start.startsWith("{")) return parseIstanbulSummary(start);
  if (start.startsWith("<")) return parseCobertura(start);
  if (start.startsWith("mode:")) return parseGoCoverProfile(start);
  if (/^(TN|SF|VER):/m.test(start.slice(0, 4_096))) return parseLcov(start);
  return {
    problem:
      "not a coverage report this gate reads (lcov, Istanbul JSON summary, Cobertura XML or a Go cover profile)",
  };
}

interface CoverageVerdict {
  passed: boolean;
  /** One line for the prompt, the progress notes and the PR body. */
  text: string;
  summary: CoverageSummary | null;
}

/** Percent shown with at most two decimals, never rounded up to a pass (79.996 shows as 79.99). */
export function formatPercent(percent: number): string {
  const floored = Math.floor(percent * 100) / 100;
  return `${Number.isInteger(floored) ? floored : floored.toFixed(2).replace(/0$/, "")}%`;
}

/** Whether the report meets the threshold; a report that cannot be read fails, and says why and where. */
export function judgeCoverage(parse: CoverageParse, threshold: number, report: string): CoverageVerdict {
  if (isCoverageProblem(parse)) {
    return {
      passed: false,
      text: `coverage report ${report} cannot be used: ${parse.problem}`,
      summary: null,
    };
  }
  const passed = parse.covered * 100 >= threshold * parse.total;
  const measured = `${formatPercent(parse.percent)} of ${parse.unit} (${parse.covered}/${parse.total}, ${FORMAT_NAMES[parse.format]} ${report})`;
  return {
    passed,
    text: passed
      ? `coverage ${measured} meets the threshold of ${threshold}%`
      : `coverage ${measured} is below the threshold of ${threshold}%: add tests that run the uncovered code`,
    summary: parse,
  };
}

/** The text when no report is found after the quality commands ran. */
export function missingCoverageText(report: string | "auto"): string {
  return report === "auto"
    ? `no coverage report found after the quality commands (looked for ${AUTO_COVERAGE_REPORTS.join(", ")}): ` +
        "make the test command write one, or set quality.coverage.report in .github/autopilot.yml"
    : `no coverage report at ${report} after the quality commands: make the test command write it there`;
}
