/** The task's own token and USD budget (`budgets.task`), counted over every attempt of the task. */
import type { AutopilotConfig } from "../../core/config/index.js";
import type { WorkerResult } from "../../core/tasks/worker-result.js";

type TaskBudget = AutopilotConfig["budgets"]["task"];
type Usage = Pick<WorkerResult, "tokens" | "costUsd">;

/** The line the prompt carries about what the task has used; null when the task has no budget. */
export function taskBudgetNote(budget: TaskBudget, usage: Usage): string | null {
  const { tokens, usd } = budget;
  const parts: string[] = [];
  const used = usage.tokens.input + usage.tokens.output;
  if (tokens !== null) parts.push(`${used} of ${tokens} tokens`);
  if (usd !== null) parts.push(`$${usage.costUsd.toFixed(2)} of $${usd.toFixed(2)}`);
  return parts.length
    ? `This task has used ${parts.join(" and ")} of its budget; the job ends when it is spent.`
    : null;
}

/** Why the task's budget is spent; null while some is left. */
export function taskBudgetExceeded(budget: TaskBudget, usage: Usage): string | null {
  const { tokens, usd } = budget;
  const used = usage.tokens.input + usage.tokens.output;
  if (tokens !== null && used >= tokens) return `the task used ${used} tokens (budget ${tokens})`;
  if (usd !== null && usage.costUsd >= usd) {
    return `the task cost $${usage.costUsd.toFixed(2)} (budget $${usd.toFixed(2)})`;
  }
  return null;
}
