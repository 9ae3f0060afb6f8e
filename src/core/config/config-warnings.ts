/** Remarks about a configuration that is valid but probably not what was meant. */
import type { AgentConfig, AutopilotConfig } from "./config-schema.js";

/** GitHub-hosted runners end a job after this many minutes. */
const HOSTED_RUNNER_JOB_LIMIT_MINUTES = 360;

/** Non-fatal remarks about a valid configuration. */
export function configWarnings(config: AutopilotConfig): string[] {
  const warnings: string[] = [];
  if (config.timeoutMinutes > HOSTED_RUNNER_JOB_LIMIT_MINUTES) {
    warnings.push(
      `timeoutMinutes is ${config.timeoutMinutes}, but GitHub-hosted runners stop a job after ` +
        `${HOSTED_RUNNER_JOB_LIMIT_MINUTES} minutes; only self-hosted runners allow more.`,
    );
  }
  if (config.iterationTimeoutMinutes > config.timeoutMinutes) {
    warnings.push(
      `iterationTimeoutMinutes (${config.iterationTimeoutMinutes}) is longer than timeoutMinutes ` +
        `(${config.timeoutMinutes}): the job's wall clock will end a long iteration first.`,
    );
  }
  const agents: [string, AgentConfig][] = [
    ["agents.primary", config.agents.primary],
    ...config.agents.fallbacks.map((agent, i): [string, AgentConfig] => [`agents.fallbacks[${i}]`, agent]),
    ...(config.review.agent ? [["review.agent", config.review.agent] as [string, AgentConfig]] : []),
  ];
  for (const [path, agent] of agents) {
    if (agent.preset !== "custom" && agent.command !== null) {
      warnings.push(
        `${path}.command is ignored: it is used only with preset "custom" (preset is "${agent.preset}").`,
      );
    }
  }
  const reviewer = config.review.agent;
  if (
    reviewer &&
    reviewer.preset === config.agents.primary.preset &&
    reviewer.model === config.agents.primary.model
  )
    warnings.push(
      `review.agent is the same preset and model as agents.primary (${reviewer.preset}): a reviewer that is the ` +
        "author's twin tends to agree with it; prefer another preset or model.",
    );
  for (const unit of ["tokens", "usd"] as const) {
    const task = config.budgets.task[unit];
    const session = config.budgets.session[unit];
    if (task !== null && session !== null && task > session) {
      warnings.push(`budgets.task.${unit} (${task}) is larger than budgets.session.${unit} (${session}).`);
    }
  }
  return warnings;
}
