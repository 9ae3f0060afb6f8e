/**
 * The agent each running task uses, as its worker reports it (src/core/tasks/worker-agent.ts): the dashboard's
 * Running table names it and why it fell back (design document 000 §3.2's `activeAgent` and `fallbackReason`,
 * §4.2's "Agent:" in the control bar), and a switch to a fallback is an `agent-switched` event for the outgoing
 * webhook (§3.5's `autopilot:agent-switched`), once per switch: the task's record keeps the last one sent.
 */
import { agentLabel } from "../../config/index.js";
import type { SlotLine } from "../../dashboard/index.js";
import { note, type Reconciling, taskRecord } from "../context.js";

/** The running slot's agent: only from the current dispatch's worker (an older worker's report is stale). */
export function slotAgent(
  ctx: Reconciling,
  n: number,
  current: boolean,
): Pick<SlotLine, "agent" | "fallback"> {
  const reported = current ? ctx.snapshot.workerAgents?.[n] : undefined;
  if (!reported) return {};
  if (reported.fallback) return { agent: reported.agent, fallback: reported.fallback };
  // A fallback whose switch left the worker's last warnings: the reason is not known any more.
  const primary = agentLabel(ctx.config.agents.primary);
  const onFallback = ctx.state.tasks[n]?.bestOf === undefined && reported.agent !== primary;
  return {
    agent: reported.agent,
    fallback: onFallback ? `not on ${primary}; the reason is no longer in the worker's report` : null,
  };
}

/** An `agent-switched` event for each current worker that reports a switch not sent yet. */
export function noteAgentSwitches(ctx: Reconciling): void {
  for (const [key, reported] of Object.entries(ctx.snapshot.workerAgents ?? {})) {
    const n = Number(key);
    const record = ctx.state.tasks[n];
    const result = ctx.results.get(n);
    if (!record || !result || result.dispatchId !== record.dispatchId) continue;
    if (!reported.fallback || !reported.from) continue;
    const id = `${n}-agent-switched-a${record.attempt}-${reported.from}-${reported.agent}`.slice(0, 200);
    if (record.agentSwitch === id) continue;
    taskRecord(ctx, n).agentSwitch = id;
    ctx.events.push({
      key: id,
      kind: "agent-switched",
      issue: n,
      headline: `#${n} switched from ${reported.from} to ${reported.agent}`,
      actor: "autopilot",
      from: reported.from,
      to: reported.agent,
      reason: reported.fallback,
    });
    note(ctx, `#${n}: the worker switched from ${reported.from} to ${reported.agent} (${reported.fallback})`);
  }
}
