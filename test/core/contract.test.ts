import { describe, expect, it } from "vitest";
import {
  candidateBranchName,
  candidateOfBranch,
  commentProcessedRule,
  dispatchLockRef,
  humanGateMarker,
  issueOfPrMarker,
  issueOfTaskBranch,
  mentionsWorkerResult,
  prMarker,
  taskBranchName,
} from "../../src/core/contract.js";
import { parseHumanGateMarker } from "../../src/core/gates/gates.js";
import { renderWorkerResultMarker } from "../../src/core/tasks/worker-result.js";
import { workerResult } from "../github/fixtures.js";

describe("contracts between the controller, the worker and GitHub", () => {
  it("names a task branch and reads the issue back from it", () => {
    expect(taskBranchName("autopilot/", 7)).toBe("autopilot/issue-7");
    expect(issueOfTaskBranch("autopilot/", "autopilot/issue-7")).toBe(7);
    expect(issueOfTaskBranch("autopilot/", "autopilot/issue-7x")).toBeNull();
    expect(issueOfTaskBranch("autopilot/", "other/issue-7")).toBeNull();
    expect(issueOfTaskBranch("a.b/", "a.b/issue-3")).toBe(3);
    expect(issueOfTaskBranch("a.b/", "axb/issue-3")).toBeNull();
  });

  it("names a best-of candidate's branch beside the task branch, and reads it back", () => {
    expect(candidateBranchName("autopilot/", 7, 2)).toBe("autopilot/issue-7-candidate-2");
    expect(candidateOfBranch("autopilot/", "autopilot/issue-7-candidate-2")).toEqual({
      issue: 7,
      candidate: 2,
    });
    // The task branch is not a candidate's, and a candidate's is not the task's.
    expect(candidateOfBranch("autopilot/", "autopilot/issue-7")).toBeNull();
    expect(issueOfTaskBranch("autopilot/", "autopilot/issue-7-candidate-2")).toBeNull();
    expect(candidateOfBranch("autopilot/", "other/issue-7-candidate-2")).toBeNull();
    expect(candidateOfBranch("autopilot/", "autopilot/issue-7-candidate-22")).toBeNull();
  });

  it("names the dispatch lock ref of an attempt", () => {
    expect(dispatchLockRef(5, 2)).toBe("refs/autopilot/dispatch/issue-5-attempt-2");
  });

  it("writes the PR and human-gate markers the readers parse", () => {
    expect(prMarker(4)).toBe("<!-- autopilot:pr issue=4 -->");
    expect(issueOfPrMarker(`Closes #4\n\n${prMarker(4)}`)).toBe(4);
    expect(issueOfPrMarker("Closes #4")).toBeNull();
    const gate = humanGateMarker({
      fired: true,
      rules: [{ rule: "secrets", where: "diff", match: "-->", neverAutoApprove: false }],
    });
    expect(gate).not.toMatch(/-->[\s\S]*-->/);
    expect(parseHumanGateMarker(gate)).toEqual(["secrets"]);
  });

  it("recognises a worker-result marker", () => {
    const marker = renderWorkerResultMarker(workerResult({ issue: 1 }));
    expect(mentionsWorkerResult(marker)).toBe(true);
    expect(mentionsWorkerResult("a person's words")).toBe(false);
  });

  it("treats acknowledged, remembered and cursor-covered comments as processed", () => {
    const processed = commentProcessedRule({ processed: [12], cursor: { id: 10 } });
    expect(processed({ id: 9 })).toBe(true);
    expect(processed({ id: 10 })).toBe(true);
    expect(processed({ id: 11 })).toBe(false);
    expect(processed({ id: 12 })).toBe(true);
    expect(processed({ id: 13, acknowledged: true })).toBe(true);
    expect(commentProcessedRule(null)({ id: 1 })).toBe(false);
  });
});
