/** The completion modes: the objective marker, how each mode reads the agent's claim, and what the prompt teaches. */
import { describe, expect, it } from "vitest";
import { completionClaim } from "../../../src/core/agent/completion-mode.js";
import { decideAfterIteration, type IterationInput } from "../../../src/core/agent/iteration.js";
import { buildPrompt, type PromptInput } from "../../../src/core/agent/prompt.js";
import { parseSignal, signalProtocolText } from "../../../src/core/agent/signals.js";

describe("the objective marker", () => {
  it("is a completion claim that carries its statement", () => {
    expect(
      parseSignal(
        "Done.\n<promise>OBJECTIVE_MET: the endpoint returns 404 for unknown ids (test/api.test.ts)</promise>",
      ),
    ).toEqual({ kind: "complete", objective: "the endpoint returns 404 for unknown ids (test/api.test.ts)" });
    expect(parseSignal("<promise>objective met: done</promise>")).toEqual({
      kind: "complete",
      objective: "done",
    });
  });

  it("counts only in plain prose, like every signal", () => {
    expect(parseSignal("The protocol says `<promise>OBJECTIVE_MET: x</promise>`.")).toEqual({ kind: "none" });
    expect(parseSignal("```\n<promise>OBJECTIVE_MET: x</promise>\n```")).toEqual({ kind: "none" });
    expect(parseSignal("<promise>OBJECTIVES_MET: x</promise>")).toEqual({ kind: "none" });
  });

  it("the last signal wins", () => {
    expect(parseSignal("<promise>OBJECTIVE_MET: x</promise> then <promise>BLOCKED: y</promise>")).toEqual({
      kind: "blocked",
      reason: "y",
    });
  });
});

describe("completionClaim", () => {
  const plain = { kind: "complete" } as const;
  const marker = { kind: "complete", objective: "every requirement met" } as const;

  it("promise mode takes COMPLETE and the objective marker alike", () => {
    expect(completionClaim(plain, "promise")).toEqual({ signal: plain });
    expect(completionClaim(marker, "promise")).toEqual({ signal: marker });
  });

  it("objective mode takes only the marker: a plain COMPLETE is no claim, and says why", () => {
    expect(completionClaim(marker, "objective")).toEqual({ signal: marker });
    const ignored = completionClaim(plain, "objective");
    expect(ignored.signal).toEqual({ kind: "none" });
    expect(ignored.ignored).toContain("only the objective marker");
  });

  it("objective mode: the marker with a blank statement is no claim either", () => {
    for (const message of ["<promise>OBJECTIVE_MET</promise>", "<promise>OBJECTIVE_MET:   </promise>"]) {
      const claim = completionClaim(parseSignal(message), "objective");
      expect(claim.signal).toEqual({ kind: "none" });
      expect(claim.ignored).toContain("no statement");
    }
  });

  it("leaves the other signals alone", () => {
    const blocked = { kind: "blocked", reason: "no access" } as const;
    expect(completionClaim(blocked, "objective")).toEqual({ signal: blocked });
  });
});

describe("decideAfterIteration in objective mode", () => {
  const base: IterationInput = {
    signal: { kind: "complete" },
    quality: "pass",
    iteration: 1,
    maxIterations: 50,
    startedAt: 0,
    now: 1,
    timeoutMs: 0,
    iterationsWithoutCommit: 0,
    stuckThreshold: 5,
    stuckStopThreshold: 10,
    ignoredCompletions: 0,
    maxIgnoredCompletionCycles: 1,
    completion: "objective",
  };

  it("needs the quality commands: with none run the task stops as blocked, naming the setting", () => {
    const decision = decideAfterIteration({ ...base, quality: "not_run" });
    expect(decision.outcome).toBe("blocked");
    expect(decision.reason).toContain("qualityCommands");
  });

  it("opens the PR when they pass; promise mode still opens it when none ran", () => {
    expect(decideAfterIteration(base).outcome).toBe("open_pr");
    expect(decideAfterIteration({ ...base, quality: "not_run", completion: "promise" }).outcome).toBe(
      "open_pr",
    );
  });
});

describe("the signal protocol in the prompt", () => {
  const input: PromptInput = {
    repo: "acme/widgets",
    issue: { number: 7, title: "Add a greeting", body: "greet(name)" },
    branch: "autopilot/issue-7",
    iteration: 1,
    maxIterations: 50,
    humanAnswers: [],
    reviewComments: [],
    failingChecks: [],
    qualityFailures: [],
    progressNotes: "",
  };

  it("promise mode (the default) is unchanged and teaches COMPLETE", () => {
    expect(buildPrompt(input).trimEnd().endsWith(signalProtocolText())).toBe(true);
    expect(signalProtocolText()).not.toContain("OBJECTIVE_MET");
  });

  it("objective mode teaches the marker and its statement, and says a plain COMPLETE does not count", () => {
    const prompt = buildPrompt({ ...input, completion: "objective" });
    expect(prompt).toContain("`<promise>OBJECTIVE_MET: <statement></promise>`");
    expect(prompt).toContain("name each");
    expect(prompt).toContain("A plain `COMPLETE` does not count");
    expect(prompt).not.toContain("`<promise>COMPLETE</promise>`");
    // The protocol text, echoed back by an agent, is not itself a signal.
    expect(parseSignal(signalProtocolText("objective"))).toEqual({ kind: "none" });
  });
});
