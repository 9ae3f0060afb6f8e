/**
 * The `faults.killRun` fault (owned by the Actions stand-in): a worker run is lost mid-way (SIGKILL, as when a
 * runner dies), `afterSeconds` into the run, for up to `times` runs (of one task issue, or of any).
 */
import { z } from "zod";
import type { ActionsRunner } from "../../emulator/actions/actions.js";
import type { CleanupRegistry } from "../cleanup-registry.js";
import { ScenarioError } from "../scenario-file.js";
import type { Progress } from "../scenario-progress.js";

const KillRunSchema = z.strictObject({
  /** Only runs of this task issue (default: any worker run). */
  issue: z.number().int().positive().optional(),
  /** How long after it started a run is killed. */
  afterSeconds: z.number().nonnegative().default(2),
  /** How many runs are killed. */
  times: z.number().int().positive().default(1),
});

/** `faults.killRun` (owned by the Actions stand-in): `true`, or `{ issue?, afterSeconds?, times? }`. */
export function killRunPlan(value: unknown): KillRunPlan | null {
  if (value === undefined || value === null || value === false) return null;
  const parsed = KillRunSchema.safeParse(value === true ? {} : value);
  if (!parsed.success) {
    throw new ScenarioError(
      `Invalid scenario: faults.killRun: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ")} (expected true or { issue, afterSeconds, times })`,
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
  ) {}

  /** Told of every run that starts: schedules its kill when the plan wants one more. */
  runStarted(actions: ActionsRunner, runId: number, issue: number | null): void {
    const plan = this.plan;
    if (!plan || this.kills >= plan.times) return;
    if (plan.issue !== undefined && plan.issue !== issue) return;
    this.kills += 1;
    const timer = setTimeout(() => {
      if (actions.killRun(runId))
        this.progress("human", issue, `fault: worker run ${runId} killed mid-way (lost runner)`);
    }, plan.afterSeconds * 1000);
    this.cleanups.add("a pending fault", this.cleanupOrder, () => clearTimeout(timer));
  }
}
