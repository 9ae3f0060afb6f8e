/**
 * The JSON report of a scenario run: each task's final state, PR, iterations and runs, Autopilot's requests,
 * the worker runs' conclusions, the faults injected, the dashboard at the end, and whether every expectation
 * and invariant held (`reportPassed`).
 */
import type { ControllerProcessRecord } from "./controllers/controller-fleet.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ActionsRunner } from "../emulator/actions/actions.js";
import type { Sandbox } from "../emulator/index.js";
import {
  type ControllerRunCounts,
  controllerMode,
  controllerRunCounts,
  workerRuns,
} from "./controllers/controller-mode.js";
import { readDemoAgentState } from "./agent/demo-agent.js";
import { type InvariantReport, invariantsHold } from "./checks/invariants.js";
import { issueExpectations } from "./checks/expect-schema.js";
import type { Scenario } from "./scenario-file.js";
import type { ReportState } from "./scenario-fields.js";
import { type ScenarioObserver, stripMarkers } from "./scenario-observer.js";

export interface ReportIssue {
  number: number;
  title: string;
  state: ReportState;
  labels: string[];
  pr: { number: number; merged: boolean } | null;
  /** Agent iterations across every worker job of the task (from the worker results). */
  iterations: number;
  /** Worker runs dispatched for the task. */
  runs: number;
  /** Times the demo agent actually ran for the task. */
  agentRuns: number;
}

export interface ScenarioReport {
  scenario: string;
  /** `paused`: the session paused and the run was asked to end then (the demo: `endOnPause`). */
  outcome: "settled" | "timeout" | "paused" | "interrupted" | "error";
  issues: ReportIssue[];
  requests: {
    /** Autopilot's own requests (app, installation and worker tokens). */
    total: number;
    /** Of `total`, those the rate limit counted; the rest were free (304 Not Modified, `GET /rate_limit`). */
    charged: number;
    /** Charged requests per task that ended done (null when none did): the budget a backlog spends. */
    chargedPerCompletedTask: number | null;
    byEndpoint: Record<string, number>;
    /** Charged requests only, by endpoint. */
    chargedByEndpoint: Record<string, number>;
    byTokenKind: Record<string, number>;
    /** Requests the scenario's people made (user tokens), not in `total`. */
    humans: number;
    /** GraphQL points Autopilot's queries were charged (GitHub's rateLimit.cost, a budget apart from `total`). */
    graphqlPoints?: number;
  };
  durationMs: number;
  expectations: {
    ok: boolean;
    mismatches: { number: number; expected: ReportState; actual: ReportState }[];
    /** Every other unmet expectation (sandbox/scenario/checks/expectations.ts), one readable line each. */
    unmet?: string[];
  };
  /** Worker runs (and other workflows' runs), not the controller workflow's. */
  runs: { total: number; byConclusion: Record<string, number> };
  /** Actions mode: the controller workflow's runs; absent when the controller is the hosted app. */
  controllerRuns?: ControllerRunCounts & {
    /** Controller runs whose job ran, per task that ended done (null when none did). */
    perCompletedTask: number | null;
    /** Their billed minutes (each job rounded up to a whole minute), per task that ended done. */
    billedMinutesPerCompletedTask: number | null;
  };
  /** Controller processes (fault runs and replicas: controller-fleet.ts), each with its peak memory. */
  controllerProcesses?: ControllerProcessRecord[];
  faults: Record<string, number>;
  /** Requests the sandbox rejected as invalid against GitHub's API description or schema. */
  validationFailures: { method: string; path: string; message: string }[];
  /** The tracking issue's body at the end, hidden markers removed. */
  dashboard: string | null;
  /** The tracking issue's page in the sandbox's web view (`/owner/name/issues/N`), when there is one. */
  dashboardPath?: string;
  error?: string;
  /** End-of-run invariants (sandbox/scenario/checks/invariants.ts); any count above zero fails the run. */
  invariants?: InvariantReport;
  /** Checks made by fault actions (a bad-signature webhook must be answered 400); any failure fails the run. */
  faultChecks?: FaultCheck[];
}

/** One check a fault action made (e.g. that a webhook with a bad signature was answered 400). */
export interface FaultCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** The report of a run that failed before the sandbox, the Actions stand-in and the observer were all up. */
export function emptyReport(scenario: Scenario, started: number): ScenarioReport {
  return {
    scenario: scenario.name,
    outcome: "error",
    issues: scenario.issues.map((issue, i) => ({
      number: i + 1,
      title: issue.title,
      state: "ready",
      labels: issue.labels,
      pr: null,
      iterations: 0,
      runs: 0,
      agentRuns: 0,
    })),
    requests: {
      total: 0,
      charged: 0,
      chargedPerCompletedTask: null,
      byEndpoint: {},
      chargedByEndpoint: {},
      byTokenKind: {},
      humans: 0,
    },
    durationMs: Date.now() - started,
    expectations: { ok: Object.keys(scenario.expect).length === 0, mismatches: [] },
    runs: { total: 0, byConclusion: {} },
    faults: {},
    validationFailures: [],
    dashboard: null,
  };
}

/** What a report is built from. */
interface ReportSources {
  scenario: Scenario;
  sandbox: Sandbox;
  actions: ActionsRunner;
  observer: ScenarioObserver;
  /** The demo agent's script (null: its run counts are not read). */
  scriptPath: string | null;
  /** Worker runs dispatched, by task issue. */
  runIssues: Map<number, number>;
  /** When the run started (epoch ms). */
  started: number;
}

/** The report as things stand (the expectations beyond final states and the invariants are added by the run). */
export function buildReport(
  { scenario, sandbox, actions, observer: obs, scriptPath, runIssues, started }: ReportSources,
  outcome: ScenarioReport["outcome"],
): ScenarioReport {
  obs.scanWorkerResults();
  // The seeded issues, then the created ones `expect` names (`createdIssues`: a split's sub-issues).
  const created = issueExpectations(scenario.expect)
    .map(([n]) => n)
    .filter((n) => n > scenario.issues.length)
    .sort((a, b) => a - b);
  const entries = [
    ...scenario.issues.map((entry, i) => ({ number: i + 1, title: entry.title })),
    ...created.map((number) => ({ number, title: "" })),
  ];
  const issues: ReportIssue[] = entries.map((entry) => {
    const number = entry.number;
    const issue = obs.issue(number);
    const pull = obs.pullFor(number);
    return {
      number,
      title: issue?.title ?? entry.title,
      state: obs.state(number),
      labels: [...(issue?.labels ?? [])],
      pr: pull ? { number: pull.number, merged: pull.pull.merged } : null,
      iterations: obs.iterationsOf(number),
      runs: runIssues.get(number) ?? 0,
      agentRuns: scriptPath ? readDemoAgentState(scriptPath, number).runs : 0,
    };
  });
  const ours = (r: { tokenKind: string }) => r.tokenKind !== "user" && r.tokenKind !== "none";
  const summary = sandbox.requests.summary(ours);
  const humans = sandbox.requests.count((r) => r.tokenKind === "user");
  const graphqlPoints = sandbox.requests.records.reduce((sum, r) => sum + (ours(r) ? (r.points ?? 0) : 0), 0);
  const mismatches = issueExpectations(scenario.expect)
    .flatMap(([n, e]) => (e.state ? [{ number: n, expected: e.state }] : []))
    .map(({ number, expected }) => ({
      number,
      expected,
      actual: issues.find((i) => i.number === number)?.state ?? ("ready" as ReportState),
    }))
    .filter((m) => m.expected !== m.actual);
  const byConclusion: Record<string, number> = {};
  const runs = workerRuns(actions.listRuns());
  for (const run of runs) {
    const key = run.conclusion ?? run.status;
    byConclusion[key] = (byConclusion[key] ?? 0) + 1;
  }
  const tracking = obs.tracking();
  const done = issues.filter((i) => i.state === "done").length;
  return {
    scenario: scenario.name,
    outcome,
    issues,
    requests: {
      total: summary.total,
      charged: summary.charged,
      chargedPerCompletedTask: done > 0 ? Math.round((summary.charged / done) * 10) / 10 : null,
      byEndpoint: summary.byEndpoint,
      chargedByEndpoint: summary.chargedByEndpoint,
      byTokenKind: summary.byTokenKind,
      humans,
      graphqlPoints,
    },
    durationMs: Date.now() - started,
    expectations: { ok: mismatches.length === 0, mismatches },
    runs: { total: runs.length, byConclusion },
    ...(controllerMode(scenario) === "actions"
      ? { controllerRuns: withPerTask(controllerRunCounts(actions.listRuns()), issues) }
      : {}),
    faults: { ...sandbox.faults.stats },
    validationFailures: sandbox.validationFailures.map((f) => ({
      method: f.method,
      path: f.path,
      message: f.message,
    })),
    dashboard: tracking ? stripMarkers(tracking.body ?? "") : null,
    ...(tracking ? { dashboardPath: `/${obs.repo}/issues/${tracking.number}` } : {}),
  };
}

function withPerTask(
  counts: ControllerRunCounts,
  issues: ReportIssue[],
): NonNullable<ScenarioReport["controllerRuns"]> {
  const done = issues.filter((i) => i.state === "done").length;
  const per = (n: number) => (done > 0 ? Math.round((n / done) * 10) / 10 : null);
  return {
    ...counts,
    perCompletedTask: per(counts.started),
    billedMinutesPerCompletedTask: per(counts.billedMinutes),
  };
}

/** Whether a report counts as a success: settled and every expectation met. */
export function reportPassed(report: ScenarioReport): boolean {
  return (
    report.outcome === "settled" &&
    report.expectations.ok &&
    (report.invariants === undefined || invariantsHold(report.invariants)) &&
    (report.faultChecks ?? []).every((c) => c.ok)
  );
}

/** Writes the report as JSON, creating its folder. */
export function writeReport(path: string, report: ScenarioReport): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
