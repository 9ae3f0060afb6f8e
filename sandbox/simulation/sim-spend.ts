/**
 * A job's spend as the simulated worker meters it in a world with `budgets` (docs/WORKER.md, steps 6 and 7): the
 * task's totals carried from the task's earlier result (src/worker/job/claim.ts), the checks at each iteration
 * boundary (the task's budget, then the session's status and what the controller's session-budget marker says
 * is left, through the worker's own functions), and each agent run metered call by call against its cap (what is
 * left of the task's budget and of this worker's share of the session's), stopped at the first call that reaches
 * it. The controller is under test: the marker it publishes decides the shares.
 */
import type { AutopilotConfig } from "../../src/core/config/index.js";
import { sessionShareLeft, sessionWantsStop } from "../../src/worker/job/session-status.js";
import { taskBudgetExceeded } from "../../src/worker/job/task-budget.js";

type Budgets = AutopilotConfig["budgets"];

/** One API call's usage, as a CLI streams it. */
interface CallUsage {
  input: number;
  output: number;
  usd: number;
}

/** An ordinary agent's call; an iteration makes a few. */
export const ORDINARY_CALL: CallUsage = { input: 250, output: 50, usd: 0.0025 };
/** The `spend` behaviour's call in a world with budgets: an agent that would overrun any budget given. */
export const HUNGRY_CALL: CallUsage = { input: 2000, output: 400, usd: 0.02 };

/** Why a job ends at an iteration boundary, as the worker reports it. */
interface BoundaryStop {
  outcome: "budget_exceeded" | "paused";
  reason: string;
}

export class JobSpend {
  input: number;
  output: number;
  usd: number;
  /** Tokens of the call that crossed the run's cap, when a run was stopped at it (the overrun the docs allow). */
  overrun = 0;
  private sessionLeft: { tokens: number | null; usd: number | null } | null = null;

  constructor(
    private readonly issue: number,
    private readonly budgets: Budgets,
    private readonly maxParallel: number,
    carried: { input: number; output: number; usd: number },
  ) {
    this.input = carried.input;
    this.output = carried.output;
    this.usd = carried.usd;
  }

  tokens(): number {
    return this.input + this.output;
  }

  /** The checks before an agent run (src/worker/job/iteration-boundary.ts `stopAtBoundary`). */
  boundary(trackingBody: string | null): BoundaryStop | null {
    const usage = { tokens: { input: this.input, output: this.output }, costUsd: this.usd };
    const task = taskBudgetExceeded(this.budgets.task, usage);
    if (task) return { outcome: "budget_exceeded", reason: task };
    if (trackingBody === null) return null;
    const mine = { issue: this.issue, tokens: this.tokens(), usd: this.usd };
    this.sessionLeft = sessionShareLeft(trackingBody, mine, this.maxParallel);
    const { stop, status } = sessionWantsStop(trackingBody, mine);
    return stop
      ? { outcome: "paused", reason: `session is ${status}; work so far is committed and pushed` }
      : null;
  }

  /**
   * One agent run of `calls` calls, metered as src/worker/job/agent-iteration.ts does: stopped at the first call
   * whose usage reaches the run's cap. Returns why it was stopped, or null when it ran all its calls.
   */
  run(calls: number, call: CallUsage): string | null {
    const task = this.budgets.task;
    const smaller = (a: number | null, b: number | null) =>
      a === null ? b : b === null ? a : Math.min(a, b);
    const capTokens = smaller(
      task.tokens === null ? null : Math.max(0, task.tokens - this.tokens()),
      this.sessionLeft?.tokens ?? null,
    );
    const capUsd = smaller(
      task.usd === null ? null : Math.max(0, task.usd - this.usd),
      this.sessionLeft?.usd ?? null,
    );
    let tokens = 0;
    let usd = 0;
    for (let k = 0; k < calls; k++) {
      tokens += call.input + call.output;
      usd += call.usd;
      this.input += call.input;
      this.output += call.output;
      this.usd = Math.round((this.usd + call.usd) * 1e6) / 1e6;
      if (capTokens !== null && tokens >= capTokens) {
        this.overrun = call.input + call.output;
        return `the run's usage reached ${tokens} tokens (budget ${capTokens} tokens left)`;
      }
      if (capUsd !== null && usd >= capUsd) {
        this.overrun = call.input + call.output;
        return `the run's usage reached $${usd.toFixed(2)} (budget $${capUsd.toFixed(2)} left)`;
      }
    }
    return null;
  }
}
