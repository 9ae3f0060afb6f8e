/**
 * The end of `npm start` (and `autopilot sandbox`) in the terminal: a short summary and the dashboard's URL in
 * the web view, not the dashboard's raw Markdown (which `--verbose` still prints).
 */
import { describe, expect, it } from "vitest";
import { printRunEnd } from "../../sandbox/scenario/sandbox-command.js";
import { emptyReport } from "../../sandbox/scenario/scenario-report.js";
import { parseScenario } from "../../sandbox/scenario/scenario-file.js";

function finished() {
  const report = emptyReport(parseScenario("name: t\nissues: [{ title: Add a cart }]\n"), Date.now());
  return {
    ...report,
    outcome: "settled" as const,
    dashboard: "## Autopilot\n\n| Task | Status |\n|---|---|\n| #1 Add a cart | done |\n",
    dashboardPath: "/demo/shop/issues/7",
  };
}

function printed(options: Parameters<typeof printRunEnd>[2]): string {
  const lines: string[] = [];
  printRunEnd({ out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} }, finished(), options);
  return lines.join("\n");
}

describe("the end of a sandbox run in the terminal", () => {
  it("names the dashboard's page and prints none of its Markdown", () => {
    const text = printed({ webUrl: "http://127.0.0.1:4000/" });
    expect(text).toContain("Dashboard: http://127.0.0.1:4000/demo/shop/issues/7");
    expect(text).toContain("--keep");
    expect(text).not.toContain("| Task | Status |");
    expect(text).not.toContain("## Autopilot");
    expect(text).toMatch(/Add a cart/);
  });

  it("prints the Markdown with --verbose, and the URL alone while the pages stay up", () => {
    expect(printed({ webUrl: "http://127.0.0.1:4000", verbose: true })).toContain("| Task | Status |");
    const kept = printed({ webUrl: "http://127.0.0.1:4000", keptUp: true });
    expect(kept).toContain("Dashboard: http://127.0.0.1:4000/demo/shop/issues/7");
    expect(kept).not.toContain("up while the run was");
  });
});
