/**
 * The `faults.killRun` fault (owned by the Actions stand-in): a worker run is lost mid-way (SIGKILL, as when a
 * runner dies), `afterSeconds` into the run — or, with `whenAgentHangs`, `afterSeconds` after the demo agent of
 * that run hung — for up to `times` runs (of one task issue, or of any).
 *
 * A fixed delay from the run's start lands wherever a loaded machine has got to by then (a CI run once killed
 * the job between two iterations instead of inside the hanging one, so the resumed run's agent hung); the hang
 * is the moment a scenario about a lost mid-iteration runner means.
 */
import { z } from "zod";
import type { ActionsRunner } from "../../emulator/actions/actions.js";
import type { CleanupRegistry } from "../cleanup-registry.js";
import { ScenarioError } from "../scenario-file.js";
import type { Progress } from "../scenario-progress.js";
import { readDemoAgentState } from "../agent/demo-agent.js";

/** How often the agent's state is read while waiting for it to hang. */
const HANG_POLL_MS = 200;

const KillRunSchema = z
  .strictObject({
    /** Only runs of this task issue (default: any worker run). */
    issue: z.number().int().positive().optional(),
    /** How long after it started a run is killed. */
    afterSeconds: z.number().nonnegative().default(2),
    /** How many runs are killed. */
    times: z.number().int().positive().default(1),
    /**
     * Wait for the run's demo agent to hang (its `hang` behavior, recorded in the agent's state after the run
     * started), then count `afterSeconds` from there. Needs `issue`.
     */
    whenAgentHangs: z.boolean().optional(),
  })
  .refine((plan) => !plan.whenAgentHangs || plan.issue !== undefined, {
    message: "whenAgentHangs needs issue",
    path: ["whenAgentHangs"],
  });

/** `faults.killRun` (owned by the Actions stand-in): `true`, or `{ issue?, afterSeconds?, times? }`. */
export function killRunPlan(value: unknown): KillRunPlan | null {
  if (value === undefined || value === null || value === false) return null;
  const parsed = KillRunSchema.safeParse(value === true ? {} : value);
  if (!parsed.success) {
    throw new ScenarioError(
      `Invalid scenario: faults.killRun: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ")} (expected true or { issue, afterSeconds, times, whenAgentHangs })`,
    );
  }
  return parsed.data;
}

type KillRunPlan = z.infer<typeof KillRunSchema>;

/** Kills the worker runs the plan names, each `afterSeconds` after it started. */
export class RunKiller {
  private kills = 0;

  constructor(
    private readonly plan: KillRunPlan | null,
    private readonly progress: Progress,
    private readonly cleanups: CleanupRegistry,
    /** The order of the cleanup step that cancels a kill still pending. */
    private readonly cleanupOrder: number,
    /** The demo agent's script (its state, read for `whenAgentHangs`). */
    private readonly agentScript: string | null = null,
  ) {}

  /** Told of every run that starts: schedules its kill when the plan wants one more. */
  runStarted(actions: ActionsRunner, runId: number, issue: number | null): void {
    const plan = this.plan;
    if (!plan || this.kills >= plan.times) return;
    if (plan.issue !== undefined && plan.issue !== issue) return;
    this.kills += 1;
    const kill = () => {
      if (actions.killRun(runId))
        this.progress("human", issue, `fault: worker run ${runId} killed mid-way (lost runner)`);
    };
    const timers: NodeJS.Timeout[] = [];
    this.cleanups.add("a pending fault", this.cleanupOrder, () => {
      for (const t of timers) clearTimeout(t);
    });
    if (!plan.whenAgentHangs || issue === null || !this.agentScript) {
      timers.push(setTimeout(kill, plan.afterSeconds * 1000));
      return;
    }
    const script = this.agentScript;
    const startedAt = Date.now();
    // A hang recorded since this run started (a second's slack: the agent's clock and ours are one, but the
    // run's start is taken here, a moment after the stand-in's).
    const hung = () =>
      readDemoAgentState(script, issue).log.some((l) => l.hung && Date.parse(l.at) >= startedAt - 1000);
    const watch = () => {
      if (actions.getRun(runId)?.status === "completed") return;
      if (hung()) timers.push(setTimeout(kill, plan.afterSeconds * 1000));
      else timers.push(setTimeout(watch, HANG_POLL_MS));
    };
    watch();
  }
}
