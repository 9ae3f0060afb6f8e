/**
 * `quality`: the test gate around the quality commands (document 003's test gate): how many times a failing
 * command is run again before it counts (flaky tests), and an optional coverage threshold read from the report
 * the commands write (src/core/coverage/coverage-report.ts, src/worker/processes/coverage-gate.ts).
 */
import { z } from "zod";
import { EXPECTED } from "./config-constants.js";

/** A relative path inside the repository: no leading `/`, no `..` component, no NUL or line break. */
const REPORT_PATH = /^(?!\/)(?!(?:.*\/)?\.\.(?:\/|$))[^\0\r\n\\]+(?<!\/)$/;

const CoverageSchema = z
  .strictObject({
    threshold: z
      .number()
      .min(0)
      .max(100)
      .default(0)
      .describe(
        "Lowest percentage of lines (statements for a Go cover profile) the tests must run for the gate to " +
          "pass, such as 80. 0 turns the coverage check off (no report is looked for).",
      ),
    report: z
      .string()
      .max(300)
      .regex(REPORT_PATH)
      .default("auto")
      .meta({
        description:
          "The coverage report the quality commands write, as a path in the repository, or `auto` for the first " +
          "found of `coverage/lcov.info`, `lcov.info`, `coverage/coverage-summary.json`, " +
          "`coverage/cobertura-coverage.xml`, `coverage.xml`, `coverage.out`, `cover.out`. Its format (lcov, " +
          "Istanbul JSON summary, Cobertura XML, Go cover profile) is recognised from its content. It is removed " +
          "before the commands run, so only a report they write counts.",
        [EXPECTED]: '"auto" or a relative path inside the repository, such as coverage/lcov.info',
      }),
  })
  .prefault({})
  .describe(
    "A coverage threshold, checked after every quality command passed: below it, or with no readable report, " +
      "the gate fails like a failing command and the agent is told the measured coverage. The report is " +
      "written by the agent's tests: docs/SECURITY.md says what this does and does not prove.",
  );

export const QualitySchema = z
  .strictObject({
    reruns: z
      .int()
      .min(0)
      .max(10)
      .default(3)
      .describe(
        "Times a failing quality command is run again before it counts as failing; one that passes on a re-run " +
          "is reported as flaky. A command stopped by `iterationTimeoutMinutes` is not run again. 0 runs each once.",
      ),
    coverage: CoverageSchema,
  })
  .prefault({})
  .describe(
    "The test gate around `qualityCommands`: re-runs of failing commands (flaky tests) and an optional coverage " +
      "threshold. A gate that keeps failing (see `maxIgnoredCompletionCycles`) sends the task to a person " +
      "(`needs-human`) with the failing output, rather than failing it.",
  );
