/**
 * The harness's side of `autopilot start`, `autopilot sandbox` and `autopilot status --report`: run a scenario
 * with progress lines, print the final dashboard and summary table, and summarize a saved report. The CLI
 * (src/cli/main.ts) reaches this module only through its one dynamic import (src/cli/load-sandbox.ts), so the
 * product's own commands load none of the sandbox.
 */
import { readFileSync } from "node:fs";
import { type CliIo, EXIT, untilInterrupted } from "../../src/cli/cli-io.js";
import { WebViewPortError } from "../emulator/web/web-view.js";
import { withControllerMode } from "./controllers/controller-mode.js";
import {
  describeDemoIsolation,
  probeMachineWalls,
  strongestIsolation,
  withDemoIsolation,
} from "./demo-isolation.js";
import {
  DEFAULT_SCENARIO,
  MissingPartsError,
  type ProgressEvent,
  reportPassed,
  runScenario,
  type SandboxAccess,
  type ScenarioReport,
} from "./run-scenario.js";
import { loadScenario, type Scenario, ScenarioError } from "./scenario-file.js";
import { counted } from "../../src/core/text/plural.js";

/** `autopilot sandbox`'s options (`start` runs the bundled demo with a title of its own). */
export interface SandboxCommandOptions {
  scenario?: string;
  report?: string;
  controller?: string;
  quiet?: boolean;
  verbose?: boolean;
  keepWorkspaces?: boolean;
  title?: string;
  port?: number;
  keep?: boolean;
  /** How the user runs Autopilot (src/cli/invocation.ts): the doctor command `keep` prints starts with it. */
  cli?: string;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function formatProgress(event: ProgressEvent, titles: Map<number, string>): string {
  const time = `[${(event.atMs / 1000).toFixed(1).padStart(6)}s]`;
  const subject = event.issue
    ? pad(`#${event.issue} ${(titles.get(event.issue) ?? "").slice(0, 28)}`, 32)
    : pad("", 32);
  return `${time} ${subject} ${event.message}`;
}

/** The final table: one line per issue, then requests and time. */
export function renderSummary(report: ScenarioReport): string[] {
  const lines: string[] = [];
  const width = Math.min(40, Math.max(...report.issues.map((i) => i.title.length), 5));
  lines.push(`${pad("#", 4)} ${pad("issue", width)}  ${pad("state", 12)} ${pad("PR", 12)} iterations`);
  for (const issue of report.issues) {
    const pr = issue.pr ? `#${issue.pr.number}${issue.pr.merged ? " merged" : ""}` : "-";
    lines.push(
      `${pad(String(issue.number), 4)} ${pad(issue.title.slice(0, width), width)}  ${pad(issue.state, 12)} ${pad(pr, 12)} ${issue.iterations}`,
    );
  }
  lines.push("");
  const byKind = Object.entries(report.requests.byTokenKind)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ");
  lines.push(`GitHub requests by Autopilot: ${report.requests.total}${byKind ? ` (${byKind})` : ""}`);
  const top = Object.entries(report.requests.byEndpoint)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([endpoint, n]) => `  ${String(n).padStart(5)}  ${endpoint}`);
  lines.push(...top);
  lines.push(
    `Worker runs: ${report.runs.total} (${Object.entries(report.runs.byConclusion)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")})`,
  );
  const c = report.controllerRuns;
  if (c) {
    lines.push(
      `Controller runs (Actions): ${c.total} — ${c.started} ran, ${c.skipped} skipped, ${c.cancelledPending} replaced while pending${c.failed ? `, ${c.failed} failed` : ""}; ${c.perCompletedTask ?? "-"} per completed task, ${counted(c.billedMinutes, "billed minute")} (${c.billedMinutesPerCompletedTask ?? "-"} per completed task)`,
    );
  }
  if (report.validationFailures.length) {
    lines.push(`Requests GitHub would have rejected: ${report.validationFailures.length}`);
    for (const f of report.validationFailures.slice(0, 5))
      lines.push(`  ${f.method} ${f.path}: ${f.message.split("\n")[0]}`);
  }
  if (!report.expectations.ok) {
    lines.push("Expectations not met:");
    for (const m of report.expectations.mismatches)
      lines.push(`  #${m.number}: expected ${m.expected}, got ${m.actual}`);
    for (const line of report.expectations.unmet ?? []) lines.push(`  ${line}`);
  }
  lines.push(`Outcome: ${report.outcome} in ${(report.durationMs / 1000).toFixed(1)}s`);
  if (report.error) lines.push(`Error: ${report.error.split("\n").slice(0, 3).join(" | ")}`);
  return lines;
}

/**
 * The doctor command that checks the sandbox's repository as it would a real one (src/cli/doctor.ts): the
 * sandbox answers GitHub's API, and its admin's token reads what doctor reads.
 */
function rehearsal(access: SandboxAccess, cli: string): string[] {
  return [
    "Rehearse the setup checks against it, in another terminal:",
    `  GITHUB_API_URL=${access.apiUrl} GITHUB_TOKEN=${access.token} ${cli} doctor --repo ${access.repo}`,
  ];
}

export async function runSandboxCommand(io: CliIo, options: SandboxCommandOptions): Promise<number> {
  let scenario: Scenario;
  const file = options.scenario ?? DEFAULT_SCENARIO;
  try {
    scenario = loadScenario(file);
  } catch (error) {
    io.err((error as Error).message);
    return EXIT.usage;
  }
  if (options.controller !== undefined) {
    if (options.controller !== "hosted" && options.controller !== "actions") {
      io.err(`--controller must be hosted or actions, not "${options.controller}".`);
      return EXIT.usage;
    }
    scenario = withControllerMode(scenario, options.controller);
  }
  // The bundled demo runs its own scripted agent behind the strongest wall this machine allows
  // (demo-isolation.ts), says which, and ends as soon as its session pauses; other scenarios run as written.
  const demo = options.scenario === undefined;
  const walls = demo ? await probeMachineWalls() : null;
  const isolation = walls ? strongestIsolation(walls) : null;
  if (walls && isolation) scenario = withDemoIsolation(scenario, isolation, walls);
  const titles = new Map(scenario.issues.map((issue, i) => [i + 1, issue.title]));
  if (!options.quiet) {
    io.out(options.title ?? `Running scenario "${scenario.name}" on the offline sandbox (${file})`);
    if (scenario.description) io.out(scenario.description);
    if (walls && isolation) for (const line of describeDemoIsolation(isolation, walls)) io.out(line);
    io.out("");
  }
  let report: ScenarioReport;
  let webUrl = "";
  let printed = false;
  try {
    report = await runScenario(scenario, {
      ...(options.report ? { report: options.report } : {}),
      verbose: options.verbose ?? false,
      endOnPause: demo,
      keepWorkspaces: options.keepWorkspaces ?? false,
      onProgress: options.quiet ? undefined : (event) => io.out(formatProgress(event, titles)),
      webPort: options.port ?? 0,
      onWebView: (url) => {
        webUrl = url;
        io.out(`Watch it as GitHub would show it: ${url}`);
        if (!options.quiet) io.out("");
      },
      ...(options.keep
        ? {
            keep: async (finished: ScenarioReport, access: SandboxAccess) => {
              // The report file is written once everything has stopped, after Ctrl-C.
              printRunEnd(io, finished, {
                quiet: options.quiet ?? false,
                verbose: options.verbose ?? false,
                webUrl,
                keptUp: true,
              });
              printed = true;
              io.out(`The sandbox and its pages stay up at ${webUrl} — press Ctrl-C to stop.`);
              for (const line of rehearsal(access, options.cli ?? "node bin/autopilot.js")) io.out(line);
              await untilInterrupted();
            },
          }
        : {}),
    });
  } catch (error) {
    if (error instanceof MissingPartsError) {
      io.err(error.message);
      return EXIT.missing;
    }
    if (error instanceof ScenarioError || error instanceof WebViewPortError) {
      io.err(error.message);
      return EXIT.usage;
    }
    io.err(`The sandbox failed: ${(error as Error).stack ?? String(error)}`);
    return EXIT.failed;
  }
  if (!printed) printRunEnd(io, report, { ...options, webUrl });
  else if (options.report) io.out(`Report written to ${options.report}`);
  if (report.outcome === "interrupted") return EXIT.interrupted;
  return reportPassed(report) ? EXIT.ok : EXIT.failed;
}

/**
 * The end of a run in the terminal: the summary table and where the dashboard is, rendered as GitHub renders
 * it (the web view's page of the tracking issue), rather than its raw Markdown, which `--verbose` still prints.
 */
export function printRunEnd(
  io: CliIo,
  report: ScenarioReport,
  options: { quiet?: boolean; verbose?: boolean; report?: string; webUrl?: string; keptUp?: boolean },
): void {
  io.out("");
  if (report.dashboard && options.verbose && !options.quiet) {
    io.out("──── Dashboard (the tracking issue) ────");
    io.out(report.dashboard);
    io.out("────────────────────────────────────────");
    io.out("");
  }
  for (const line of renderSummary(report)) io.out(line);
  const dashboard = dashboardLine(report, options.webUrl ?? "", options.keptUp ?? false);
  if (dashboard) io.out(dashboard);
  if (options.report) io.out(`Report written to ${options.report}`);
}

/** Where the run's dashboard is: its page while the sandbox is up, else how to keep it up next time. */
function dashboardLine(report: ScenarioReport, webUrl: string, keptUp: boolean): string | null {
  if (!report.dashboardPath || !webUrl) return null;
  const url = `${webUrl.replace(/\/+$/, "")}${report.dashboardPath}`;
  return keptUp
    ? `Dashboard: ${url}`
    : `Dashboard: ${url} (up while the run was; \`--keep\` keeps the sandbox and its pages up after the run)`;
}

/** `autopilot status --report FILE`: the saved report's dashboard and summary; exit 0 when it passed. */
export function summarizeReport(io: CliIo, file: string): number {
  let report: ScenarioReport;
  try {
    report = JSON.parse(readFileSync(file, "utf8")) as ScenarioReport;
  } catch (error) {
    io.err(`Cannot read the report ${file}: ${(error as Error).message}`);
    return EXIT.usage;
  }
  if (report.dashboard) {
    io.out(report.dashboard);
    io.out("");
  }
  for (const line of renderSummary(report)) io.out(line);
  return reportPassed(report) ? EXIT.ok : EXIT.failed;
}
