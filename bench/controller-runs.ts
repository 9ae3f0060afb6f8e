/**
 * Controller runs per completed task in the Actions-only mode: the bundled demo scenario (scenarios/demo.yml)
 * with the controller workflow template run by the sandbox's Actions stand-in on its events and schedule.
 * Each run whose job is not skipped is a billed job on a real runner; skipped runs are free.
 *
 *   npx tsx bench/controller-runs.ts [demo time cap in seconds]
 */
import { loadScenario } from "../sandbox/scenario/scenario-file.js";
import { withControllerMode } from "../sandbox/scenario/controllers/controller-mode.js";
import { DEFAULT_SCENARIO, runScenario } from "../sandbox/scenario/run-scenario.js";
import { formatInt, isMain, machineLine, printTable } from "./lib.js";

export async function runControllerRunsBench(capSeconds: number | null): Promise<void> {
  const scenario = withControllerMode(loadScenario(DEFAULT_SCENARIO), "actions");
  let report: Awaited<ReturnType<typeof runScenario>>;
  try {
    report = await runScenario(scenario, {
      handleSignals: false,
      ...(capSeconds !== null ? { signal: AbortSignal.timeout(capSeconds * 1000) } : {}),
    });
  } catch (error) {
    printTable(
      "Controller runs per completed task, Actions-only mode, demo scenario",
      [["status"], ["not measured"]],
      [`The demo scenario could not run: ${(error as Error).message.split("\n").join(" ")}`],
    );
    return;
  }
  const runs = report.controllerRuns;
  const done = report.issues.filter((i) => i.state === "done").length;
  const per = (n: number) => (done > 0 ? (n / done).toFixed(1) : "—");
  const events = Object.entries(runs?.byEvent ?? {}).sort((a, b) => b[1] - a[1]);
  printTable(
    `Controller runs per completed task, Actions-only mode, demo scenario (${done} of ${report.issues.length} tasks done)`,
    [
      ["runs", "count", "per done task"],
      ["**job ran (billed)**", `**${formatInt(runs?.started ?? 0)}**`, `**${per(runs?.started ?? 0)}**`],
      [
        "**billed minutes** (each job rounded up to a whole minute)",
        `**${formatInt(runs?.billedMinutes ?? 0)}**`,
        `**${per(runs?.billedMinutes ?? 0)}**`,
      ],
      ["job skipped by its `if:` (free)", formatInt(runs?.skipped ?? 0), per(runs?.skipped ?? 0)],
      [
        "replaced while pending (concurrency group)",
        formatInt(runs?.cancelledPending ?? 0),
        per(runs?.cancelledPending ?? 0),
      ],
      ["failed", formatInt(runs?.failed ?? 0), per(runs?.failed ?? 0)],
      ...events.map(([event, n]) => [
        `started by \`${event}\` (job ran)`,
        `${formatInt(n)} (${formatInt(runs?.startedByEvent[event] ?? 0)})`,
        "",
      ]),
    ],
    [
      `Run: outcome ${report.outcome} after ${(report.durationMs / 1000).toFixed(1)} s; ${report.runs.total} worker runs. The schedule (\`*/10\`) runs every 10 controller ticks of the scenario (one cron minute = limits.tickMs = 1 s): a sandbox worker run takes longer, relative to that, than a real one, so the schedule's share is larger here than on GitHub.`,
      "A run GitHub starts and the job's `if:` skips costs no runner minutes: the template skips issue and comment events by a bot (its own labels, dashboard edits, each worker's progress edit), a bot's pushes and pull request events other than closed/reopened, fork pull requests, and scheduled runs while the repository variable AUTOPILOT_WAKE says nothing waits on time (idle: scenarios/idle-day.yml).",
    ],
  );
}

if (isMain(import.meta.url)) {
  console.log(machineLine());
  const cap = process.argv[2] ? Number(process.argv[2]) : null;
  await runControllerRunsBench(cap);
}
