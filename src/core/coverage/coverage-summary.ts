/**
 * What every coverage report format comes down to for the test gate: how many of the measured units (lines, or
 * statements for Go) the tests ran, out of how many. The report is written by the quality commands in the agent's
 * work tree, so it is agent-written data: a parser returns a `CoverageProblem` for anything it cannot read
 * exactly (never throws, never guesses a number).
 */

export type CoverageFormat = "lcov" | "istanbul-summary" | "cobertura" | "go-cover";

export interface CoverageSummary {
  format: CoverageFormat;
  /** What was counted: lines (lcov, Istanbul, Cobertura) or statements (Go's cover profile). */
  unit: "lines" | "statements";
  covered: number;
  total: number;
  /** covered / total × 100; total is never 0 (an empty report is a problem, not 100 %). */
  percent: number;
}

export interface CoverageProblem {
  problem: string;
}

export type CoverageParse = CoverageSummary | CoverageProblem;

export function isCoverageProblem(parse: CoverageParse): parse is CoverageProblem {
  return "problem" in parse;
}

export const FORMAT_NAMES: Record<CoverageFormat, string> = {
  lcov: "lcov",
  "istanbul-summary": "Istanbul JSON summary",
  cobertura: "Cobertura XML",
  "go-cover": "Go cover profile",
};

/**
 * The summary from counts, or the problem with them. Counts must be whole, non-negative, covered ≤ total, and
 * something must have been measured: a report that counts nothing cannot show that code was tested.
 */
export function coverageFrom(
  format: CoverageFormat,
  unit: CoverageSummary["unit"],
  covered: number,
  total: number,
): CoverageParse {
  const name = FORMAT_NAMES[format];
  if (!Number.isSafeInteger(covered) || !Number.isSafeInteger(total) || covered < 0 || total < 0)
    return { problem: `the ${name} report has counts that are not whole non-negative numbers` };
  if (covered > total)
    return { problem: `the ${name} report counts more covered ${unit} (${covered}) than ${unit} (${total})` };
  if (total === 0)
    return { problem: `the ${name} report measures no ${unit}: nothing shows the code was tested` };
  return { format, unit, covered, total, percent: (covered / total) * 100 };
}
