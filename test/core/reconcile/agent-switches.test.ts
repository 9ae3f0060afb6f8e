/**
 * The agent each running task uses and why it fell back (000 §3.2, §4.2; src/core/reconcile/runs/agent-switches.ts),
 * read from the worker's progress comment as the worker writes it (src/worker/job/progress-comment.ts): the
 * dashboard's Running table names it, and a switch is one `agent-switched` event for the outgoing webhook.
 */
import { describe, expect, it } from "vitest";
import { readWorkerAgent } from "../../../src/core/tasks/worker-agent.js";
import { renderProgressComment } from "../../../src/worker/job/progress-comment.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import { issue, minutes, only, result, run, step, world } from "../world.js";

const SWITCH = "claude-code is rate limited; switching to codex (backoff 3 of 3)";

function progress(agent: string, warnings: string[]): string {
  return renderProgressComment({
    result: result(7, { status: "running" }),
    elapsedMs: 60_000,
    runUrl: null,
    agent,
    warnings,
  });
}

describe("the worker's agent, from its progress comment", () => {
  it("names the agent in use and why it left the primary; a return to the primary clears the reason", () => {
    expect(readWorkerAgent(progress("claude", []))).toEqual({ agent: "claude", fallback: null, from: null });
    expect(readWorkerAgent(progress("codex (gpt-5)", ["could not update the label", SWITCH]))).toEqual({
      agent: "codex (gpt-5)",
      fallback: "claude-code is rate limited: backoff 3 of 3",
      from: "claude-code",
    });
    const back = progress("claude-code", [
      SWITCH,
      "claude-code's limit has lifted; back to it from codex (recoverPrimary)",
    ]);
    expect(readWorkerAgent(back)).toEqual({ agent: "claude-code", fallback: null, from: null });
    expect(readWorkerAgent("no table here")).toBeNull();
  });
});

describe("the dashboard and the webhook", () => {
  /** #7's worker runs (its run live), reporting `agent`. */
  function running(agent: ReturnType<typeof readWorkerAgent>) {
    const first = step(world({ issues: [issue(7)] }), null);
    const dispatch = only(first.decision.effects, "dispatchWorker")[0]!;
    const w: WorldSnapshot = {
      ...first.world,
      runs: [run(900, 7, { dispatchId: dispatch.dispatchId, attempt: dispatch.attempt })],
      workerResults: [
        result(7, { status: "running", dispatchId: dispatch.dispatchId, attempt: dispatch.attempt }),
      ],
      workerAgents: agent ? { 7: agent } : {},
    };
    return { w, state: first.state };
  }

  it("the Running table names the agent and why it fell back; the switch is one agent-switched event", () => {
    const { w, state } = running(readWorkerAgent(progress("codex", [SWITCH])));
    const next = step(w, state, { now: minutes(3) });
    const body = only(next.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toMatch(/\| agent \|/);
    expect(body).toContain("codex (fell back: claude-code is rate limited: backoff 3 of 3)");
    expect(next.decision.events).toEqual([
      expect.objectContaining({ kind: "agent-switched", issue: 7, from: "claude-code", to: "codex" }),
    ]);
    const again = step(next.world, next.state, { now: minutes(4) });
    expect(again.decision.events).toBeUndefined();
  });

  it("on the primary: the agent alone, no event", () => {
    const { w, state } = running(readWorkerAgent(progress("claude-code", [])));
    const next = step(w, state, { now: minutes(3) });
    const body = only(next.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toMatch(/\| claude-code \|/);
    expect(body).not.toContain("fell back");
    expect(next.decision.events).toBeUndefined();
  });
});
