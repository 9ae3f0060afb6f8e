/**
 * The controller's wake variable (src/github/wake-variable-write.ts) against the sandbox's Actions variables:
 * created on the first run, written only when its value changes, and a refusal logged, never thrown.
 */
import { describe, expect, it } from "vitest";
import { keepWakeVariable } from "../../src/github/wake-variable-write.js";
import type { OctokitSurface } from "../../src/github/transport/octokit-surface.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();

function recordingLog() {
  const lines: string[] = [];
  const keep = (m: string) => lines.push(m);
  return { lines, log: { debug: keep, info: keep, warn: keep, error: keep } };
}

describe("the wake variable", () => {
  it("is created, left alone while unchanged, and updated when the cadence changes", async () => {
    const repo = { owner: "acme", name: "wake" };
    suite.sandbox.store.createRepo(repo);
    const { log } = recordingLog();
    const keep = (value: string) => keepWakeVariable({ octokit: suite.octokit(), repo, value, log });
    expect(await keep("soon")).toBe("written");
    expect(suite.sandbox.store.getVariable("acme/wake", "AUTOPILOT_WAKE")?.value).toBe("soon");
    expect(await keep("soon")).toBe("unchanged");
    expect(await keep("idle")).toBe("written");
    expect(suite.sandbox.store.variableValues("acme/wake")).toEqual({ AUTOPILOT_WAKE: "idle" });
  });

  it("says what to grant when GitHub refuses, and does not throw", async () => {
    const refusing: OctokitSurface = {
      request: () =>
        Promise.reject(Object.assign(new Error("Resource not accessible by integration"), { status: 403 })),
      graphql: () => Promise.reject(new Error("unused")),
      hook: { before() {} },
    };
    const { lines, log } = recordingLog();
    const outcome = await keepWakeVariable({
      octokit: refusing,
      repo: { owner: "acme", name: "wake" },
      value: "idle",
      log,
    });
    expect(outcome).toBe("refused");
    expect(lines.join("\n")).toMatch(/AUTOPILOT_WAKE could not be kept .*Variables: write/);
  });
});
