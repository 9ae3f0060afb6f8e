import { describe, expect, it } from "vitest";
import { type AgentExitInput, decideAgentExit } from "../../../src/core/agent/agent-exit.js";
import type { TaskStatus } from "../../../src/core/tasks/task.js";

describe("decideAgentExit: agent exit handling", () => {
  const base: AgentExitInput = { exitCode: 0, signal: { kind: "none" } };
  // [exit condition, input, status, action]
  const rows: [string, AgentExitInput, TaskStatus, string][] = [
    ["0 + COMPLETE", { ...base, signal: { kind: "complete" }, quality: "pass" }, "review", "open_pr"],
    [
      "0 + COMPLETE (tests fail)",
      { ...base, signal: { kind: "complete" }, quality: "fail" },
      "in-progress",
      "continue",
    ],
    ["0 + no signal", base, "in-progress", "continue"],
    ["0 + BLOCKED", { ...base, signal: { kind: "blocked", text: "missing secret" } }, "blocked", "blocked"],
    ["!= 0", { ...base, exitCode: 2 }, "failed", "fail"],
    [
      "!= 0 even with a COMPLETE signal",
      { exitCode: 1, signal: { kind: "complete" }, quality: "pass" },
      "failed",
      "fail",
    ],
    [
      "killed while the job is cancelled (the worker's own SIGTERM)",
      { exitCode: null, processSignal: "SIGTERM", cancelled: true, signal: { kind: "none" } },
      "ready",
      "release",
    ],
    [
      "killed while the job is cancelled (the worker's SIGKILL after the grace)",
      { exitCode: null, processSignal: "SIGKILL", cancelled: true, signal: { kind: "none" } },
      "ready",
      "release",
    ],
    [
      "SIGKILL the worker did not send (the OOM killer)",
      { exitCode: null, processSignal: "SIGKILL", signal: { kind: "none" } },
      "failed",
      "fail",
    ],
    [
      "SIGSEGV (its own crash)",
      { exitCode: null, processSignal: "SIGSEGV", signal: { kind: "none" } },
      "failed",
      "fail",
    ],
    [
      "SIGTERM the worker did not send",
      { exitCode: null, processSignal: "SIGTERM", signal: { kind: "complete" }, quality: "pass" },
      "failed",
      "fail",
    ],
    // Beyond the seed's table:
    [
      "0 + NEEDS_HUMAN",
      { ...base, signal: { kind: "needs_human", text: "which DB?" } },
      "needs-human",
      "needs_human",
    ],
    [
      "killed by the per-iteration timeout",
      { exitCode: null, processSignal: "SIGKILL", iterationTimedOut: true, signal: { kind: "none" } },
      "in-progress",
      "continue",
    ],
  ];
  it.each(rows)("%s", (_row, input, status, action) => {
    const d = decideAgentExit(input);
    expect([d.status, d.action]).toEqual([status, action]);
  });

  it("keeps the branch, checkpoints and alerts as the table says", () => {
    const cancelled = decideAgentExit({
      exitCode: null,
      processSignal: "SIGTERM",
      cancelled: true,
      signal: { kind: "none" },
    });
    expect(cancelled).toMatchObject({ checkpoint: true, keepBranch: true, alert: false }); // commit, release
    const crashed = decideAgentExit({ exitCode: null, processSignal: "SIGKILL", signal: { kind: "none" } });
    expect(crashed).toMatchObject({ checkpoint: true, keepBranch: true, alert: true }); // a failed attempt
    expect(crashed.reason).toContain("killed by SIGKILL, not by the worker");
    const failed = decideAgentExit({ exitCode: 3, signal: { kind: "none" } });
    expect(failed).toMatchObject({ keepBranch: true, alert: true, reason: "agent exited with code 3" });
    const blocked = decideAgentExit({ exitCode: 0, signal: { kind: "blocked", text: "missing secret" } });
    expect(blocked).toMatchObject({ alert: true, reason: "blocked: missing secret" }); // log reason, alert
  });
});
