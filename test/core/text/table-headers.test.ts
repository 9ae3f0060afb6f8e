/**
 * No table Autopilot writes on GitHub has an empty header row (`| | |`), which GitHub renders as a blank grey
 * bar above the table: the dashboard, the job summary's figures, and (test/worker/parts.test.ts) the worker's
 * progress comment.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runMetrics, runMetricsMarkdown } from "../../../src/core/session/run-metrics.js";

/** The header rows (the line before each `|---|` delimiter row) whose cells are all empty. */
function emptyHeaderRows(markdown: string): string[] {
  const lines = markdown.split("\n");
  return lines.filter(
    (line, i) =>
      /^\|?\s*:?-{3,}/.test(lines[i + 1] ?? "") &&
      line.includes("|") &&
      line
        .replace(/^\||\|$/g, "")
        .split("|")
        .every((cell) => cell.trim() === ""),
  );
}

describe("tables Autopilot writes", () => {
  it("the check finds an empty header row", () => {
    expect(emptyHeaderRows("| | |\n|---|---|\n| a | b |")).toEqual(["| | |"]);
    expect(emptyHeaderRows("| A | B |\n|---|---|\n| a | b |")).toEqual([]);
  });

  it("the dashboard's have headers", () => {
    const dir = join(import.meta.dirname, "../../fixtures/dashboard");
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".md")))
      expect(emptyHeaderRows(readFileSync(join(dir, file), "utf8")), file).toEqual([]);
  });

  it("the controller job summary's has headers", () => {
    const metrics = runMetrics({
      repository: "acme/shop",
      now: new Date("2026-11-27T12:00:00Z"),
      event: "issues",
      statistics: null,
      reconcileSeconds: [1],
      requests: {},
      rates: [],
    });
    expect(emptyHeaderRows(runMetricsMarkdown(metrics))).toEqual([]);
  });
});
