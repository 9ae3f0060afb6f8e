/**
 * Runs a scenario end to end on the sandbox and returns (and optionally writes) a JSON report: the entry
 * point of `autopilot sandbox` (src/cli/main.ts). The run's steps are in sandbox/scenario/scenario-run.ts.
 */
import { join, resolve } from "node:path";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { killRunPlan } from "./controllers/kill-run-fault.js";
import { findMissingParts, MissingPartsError } from "./missing-parts.js";
import { loadScenario, type Scenario } from "./scenario-file.js";
import type { ScenarioReport } from "./scenario-report.js";
import type { RunScenarioOptions } from "./run-scenario-options.js";
import { ScenarioRun } from "./scenario-run.js";

export const DEFAULT_SCENARIO = join(PACKAGE_ROOT, "scenarios", "demo.yml");

/** Runs a scenario file (or a parsed scenario) to the end. */
export async function runScenario(
  scenarioOrFile: string | Scenario = DEFAULT_SCENARIO,
  options: RunScenarioOptions = {},
): Promise<ScenarioReport> {
  const scenario = typeof scenarioOrFile === "string" ? loadScenario(scenarioOrFile) : scenarioOrFile;
  killRunPlan(scenario.faults?.killRun); // a bad fault is a scenario error, reported before anything starts
  const actionDir = resolve(options.actionDir ?? PACKAGE_ROOT);
  const config = scenario.repo.config;
  // The worker's default wall is the namespace sandbox: only a configuration choosing another one does without it.
  const chosen = typeof config === "string" ? /^isolation:\s*(\w+)/m.exec(config)?.[1] : config.isolation;
  const needsNamespace = chosen === undefined || chosen === "namespace";
  const parts = await findMissingParts(actionDir, options.startController, undefined, needsNamespace);
  if (parts.missing.length || !parts.startController) throw new MissingPartsError(parts.missing);
  return new ScenarioRun(scenario, options, { actionDir, startController: parts.startController }).run();
}

// What the callers of `runScenario` use with it.
export { MissingPartsError, type StartControllerServer } from "./missing-parts.js";
export type { ProgressEvent } from "./scenario-progress.js";
export { reportPassed, type ScenarioReport } from "./scenario-report.js";
export type { SandboxAccess } from "./run-scenario-options.js";
