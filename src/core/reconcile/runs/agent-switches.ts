/**
 * The agent each running task uses, as its worker reports it in its result marker (src/core/tasks/worker-result.ts): the dashboard's
 * Running table names it and why it fell back (design document 000 §3.2's `activeAgent` and `fallbackReason`,
 * §4.2's "Agent:" in the control bar), and a switch to a fallback is an `agent-switched` event for the outgoing
 * webhook (§3.5's `autopilot:agent-switched`), once per switch: the task's record keeps the last one sent.
 */
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
  return { agent: reported.name, fallback: reported.fallback };
}

/** An `agent-switched` event for each current worker that reports a switch not sent yet. */
export function noteAgentSwitches(ctx: Reconciling): void {
  for (const [key, reported] of Object.entries(ctx.snapshot.workerAgents ?? {})) {
    const n = Number(key);
    const record = ctx.state.tasks[n];
    const result = ctx.results.get(n);
    if (!record || !result || result.dispatchId !== record.dispatchId) continue;
    if (!reported.fallback || !reported.from) continue;
    const id = `${n}-agent-switched-a${record.attempt}-${reported.from}-${reported.name}`.slice(0, 200);
    if (record.agentSwitch === id) continue;
    taskRecord(ctx, n).agentSwitch = id;
    ctx.events.push({
      key: id,
      kind: "agent-switched",
      issue: n,
      headline: `#${n} switched from ${reported.from} to ${reported.name}`,
      actor: "autopilot",
      from: reported.from,
      to: reported.name,
      reason: reported.fallback,
    });
    note(ctx, `#${n}: the worker switched from ${reported.from} to ${reported.name} (${reported.fallback})`);
  }
}
