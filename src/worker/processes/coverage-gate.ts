/**
 * The coverage part of the test gate, on the worker's side: before the quality commands run, the reports they
 * are expected to write are removed from the agent's work tree, so only a report written by this gate's own
 * commands counts (not one the agent committed or left behind); after they ran and passed, the report is read —
 * through plain directories only, never a link, at most MAX_COVERAGE_REPORT_BYTES — and judged by
 * src/core/coverage/coverage-report.ts. Its verdict joins the quality results as one more gate.
 *
 * The report is still the agent's data: its tests write it. docs/SECURITY.md says what this does and does not
 * prove.
 */
import {
  AUTO_COVERAGE_REPORTS,
  formatPercent,
  judgeCoverage,
  MAX_COVERAGE_REPORT_BYTES,
  missingCoverageText,
  parseCoverageReport,
} from "../../core/coverage/coverage-report.js";
import type { QualityCommandResult } from "./quality.js";
import { readTreeFile, removeTreeFile } from "../checkout/tree-files.js";

export interface CoverageSpec {
  /** Minimum percentage of lines (statements for Go) the tests must run. */
  threshold: number;
  /** The report's path in the work tree, or `auto` for the common tools' default paths. */
  report: string;
}

function candidates(spec: CoverageSpec): readonly string[] {
  return spec.report === "auto" ? AUTO_COVERAGE_REPORTS : [spec.report];
}

/** Removes the reports a previous run or the agent left, before the quality commands run. */
export async function clearCoverageReports(tree: string, spec: CoverageSpec): Promise<void> {
  for (const report of candidates(spec)) {
    try {
      await removeTreeFile(tree, report);
    } catch {
      // A directory, or a path through a link: left in place. Reading it afterwards fails the gate and says why.
    }
  }
}

/** The coverage gate's result, shaped as one more quality command. */
export async function readCoverageGate(tree: string, spec: CoverageSpec): Promise<QualityCommandResult> {
  const started = Date.now();
  const command = `coverage ≥ ${spec.threshold}%`;
  const result = (passed: boolean, output: string, detail?: string): QualityCommandResult => ({
    command,
    passed,
    exitCode: null,
    timedOut: false,
    durationMs: Date.now() - started,
    output,
    ...(detail ? { detail } : {}),
  });
  for (const report of candidates(spec)) {
    let text: string | null;
    try {
      text = await readTreeFile(tree, report, { maxBytes: MAX_COVERAGE_REPORT_BYTES });
    } catch (error) {
      return result(false, `coverage report ${report} cannot be read: ${(error as Error).message}`);
    }
    if (text === null) continue;
    const verdict = judgeCoverage(parseCoverageReport(text), spec.threshold, report);
    const measured = verdict.summary
      ? `${formatPercent(verdict.summary.percent)} of ${verdict.summary.unit}`
      : undefined;
    return result(verdict.passed, verdict.text, measured);
  }
  return result(false, missingCoverageText(spec.report));
}
