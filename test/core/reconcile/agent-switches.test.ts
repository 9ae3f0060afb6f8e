/**
 * The agent each running task uses and why it fell back (000 §3.2, §4.2; src/core/reconcile/runs/agent-switches.ts),
 * read from the worker's result marker in its progress comment (src/worker/job/progress-comment.ts): the
 * dashboard's Running table names it, and a switch is one `agent-switched` event for the outgoing webhook.
 */
import { describe, expect, it } from "vitest";
import type { WorkerAgent } from "../../../src/core/tasks/worker-result.js";
import { latestWorkerResults } from "../../../src/github/snapshot/snapshot-nodes.js";
import { renderProgressComment } from "../../../src/worker/job/progress-comment.js";
import type { CommentNode, WorldSnapshot } from "../../../src/core/world.js";
import { issue, minutes, only, result, run, step, world } from "../world.js";

const SWITCHED: WorkerAgent = {
  name: "codex",
  fallback: "claude-code is rate limited: backoff 3 of 3",
  from: "claude-code",
};
const PRIMARY: WorkerAgent = { name: "claude-code", fallback: null, from: null };

/** The worker's progress comment as the worker renders it, with `agent` in its result marker. */
function progress(agent: WorkerAgent | undefined, warnings: string[] = []): string {
  return renderProgressComment({
    result: result(7, { status: "running", ...(agent ? { agent } : {}) }),
    elapsedMs: 60_000,
    runUrl: null,
    agent: agent?.name ?? "none",
    warnings,
  });
}

/** What the snapshot reads from Autopilot's own comment on #7. */
function read(body: string) {
  const comment: CommentNode = {
    id: 1,
    issue: 7,
    author: "autopilot[bot]",
    fromApp: true,
    body,
    createdAt: "",
  };
  return latestWorkerResults([comment]).agents[7];
}

describe("the worker's agent, from its result marker", () => {
  it("is what the worker reported, not what its visible text says", () => {
    expect(read(progress(PRIMARY))).toEqual(PRIMARY);
    expect(
      read(progress(SWITCHED, ["claude-code's limit has lifted; back to it from codex (recoverPrimary)"])),
    ).toEqual(SWITCHED);
    expect(read(progress(undefined))).toBeUndefined();
  });

  it("a marker whose agent breaks the schema is not read at all", () => {
    const body = progress(SWITCHED).replace('"name":"codex"', `"name":"${"x".repeat(121)}"`);
    expect(read(body)).toBeUndefined();
  });
});

describe("the dashboard and the webhook", () => {
  /** #7's worker runs (its run live), reporting `agent`. */
  function running(agent: WorkerAgent | undefined) {
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
    const { w, state } = running(SWITCHED);
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
    const { w, state } = running(PRIMARY);
    const next = step(w, state, { now: minutes(3) });
    const body = only(next.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toMatch(/\| claude-code \|/);
    expect(body).not.toContain("fell back");
    expect(next.decision.events).toBeUndefined();
  });
});
