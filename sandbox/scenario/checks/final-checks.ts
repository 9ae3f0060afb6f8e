/**
 * What a scenario report adds at the end of a run beyond the state it describes: every unmet expectation
 * (sandbox/scenario/checks/expectations.ts), the fault actions' checks, and the invariants
 * (sandbox/scenario/checks/invariants.ts), with a progress line for each broken invariant.
 */
import type { SeededScenario } from "../seed-scenario.js";
import { runExpectations } from "./expect-schema.js";
import { checkExpectations, countOk, describeCount } from "./expectations.js";
import { invariantsHold } from "./invariants.js";
import type { FaultCheck, ScenarioReport } from "../scenario-report.js";
import type { ScenarioWorld } from "../scenario-world.js";
import type { StoreWatch } from "../store-watch.js";

interface FinalCheckSources {
  world: ScenarioWorld;
  seeded: SeededScenario;
  watch: StoreWatch;
  /** Worker runs dispatched, by task issue. */
  runIssues: Map<number, number>;
  faultChecks: FaultCheck[];
}

/** Adds the expectations beyond final states, the fault checks and the invariants to `report`. */
export async function addFinalChecks(
  report: ScenarioReport,
  { world, seeded, watch, runIssues, faultChecks }: FinalCheckSources,
): Promise<void> {
  const { scenario, store, git, actions, observer: obs, humans, progress, repo } = world;
  const { config, scriptPath } = seeded;
  const unmet = await checkExpectations({
    scenario,
    store,
    remote: git.remote,
    repo: { owner: repo.owner, name: repo.name, defaultBranch: scenario.repo.defaultBranch },
    branchPrefix: config.branchPrefix,
    humans,
    recorder: watch.expectations,
    scriptPath,
    state: (n) => obs.state(n),
    pullFor: (n) => obs.pullFor(n),
    iterationsOf: (n) => obs.iterationsOf(n),
    runsOf: (n) => runIssues.get(n) ?? 0,
    tracking: () => obs.tracking(),
  });
  const served = runExpectations(scenario.expect).requests ?? {};
  for (const [endpoint, expected] of Object.entries(served)) {
    const actual = report.requests.byEndpoint[endpoint] ?? 0;
    if (!countOk(actual, expected))
      unmet.push(`requests: ${actual} × ${endpoint}, expected ${describeCount(expected)}`);
  }
  const alertPatterns = runExpectations(scenario.expect).alertWebhook ?? [];
  const received = world.alertReceiver?.deliveries ?? [];
  for (const pattern of alertPatterns)
    if (!received.some((d) => d.verified && new RegExp(pattern, "i").test(d.text)))
      unmet.push(`alert webhook: no signed delivery matching /${pattern}/ (${received.length} received)`);
  if (received.some((d) => !d.verified)) unmet.push("alert webhook: a delivery's signature did not verify");
  const keys = received.map((d) => d.key);
  if (new Set(keys).size !== keys.length) unmet.push("alert webhook: an alert was delivered more than once");
  report.expectations.unmet = unmet;
  if (unmet.length) report.expectations.ok = false;
  if (faultChecks.length) report.faultChecks = faultChecks;
  const inv = await watch.invariants.collect({
    git,
    actions,
    tasks: scenario.issues.map((entry, i) => ({
      number: i + 1,
      state: obs.state(i + 1),
      dependsOn: [...entry.dependsOn, ...entry.blockedBy],
      issue: obs.issue(i + 1),
    })),
    labels: { ready: config.labels.ready, exclude: config.labels.exclude },
    maxParallel: config.maxParallel,
    branchPrefix: config.branchPrefix,
    tracking: obs.tracking(),
    pullFor: (n) => obs.pullFor(n),
    checksOf: (sha) => obs.checksOf(sha),
    autoMerge: config.merge.auto,
    staleBranchSweep: config.cleanup.staleBranchDays !== "off",
    mode: config.mode,
    autoStart: config.session.autoStart,
  });
  report.invariants = inv;
  progress(
    "done",
    null,
    `invariants: ${inv.lostCommits} lost commits, ${inv.doubleDispatches} double dispatches, ${inv.unaskedDispatches} unasked dispatches, ${inv.stuckTasks} stuck tasks (checked ${inv.checked.commits} task-branch commits, ${inv.checked.runs} worker runs, ${inv.checked.tasks} tasks)`,
  );
  if (!invariantsHold(inv))
    for (const d of inv.details.filter((x) => x.kind !== "note"))
      progress("warning", d.issue, `invariant: ${d.message}`);
}
